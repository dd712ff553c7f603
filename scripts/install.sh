#!/usr/bin/env bash
# Installs toastkit: builds it in release mode, then copies the binary, the man page, the bash, zsh and fish
# completions, and the agent's D-Bus activation file and systemd user unit under PREFIX (default /usr/local).
# Usage: scripts/install.sh [--links] [PREFIX]        e.g. scripts/install.sh ~/.local
#   --links  also installs links named notify-send and dunstify to toastkit in PREFIX/bin: scripts that call those
#            tools by name then get toastkit, with those tools' command lines, output and exit codes (README,
#            "Every script on the system"). Not done by default.
set -euo pipefail
cd "$(dirname "$0")/.."
links=false
if [ "${1:-}" = "--links" ]; then
    links=true
    shift
fi
prefix="${1:-/usr/local}"

# Building needs libdbus-1's headers, static library and pkg-config file; the binary needs nothing at run time.
if ! pkg-config --exists dbus-1 2>/dev/null; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends pkg-config libdbus-1-dev
fi
binary="$(scripts/build-cli.sh)" # one fully static executable: it needs no library at run time

install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
    "$prefix/share/zsh/vendor-completions" "$prefix/share/fish/vendor_completions.d" \
    "$prefix/share/dbus-1/services" "$prefix/share/systemd/user"
install -m 0755 "$binary" "$prefix/bin/toastkit"
install -m 0644 docs/toastkit.1 "$prefix/share/man/man1/toastkit.1"
install -m 0644 scripts/completions/toastkit.bash "$prefix/share/bash-completion/completions/toastkit"
install -m 0644 scripts/completions/_toastkit "$prefix/share/zsh/vendor-completions/_toastkit"
install -m 0644 scripts/completions/toastkit.fish "$prefix/share/fish/vendor_completions.d/toastkit.fish"
# The agent: the session bus starts it on demand (through systemd where the bus activates services that way).
bindir="$(cd "$prefix/bin" && pwd)"
for unit in dbus-1/services/org.toastkit.Agent1.service systemd/user/toastkit-agent.service; do
    sed "s|@BINDIR@|$bindir|g" "scripts/dbus/$(basename "$unit").in" >"$prefix/share/$unit.tmp"
    chmod 0644 "$prefix/share/$unit.tmp"
    mv "$prefix/share/$unit.tmp" "$prefix/share/$unit"
done

if $links; then
    for tool in notify-send dunstify; do
        ln -sfn toastkit "$prefix/bin/$tool"
    done
fi

echo "installed toastkit $("$prefix/bin/toastkit" --version | cut -d' ' -f2) under $prefix:"
echo "  $prefix/bin/toastkit"
echo "  $prefix/share/man/man1/toastkit.1"
echo "  $prefix/share/bash-completion/completions/toastkit"
echo "  $prefix/share/zsh/vendor-completions/_toastkit"
echo "  $prefix/share/fish/vendor_completions.d/toastkit.fish"
echo "  $prefix/share/dbus-1/services/org.toastkit.Agent1.service"
echo "  $prefix/share/systemd/user/toastkit-agent.service"
if $links; then
    echo "  $prefix/bin/notify-send -> toastkit"
    echo "  $prefix/bin/dunstify -> toastkit"
fi
if $links && [ "$(command -v notify-send || true)" != "$prefix/bin/notify-send" ]; then
    echo "note: notify-send on PATH is $(command -v notify-send || echo 'none'), not the link: put $prefix/bin first"
fi
case ":$PATH:" in
*":$prefix/bin:"*) ;;
*) echo "note: $prefix/bin is not on PATH" ;;
esac
