#!/usr/bin/env bash
# Builds and installs a REAL Flatpak app that runs the static `toastkit` binary, offline, under DIR only:
#
#   scripts/make-mini-flatpak.sh DIR TOASTKIT_BINARY
#
# The runtime "org.toastkit.MiniPlatform" holds only what `flatpak run` itself needs from a runtime (ldconfig, a
# shell, /etc/passwd and friends): toastkit is fully static (scripts/build-cli.sh), so it needs no library. The app
# "org.toastkit.PortalTest" runs `toastkit` with flatpak's default permissions: no session-bus socket, so the only
# way out is flatpak's filtered bus proxy, which lets it talk to org.freedesktop.portal.* and nothing else — the
# situation of a real Flatpak app that sends notifications.
#
# Everything goes under DIR (a user installation: FLATPAK_USER_DIR, HOME and the XDG folders point there, see
# DIR/env); nothing touches the machine's own Flatpak installations, and no network is used. It is cached: the
# runtime is built once, the app again only when the binary changes (its SHA-256 is kept in DIR/app.sha256).
# Afterwards, with DBUS_SESSION_BUS_ADDRESS set to a bus where the portal runs:
#   . DIR/env; flatpak --user run org.toastkit.PortalTest send --wait -A ok=OK "Hola"
# Needs: apt-get install --no-install-recommends flatpak (Debian 12: 1.14.10), which brings bubblewrap and
# xdg-dbus-proxy.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 DIR TOASTKIT_BINARY" >&2; exit 64; }
command -v flatpak >/dev/null || { echo "$0: flatpak is not installed (apt-get install flatpak)" >&2; exit 69; }
binary=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
[ -x "$binary" ] || { echo "$0: $2 is not an executable" >&2; exit 66; }
mkdir -p "$1"
dir=$(cd "$1" && pwd)
runtime=org.toastkit.MiniPlatform
app=org.toastkit.PortalTest

cat >"$dir/env" <<EOF
export HOME=$dir/home XDG_DATA_HOME=$dir/data XDG_CONFIG_HOME=$dir/config XDG_CACHE_HOME=$dir/cache
export FLATPAK_USER_DIR=$dir/data/flatpak XDG_RUNTIME_DIR=$dir/runtime
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$dir/no-system-bus
EOF
# shellcheck source=/dev/null
. "$dir/env"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME"
chmod 700 "$XDG_RUNTIME_DIR"
quiet() { "$@" >"$dir/last-step.log" 2>&1 || { cat "$dir/last-step.log" >&2; exit 70; }; }

if ! flatpak --user info "$runtime//1" >/dev/null 2>&1; then
    rm -rf "$dir/rt" "$dir/repo"
    files=$dir/rt/files
    mkdir -p "$files/bin" "$files/etc" "$dir/rt/usr"
    # flatpak run calls ldconfig in the runtime to build the sandbox's loader cache; Debian's is a static binary.
    cp /sbin/ldconfig "$files/bin/ldconfig"
    cp /bin/dash "$files/bin/sh" 2>/dev/null || true
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$files/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$files/etc/group"
    printf '[Runtime]\nname=%s\nruntime=%s/x86_64/1\nsdk=%s/x86_64/1\n' "$runtime" "$runtime" "$runtime" \
        >"$dir/rt/metadata"
    quiet flatpak build-export --runtime "$dir/repo" "$dir/rt" 1
    quiet flatpak --user remote-add --if-not-exists --no-gpg-verify toastkit-local "$dir/repo"
    quiet flatpak --user install -y --noninteractive toastkit-local "runtime/$runtime/x86_64/1"
    rm -f "$dir/app.sha256"
fi

sum=$(sha256sum "$binary" | cut -d' ' -f1)
if [ "$(cat "$dir/app.sha256" 2>/dev/null)" != "$sum" ] || ! flatpak --user info "$app" >/dev/null 2>&1; then
    rm -rf "$dir/app"
    quiet flatpak build-init "$dir/app" "$app" "$runtime" "$runtime" 1
    mkdir -p "$dir/app/files/bin"
    cp "$binary" "$dir/app/files/bin/toastkit"
    # No --socket=session-bus: the app reaches the session bus only through flatpak's proxy, i.e. the portals.
    quiet flatpak build-finish "$dir/app" --command=toastkit
    quiet flatpak build-export "$dir/repo" "$dir/app"
    quiet flatpak --user install -y --noninteractive --reinstall toastkit-local "app/$app/x86_64/master"
    echo "$sum" >"$dir/app.sha256"
fi
