#!/usr/bin/env bash
# Lays out what toastkit installs, in a prefix layout, into DIR (made afresh): bin/toastkit (stripped),
# share/man/man1/toastkit.1.gz, the bash, zsh and fish completions, the agent's D-Bus activation file and systemd user
# unit and the login's autostart entry for reminders (with @BINDIR@ left for the installer), share/doc/toastkit/copyright, and install.sh (scripts/release/install.sh).
# scripts/package.sh makes the release archive and the Debian package from it; scripts/install.sh installs from it.
#
#   scripts/release/layout.sh BINARY DIR
#
# The binary's `--version` must say the VERSION file's version: VERSION is the one place it is set.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:?usage: scripts/release/layout.sh BINARY DIR}
dir=${2:?usage: scripts/release/layout.sh BINARY DIR}
version=$(cat VERSION)
said=$("$binary" --version)
if [ "$said" != "toastkit $version" ]; then
    echo "layout.sh: $binary --version says '$said', VERSION says $version: change" \
        "Sources/ToastKitAgent/Version.swift and rebuild (DocumentationTests.theVersionIsTheVersionFile)" >&2
    exit 1
fi

rm -rf "$dir"
install -d "$dir/bin" "$dir/share/man/man1" "$dir/share/bash-completion/completions" \
    "$dir/share/zsh/vendor-completions" "$dir/share/fish/vendor_completions.d" "$dir/share/dbus-1/services" \
    "$dir/share/systemd/user" "$dir/share/doc/toastkit" "$dir/etc/xdg/autostart"
# Stripped: 36.7 MB with its symbols and debug information, about half without (docs/benchmarks.md, "Size").
strip --strip-all --remove-section=.comment -o "$dir/bin/toastkit" "$binary"
chmod 0755 "$dir/bin/toastkit"
gzip -9n <docs/toastkit.1 >"$dir/share/man/man1/toastkit.1.gz"
install -m 0644 scripts/completions/toastkit.bash "$dir/share/bash-completion/completions/toastkit"
install -m 0644 scripts/completions/_toastkit "$dir/share/zsh/vendor-completions/_toastkit"
install -m 0644 scripts/completions/toastkit.fish "$dir/share/fish/vendor_completions.d/toastkit.fish"
install -m 0644 scripts/dbus/org.toastkit.Agent1.service.in "$dir/share/dbus-1/services/org.toastkit.Agent1.service"
install -m 0644 scripts/dbus/toastkit-agent.service.in "$dir/share/systemd/user/toastkit-agent.service"
install -m 0644 scripts/xdg/toastkit-reminders.desktop.in "$dir/etc/xdg/autostart/toastkit-reminders.desktop"
install -m 0644 scripts/release/copyright "$dir/share/doc/toastkit/copyright"
install -m 0755 scripts/release/install.sh "$dir/install.sh"
