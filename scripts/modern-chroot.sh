#!/usr/bin/env bash
# The Debian 13 "trixie" chroot with the notification servers of 2025-2026 (issue 41), which the conformance suite runs
# headless on the tests' private buses and displays: dunst 1.12, GNOME Shell 48, Plasma 6.3, Cinnamon 6.4 (Linux
# Mint's desktop), Budgie 10.9, mako 1.10, swaync 0.11, xfce4-notifyd 0.9.7 and lxqt-notificationd 2.1.
#
#   scripts/modern-chroot.sh            make it when it is not in the cache (once: about 10 min, 2 GB), print its path
#   scripts/modern-chroot.sh --path     print where it is (made or not); exit 1 when it is not made yet
#
# From Debian's mirror only (debootstrap --variant=minbase, then apt-get, no recommends), cached under
# $TOASTKIT_CHROOT_CACHE (default /var/cache/toastkit-test/chroots) as modern-trixie-HASH, the hash of the package
# list below (scripts/lib/chroot-cache.sh, shared with scripts/package-test.sh): a changed list makes a new one.
# The tests never write into it: each server process runs in a mount namespace of its own, on an overlay of it
# (Tests/TestSupport/ModernChroot.swift). scripts/test.sh runs this before the tests. Needs root and debootstrap.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/chroot-cache.sh
. scripts/lib/chroot-cache.sh

recipe_version=1 # raise when the way the chroot is made changes
packages=(
    dbus-daemon dbus-bin libnotify-bin libglib2.0-bin procps fonts-dejavu-core adwaita-icon-theme
    dunst                                                          # dunst 1.12 (dunstctl)
    gnome-shell gjs fonts-cantarell                                # GNOME Shell 48, its own headless compositor
    plasma-workspace plasma-desktop kactivitymanagerd breeze-icon-theme # Plasma 6.3 (plasmashell on Xvfb)
    cinnamon                                                       # Cinnamon 6.4: the shell owns the name
    budgie-desktop                                                 # Budgie 10.9: budgie-wm, budgie-daemon
    mako-notifier sway-notification-center sway                    # mako 1.10, swaync 0.11 on a headless sway
    xfce4-notifyd lxqt-notificationd                               # xfce4-notifyd 0.9.7, lxqt-notificationd 2.1
)

path_only=false
case "${1:-}" in
    --path) path_only=true ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) echo "modern-chroot.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
esac

if $path_only; then
    root=$(chroot_cache_path modern-trixie trixie "$recipe_version" "${packages[*]}")
    echo "$root"
    [ -e "$root/.complete" ]
    exit
fi

[ "$(id -u)" -eq 0 ] || { echo "modern-chroot.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
for tool in debootstrap:debootstrap flock:util-linux unshare:util-linux; do
    command -v "${tool%%:*}" >/dev/null || { echo "modern-chroot.sh: ${tool%%:*} is missing: apt-get install ${tool#*:}" >&2; exit 1; }
done
[ -e /usr/share/debootstrap/scripts/trixie ] ||
    { echo "modern-chroot.sh: this debootstrap has no trixie script: apt-get install debootstrap (>= 1.0.128)" >&2; exit 1; }
chroot_cache_make modern-trixie trixie "$recipe_version" "${packages[*]}"
