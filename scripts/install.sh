#!/usr/bin/env bash
# Installs toastkit from source: builds the fully static release binary, then installs it stripped, with the man page,
# the bash, zsh and fish completions, and the agent's D-Bus activation file and systemd user unit, under PREFIX
# (default /usr/local). Without a Swift toolchain, install the Debian package or the release archive instead (README,
# "Install").
#
#   scripts/install.sh [--links] [PREFIX]      e.g. scripts/install.sh ~/.local
#   scripts/install.sh --uninstall [PREFIX]    removes exactly what the install put there (no build)
#
#   --links  also installs links named notify-send and dunstify to toastkit in PREFIX/bin: scripts that call those
#            tools by name then get toastkit, with those tools' command lines, output and exit codes (README,
#            "Every script on the system"). Not done by default.
#
# The installing is scripts/release/install.sh's, the same the release archive carries; what it installed is listed in
# PREFIX/share/toastkit/installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every argument is read before anything is built: --help and a mistake answer at once.
links=()
uninstall=false
prefix=""
for argument in "$@"; do
    case "$argument" in
    -h | --help)
        sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    --links) links=(--links) ;;
    --uninstall) uninstall=true ;;
    -*)
        echo "install.sh: unknown option '$argument' (see scripts/install.sh --help)" >&2
        exit 64
        ;;
    *)
        if [ -n "$prefix" ]; then
            echo "install.sh: one PREFIX only (see scripts/install.sh --help)" >&2
            exit 64
        fi
        prefix=$argument
        ;;
    esac
done
prefix=${prefix:-/usr/local}
if $uninstall; then
    if [ ${#links[@]} -gt 0 ]; then
        echo "install.sh: --links and --uninstall do not go together (--uninstall removes the links too)" >&2
        exit 64
    fi
    exec scripts/release/install.sh --uninstall "$prefix"
fi

# Building needs libdbus-1's headers, static library and pkg-config file; the binary needs nothing at run time.
if ! pkg-config --exists dbus-1 2>/dev/null; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends pkg-config libdbus-1-dev
fi
binary="$(scripts/build-cli.sh)" # one fully static executable: it needs no library at run time
scripts/release/layout.sh "$binary" .build/install-layout
TOASTKIT_INSTALLER=scripts/install.sh exec .build/install-layout/install.sh "${links[@]}" "$prefix"
