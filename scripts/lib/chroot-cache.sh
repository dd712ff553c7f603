# shellcheck shell=bash
# The cached Debian chroots the tests use (sourced by scripts/package-test.sh and scripts/modern-chroot.sh): made once
# with `debootstrap --variant=minbase` and apt-get from Debian's mirror, kept under $TOASTKIT_CHROOT_CACHE (default
# /var/cache/toastkit-test/chroots) as NAME-HASH, where HASH is a hash of the recipe (its version, the suite, the
# mirror and the package list): a changed list makes a new chroot, an unchanged one is reused. A tree appears under
# its name only when complete (made under .making-NAME-HASH, then renamed); one maker at a time (a lock). Nothing
# else is written there: each user mounts its own overlay on the pristine tree.
#
#   chroot_cache_path NAME SUITE RECIPE_VERSION "PACKAGES"   prints the path (made or not)
#   chroot_cache_make NAME SUITE RECIPE_VERSION "PACKAGES"   makes it when missing, then prints the path
#
# Needs root, debootstrap (with a script for SUITE), flock and unshare (util-linux).

chroot_cache_dir=${TOASTKIT_CHROOT_CACHE:-/var/cache/toastkit-test/chroots}
chroot_cache_mirror=${TOASTKIT_DEBIAN_MIRROR:-http://deb.debian.org/debian}

chroot_cache_path() {
    local name=$1 suite=$2 version=$3 packages=$4 hash
    hash=$(printf '%s\n' "$version" "$suite" "$chroot_cache_mirror" "$packages" | sha256sum | cut -c1-12)
    echo "$chroot_cache_dir/$name-$hash"
}

chroot_cache_make() {
    local name=$1 suite=$2 version=$3 packages=$4 root tmp start base log
    root=$(chroot_cache_path "$@")
    base=$(basename "$root")
    log="$chroot_cache_dir/$base"
    mkdir -p "$chroot_cache_dir"
    # Two test runs may start together: the second waits for the first's tree.
    exec 9>"$chroot_cache_dir/.lock"
    flock 9
    if [ ! -e "$root/.complete" ]; then
        start=$SECONDS
        tmp="$chroot_cache_dir/.making-$base"
        rm -rf "$tmp"
        echo "chroot-cache: making the $suite chroot $base (once; cached in $root)" >&2
        if ! debootstrap --variant=minbase "$suite" "$tmp" "$chroot_cache_mirror" >"$log.debootstrap.log" 2>&1; then
            exec 9>&-
            echo "chroot-cache: debootstrap $suite failed: see $log.debootstrap.log" >&2
            return 1
        fi
        # Each step checked: a caller's `|| fail` turns `set -e` off in here.
        if ! { printf 'deb %s %s main\n' "$chroot_cache_mirror" "$suite" >"$tmp/etc/apt/sources.list" &&
            printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' \
                >"$tmp/etc/apt/apt.conf.d/99toastkit-test" &&
            printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d" &&
            chmod 0755 "$tmp/usr/sbin/policy-rc.d"; }; then
            exec 9>&-
            echo "chroot-cache: cannot configure apt in $tmp" >&2
            return 1
        fi
        # The package scripts get /proc and /dev, in a mount namespace of their own: nothing stays mounted.
        # shellcheck disable=SC2016 # expanded by the inner shell
        if ! unshare --mount --propagation private -- sh -c '
            mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" &&
            chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 \
                sh -c "apt-get -q update && apt-get -q -y install $2 && apt-get clean"' sh "$tmp" "$packages" \
            >"$log.apt.log" 2>&1; then
            exec 9>&-
            echo "chroot-cache: apt-get install in the $suite chroot failed: see $log.apt.log" >&2
            return 1
        fi
        if ! { touch "$tmp/.complete" && rm -rf "$root" && mv "$tmp" "$root"; }; then
            exec 9>&-
            echo "chroot-cache: cannot put the finished chroot at $root (disk full?)" >&2
            return 1
        fi
        echo "chroot-cache: made $root in $((SECONDS - start)) s, $(du -sh "$root" | cut -f1)" >&2
    fi
    exec 9>&-
    echo "$root"
}
