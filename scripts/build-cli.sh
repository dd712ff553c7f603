#!/usr/bin/env bash
# Builds `toastkit` as one fully static executable (release) and prints its path on stdout.
#
#   scripts/build-cli.sh [--scratch-path DIR]        (default scratch path: .build/static)
#
# Static, not just with the Swift standard library linked in: with no dynamic loader and no shared libraries
# (libdbus, libsystemd, libgcrypt, libstdc++ …) to map and relocate, `toastkit send` starts about as fast as a C
# program (docs/benchmarks.md, P1). Debian's libdbus-1.a calls two libsystemd functions only for socket-activated
# D-Bus *servers*; scripts/static/no-systemd-sockets.c answers them for a client (Debian has no static libsystemd).
# glibc warns that getpwnam & co. need the same glibc at run time when linked statically; toastkit never calls them
# (its bus paths use unix sockets and EXTERNAL authentication; `--user` reads /etc/passwd, then asks `getent`): in the
# static binary they crashed (SIGSEGV) for a user /etc/passwd does not have.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build/static
if [[ "${1:-}" == "--scratch-path" ]]; then scratch="$2"; fi
mkdir -p "$scratch"

stub="$scratch/no-systemd-sockets.o"
"${CC:-clang}" -O2 -Wall -Wextra -Werror -c scripts/static/no-systemd-sockets.c -o "$stub"
flags=(-c release --product toastkit --scratch-path "$scratch" -Xswiftc -static-executable -Xlinker "$stub")
# glibc's and FoundationEssentials' link-time notes about static linking are expected (see above).
set +e
swift build "${flags[@]}" 2>&1 \
    | grep -v -e "in statically linked applications requires at runtime" -e "the use of \`mktemp' is dangerous" >&2
status=${PIPESTATUS[0]}
set -e
[[ $status -eq 0 ]] || { echo "build-cli.sh: swift build failed (exit $status)" >&2; exit "$status"; }
echo "$(swift build "${flags[@]}" --show-bin-path)/toastkit"
