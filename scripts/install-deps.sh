#!/usr/bin/env bash
# Installs the Debian packages ToastKit's build, tests and demo need, when any is missing.
# Usage: scripts/install-deps.sh [test|demo|bench]   (default: test)
set -euo pipefail

packages=(
    pkg-config libdbus-1-dev   # the C library and its .pc file (CDBus)
    dbus-daemon dbus-bin       # private buses in tests; dbus-send/dbus-monitor
    dunst xvfb xauth x11-utils # the real notification server under a virtual X display
    libnotify-bin              # notify-send: a peer to compare with
    imagemagick                # `import` screenshots of the virtual display
    fonts-dejavu-core adwaita-icon-theme
    shellcheck                 # scripts/test.sh lints every shell script
    time                       # GNU time: a child's own peak memory (HostileSignalTests)
    python3                    # scripts/docs.sh --check reads the symbol graphs
    # the other real servers of the conformance matrix, and clicks on their popups
    notification-daemon xfce4-notifyd mate-notification-daemon xdotool
    gnome-shell gjs                                          # GNOME Shell 43, headless
    plasma-workspace plasma-desktop kactivitymanagerd        # KDE Plasma 5.27 under Xvfb
    sway mako-notifier sway-notification-center grim         # mako and swaync on a headless sway; grim screenshots
    lxqt-notificationd lxqt-qtplugin                         # with the LXQt platform theme, as in a session
    # sound where the server plays none: libcanberra (and its ALSA backend), pw-play, the freedesktop sound theme
    libcanberra0 pipewire-bin sound-theme-freedesktop
    zenity                     # the reply prompt where the server draws no field (a real dialog in the tests)
    # the notification portal in front of those servers, and sandboxed callers: a fake one (bwrap) and a real Flatpak app
    xdg-desktop-portal xdg-desktop-portal-gtk xdg-desktop-portal-dev flatpak bubblewrap xdg-dbus-proxy
    # the packages (scripts/package.sh) and their proof in clean Debian 12 and 13 chroots (scripts/package-test.sh)
    lintian debootstrap binutils
)
case "${1:-test}" in
    bench) packages+=(hyperfine libglib2.0-bin python3-dbus python3-venv gcc valgrind) ;;
esac

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2 3; do
    # Another apt may hold the lock for a moment; retry rather than fail.
    if "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
        exit 0
    fi
    echo "install-deps: apt-get failed (attempt $attempt), retrying" >&2
    sleep 5
done
echo "install-deps: could not install ${missing[*]}" >&2
exit 1
