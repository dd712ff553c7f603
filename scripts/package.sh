#!/usr/bin/env bash
# Makes what people install without a Swift toolchain, into .build/package/ (nothing in the tree):
#
#   toastkit_VERSION_amd64.deb              the stripped static binary in /usr/bin, the man page, the bash, zsh and
#                                           fish completions, the agent's D-Bus activation file and systemd user unit,
#                                           copyright and changelog; Depends on nothing (static)
#   toastkit-notify-send_VERSION_all.deb    opt-in: /usr/bin/notify-send and /usr/bin/dunstify become links to
#                                           toastkit (the real tools diverted to *.real); removing it gives them back
#   toastkit-VERSION-x86_64-linux.tar.gz    the same files in a prefix layout, with an install.sh (coreutils and sed)
#
#   scripts/package.sh [--binary PATH]      (default: scripts/build-cli.sh builds the static binary)
#
# VERSION is the version (it must be what the binary's --version says). Both packages must pass lintian with no
# error and no warning; the few tags that cannot be fixed sensibly are overridden in scripts/release/lintian/, each
# with its reason. Needs dpkg-deb, lintian, strip (binutils), gzip.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=""
case "${1:-}" in
--binary) binary=${2:?--binary needs a path} ;;
-h | --help)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
"") ;;
*)
    echo "package.sh: unknown option $1 (see --help)" >&2
    exit 64
    ;;
esac
for tool in dpkg-deb:dpkg lintian:lintian strip:binutils gzip:gzip; do
    if ! command -v "${tool%%:*}" >/dev/null; then
        echo "package.sh: ${tool%%:*} is missing: apt-get install ${tool#*:}" >&2
        exit 1
    fi
done
[ -n "$binary" ] || binary="$(scripts/build-cli.sh)"

version=$(cat VERSION)
maintainer=$(sed -n 's/^Upstream-Contact: //p' scripts/release/copyright)
# Every file's time is the last commit's, so the same commit makes the same archives.
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH
out=.build/package
rm -rf "$out"
mkdir -p "$out"
umask 022

layout="$out/toastkit-$version-x86_64-linux"
scripts/release/layout.sh "$binary" "$layout"

# The changelog: one entry for this version, dated by the commit. A native package (the project packages itself; the
# version has no Debian revision), so it is changelog.gz, not changelog.Debian.gz (lintian:
# wrong-name-for-changelog-of-native-package).
changelog() { # PACKAGE
    printf '%s (%s) unstable; urgency=medium\n\n  * Release %s.\n\n -- %s  %s\n' "$1" "$version" "$version" \
        "$maintainer" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")" | gzip -9n
}

# finish ROOT: docs, md5sums, times; then dpkg-deb.
finish() {
    local root=$1 package=$2 deb
    install -d "$root/usr/share/doc/$package"
    install -m 0644 scripts/release/copyright "$root/usr/share/doc/$package/copyright"
    changelog "$package" >"$root/usr/share/doc/$package/changelog.gz"
    chmod 0644 "$root/usr/share/doc/$package/changelog.gz"
    if [ -f "scripts/release/lintian/$package" ]; then
        install -D -m 0644 "scripts/release/lintian/$package" "$root/usr/share/lintian/overrides/$package"
    fi
    (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0r md5sum) \
        >"$root/DEBIAN/md5sums"
    chmod 0644 "$root/DEBIAN/md5sums"
    find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
    deb="$out/${package}_${version}_$(sed -n 's/^Architecture: //p' "$root/DEBIAN/control").deb"
    dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
    echo "$deb"
}

installed_size() { du -s -k --apparent-size --exclude=DEBIAN "$1" | cut -f1; }

# toastkit_VERSION_amd64.deb
root="$out/deb/toastkit"
install -d "$root/DEBIAN" "$root/usr/lib/systemd/user"
cp -a "$layout/bin" "$layout/share" "$root/usr/"
rm -rf "$root/usr/share/systemd" "$root/usr/share/doc"
sed 's|@BINDIR@|/usr/bin|g' "$layout/share/dbus-1/services/org.toastkit.Agent1.service" \
    >"$root/usr/share/dbus-1/services/org.toastkit.Agent1.service"
sed 's|@BINDIR@|/usr/bin|g' "$layout/share/systemd/user/toastkit-agent.service" \
    >"$root/usr/lib/systemd/user/toastkit-agent.service"
chmod 0644 "$root/usr/lib/systemd/user/toastkit-agent.service"
install -d "$root/etc/xdg/autostart"
sed 's|@BINDIR@|/usr/bin|g' "$layout/etc/xdg/autostart/toastkit-reminders.desktop" \
    >"$root/etc/xdg/autostart/toastkit-reminders.desktop"
chmod 0644 "$root/etc/xdg/autostart/toastkit-reminders.desktop"
echo /etc/xdg/autostart/toastkit-reminders.desktop >"$root/DEBIAN/conffiles"
cat >"$root/DEBIAN/control" <<EOF
Package: toastkit
Version: $version
Architecture: amd64
Maintainer: $maintainer
Installed-Size: $(installed_size "$root")
Recommends: pipewire-bin | pulseaudio-utils, zenity | yad | kdialog
Suggests: toastkit-notify-send
Section: utils
Priority: optional
Description: desktop toasts from scripts and cron: a better notify-send
 toastkit shows desktop notifications through the desktop's notification
 server over D-Bus (dunst, GNOME Shell, Plasma, xfce4-notifyd, mako, ...).
 It takes notify-send's and dunstify's command lines, and adds string ids
 that replace a toast across runs, status presets, durations that hold on
 every server, commands run on a click after the script has exited,
 questions with one exit code per answer, progress bars, reminders, and
 JSON output. A small per-user agent, started on demand by the session bus,
 keeps the toasts of scripts that have already exited.
 .
 The program is one static executable: it needs no library at run time.
 The recommended programs play sounds (pw-play, paplay) and ask for a
 reply where the server draws no text field (zenity, yad, kdialog).
EOF
main_deb=$(finish "$root" toastkit)

# toastkit-notify-send_VERSION_all.deb: the links are the package's files; the real tools are diverted before they
# are unpacked (preinst) and given back after the links are gone (postrm).
root="$out/deb/toastkit-notify-send"
install -d "$root/DEBIAN" "$root/usr/bin"
ln -s toastkit "$root/usr/bin/notify-send"
ln -s toastkit "$root/usr/bin/dunstify"
cat >"$root/DEBIAN/control" <<EOF
Package: toastkit-notify-send
Version: $version
Architecture: all
Maintainer: $maintainer
Installed-Size: $(installed_size "$root")
Depends: toastkit (= $version)
Section: utils
Priority: optional
Multi-Arch: foreign
Description: toastkit as notify-send and dunstify for every script
 Makes /usr/bin/notify-send and /usr/bin/dunstify links to toastkit, which
 called by those names takes exactly that tool's command line and gives its
 output and exit codes, while its agent makes durations hold and replaces in
 place on every notification server. The real tools (libnotify-bin's
 notify-send, dunst's dunstify) are diverted to notify-send.real and
 dunstify.real; removing this package gives them back.
EOF
cat >"$root/DEBIAN/preinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = install ] || [ "$1" = upgrade ]; then
    for tool in notify-send dunstify; do
        dpkg-divert --package toastkit-notify-send --rename --divert "/usr/bin/$tool.real" --add "/usr/bin/$tool"
    done
fi
EOF
cat >"$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = abort-install ] || [ "$1" = disappear ]; then
    for tool in notify-send dunstify; do
        dpkg-divert --package toastkit-notify-send --rename --remove "/usr/bin/$tool"
    done
fi
EOF
chmod 0755 "$root/DEBIAN/preinst" "$root/DEBIAN/postrm"
links_deb=$(finish "$root" toastkit-notify-send)

# toastkit-VERSION-x86_64-linux.tar.gz
archive="$out/toastkit-$version-x86_64-linux.tar.gz"
find "$layout" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
tar -C "$out" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -cf - "$(basename "$layout")" | gzip -9n >"$archive"

echo "== lintian" >&2
if ! lintian --fail-on error,warning --display-info "$main_deb" "$links_deb" >&2; then
    echo "package.sh: lintian found errors or warnings (above)" >&2
    exit 1
fi
ls -l "$main_deb" "$links_deb" "$archive" >&2
printf '%s\n' "$main_deb" "$links_deb" "$archive"
