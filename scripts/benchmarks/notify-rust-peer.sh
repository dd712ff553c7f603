#!/usr/bin/env bash
# Builds benchmark P2's notify-rust peer (issue 44; scripts/benchmarks/notify-rust-loop) and prints its path.
# notify-rust as Debian 13 "trixie" packages it (librust-notify-rust-dev: 4.11 on zbus 5; Debian 12 has zbus 1.9 and
# no notify-rust), built offline with trixie's cargo from /usr/share/cargo/registry (a directory source,
# notify-rust-loop/.cargo/config.toml) inside a cached trixie chroot, made the way scripts/modern-chroot.sh makes its
# own (scripts/lib/chroot-cache.sh: rust-trixie-HASH under /var/cache/toastkit-test/chroots, made once: about a
# minute, 1.1 GB). The first build takes about 3 min on 2 cores; later ones only rebuild what changed.
#
#   scripts/benchmarks/notify-rust-peer.sh             build (cargo: only what changed), print the binary's path
#   scripts/benchmarks/notify-rust-peer.sh --command   the same, but print the command that runs it here, a word a line
#
# The build goes to .build/notify-rust/ (bind-mounted on the chroot's /mnt, in a mount namespace of its own: nothing
# is written into the cached tree). The binary is linked against trixie's glibc 2.41 and asks for GLIBC_2.39, which
# Debian 12's 2.36 lacks, so it runs here through the chroot's own loader and libraries (--command): the bus socket,
# environment and files stay the host's, as for the other peers, where running it inside the chroot would need the
# bench's bus socket mounted in and a mount namespace around every run. Needs root, debootstrap, flock and unshare.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/chroot-cache.sh
. scripts/lib/chroot-cache.sh

recipe_version=1 # raise when the way the chroot is made changes
# cargo and rustc 1.85, notify-rust 4.11 with its dependencies (zbus 5 and its async-io executor), futures-util for
# the pipelined window (FuturesUnordered).
packages="cargo rustc librust-notify-rust-dev librust-futures-util-dev"

command=false
case "${1:-}" in
    --command) command=true ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) echo "notify-rust-peer.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
esac

[ "$(id -u)" -eq 0 ] || { echo "notify-rust-peer.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
for tool in debootstrap:debootstrap flock:util-linux unshare:util-linux; do
    command -v "${tool%%:*}" >/dev/null ||
        { echo "notify-rust-peer.sh: ${tool%%:*} is missing: apt-get install ${tool#*:}" >&2; exit 1; }
done
[ -e /usr/share/debootstrap/scripts/trixie ] ||
    { echo "notify-rust-peer.sh: this debootstrap has no trixie script: apt-get install debootstrap (>= 1.0.128)" >&2; exit 1; }
root=$(chroot_cache_make rust-trixie trixie "$recipe_version" "$packages") ||
    { echo "notify-rust-peer.sh: no trixie chroot with cargo and librust-notify-rust-dev" >&2; exit 1; }

# The notify-rust version the registry holds, for the peer's "client" field.
version=$(find "$root/usr/share/cargo/registry" -maxdepth 1 -name 'notify-rust-*' -printf '%f\n' | sed 's/^notify-rust-//' | sort -V | tail -n 1)
[ -n "$version" ] || { echo "notify-rust-peer.sh: $root has no notify-rust crate in /usr/share/cargo/registry" >&2; exit 1; }

# The sources are copied (times kept, so cargo rebuilds only what changed) next to the build, into the one folder the
# chroot sees; cargo's home, its target folder and the linker's temporary files are there too.
out="$(pwd)/.build/notify-rust"
mkdir -p "$out/cargo-home" "$out/tmp"
rm -rf "$out/src"
cp -pr scripts/benchmarks/notify-rust-loop "$out/src"
# shellcheck disable=SC2016 # expanded by the inner shell
if ! unshare --mount --propagation private -- sh -c '
    mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && mount --bind "$2" "$1/mnt" &&
    chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/mnt TMPDIR=/mnt/tmp \
        CARGO_HOME=/mnt/cargo-home CARGO_TARGET_DIR=/mnt/target NOTIFY_RUST_VERSION="$3" \
        sh -c "cd /mnt/src && cargo build --release --offline"' \
    sh "$root" "$out" "$version" >"$out/build.log" 2>&1; then
    cat "$out/build.log" >&2
    echo "notify-rust-peer.sh: cargo build of the notify-rust peer failed (log: $out/build.log)" >&2
    exit 1
fi
binary="$out/target/release/notify-rust-loop"
[ -x "$binary" ] || { echo "notify-rust-peer.sh: cargo built no $binary" >&2; exit 1; }
if $command; then
    printf '%s\n' "$root/lib64/ld-linux-x86-64.so.2" --library-path "$root/usr/lib/x86_64-linux-gnu" "$binary"
else
    echo "$binary"
fi
