#!/usr/bin/env bash
# The test command: installs what the tests need, builds with warnings as errors, lints, runs every test, then
# runs the command-line tests again on the fully static release `toastkit` (scripts/build-cli.sh).
# Every service a test uses (private dbus-daemons, Xvfb, sway, the nine notification servers, the modern ones from the
# Debian 13 chroot, the notification portal) is started by the tests themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh test

# The notification servers of 2025-2026 (issue 41) run from a Debian 13 chroot that the conformance suite needs: made
# once from Debian's mirror (about 10 minutes, 2 GB), then reused from /var/cache/toastkit-test/chroots.
echo "== scripts/modern-chroot.sh (the 2025-2026 servers' Debian 13 chroot, cached)"
modern_sudo=()
[ "$(id -u)" -eq 0 ] || modern_sudo=(sudo)
"${modern_sudo[@]}" scripts/modern-chroot.sh >/dev/null

# Every private bus is a dbus-daemon, and each holds an inotify instance (it watches its service folders, even with
# none); the suites start over a hundred at once, and the kernel's default of 128 instances per user then refuses the
# tests' own (LaterStoreTests watching a folder: "inotify_init1: Too many open files", seen in a full run) and the
# real servers' file monitors. Raised, never lowered; as root or through sudo, as the package installs are.
instances=/proc/sys/fs/inotify/max_user_instances
if [ "$(cat "$instances")" -lt 1024 ]; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    if ! echo 1024 | "${sudo[@]}" tee "$instances" >/dev/null 2>&1; then
        echo "test.sh: cannot raise $instances to 1024 (the suites start over a hundred dbus-daemons, each with an" \
            "inotify instance): run as root, or set it with sysctl fs.inotify.max_user_instances=1024" >&2
        exit 1
    fi
    echo "== fs.inotify.max_user_instances raised to 1024 (over a hundred private dbus-daemons run at once)"
fi

echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

echo "== swift format lint"
swift format lint --strict --recursive Sources Tests

echo "== shellcheck"
# Every shell script in the repository, committed or new: *.sh, *.bash (the bash completion) and any other file whose
# first line runs sh or bash (.ci/run). The zsh and fish completions are neither: shellcheck cannot read those.
shebang='^#!.*[/[:space:]](ba)?sh([[:space:]]|$)' # #!/bin/sh, #!/bin/bash, #!/usr/bin/env bash
shell_scripts=()
while IFS= read -r -d '' file; do
    [ -f "$file" ] || continue # tracked but deleted in the working tree
    first_line=""
    IFS= read -r first_line <"$file" || true
    if [[ "$file" == *.sh || "$file" == *.bash || "$first_line" =~ $shebang ]]; then
        shell_scripts+=("$file")
    fi
done < <(git ls-files -z --cached --others --exclude-standard)
shellcheck "${shell_scripts[@]}"

echo "== scripts/check-samples.sh"
scripts/check-samples.sh

echo "== scripts/docs.sh --check (the API reference builds without a warning; every public symbol is documented)"
scripts/docs.sh --check

# What users install and the demo runs is the fully static release build. It is built before the tests (nothing
# else runs meanwhile): the real Flatpak app runs it in both passes (the mini runtime has no libraries), and the
# command-line suite runs again on it.
echo "== scripts/build-cli.sh"
binary="$(scripts/build-cli.sh)"

# The README's first command must not break unseen: its tour runs headless on the same binary, and a step that does
# not do what it says fails the run.
echo "== the demo's tour, headless (scripts/demo.sh)"
TOASTKIT="$binary" scripts/headless-desktop.sh -- scripts/demo.sh --tour headless

# How many tests run at once. Unbounded, Swift Testing starts every suite together: on a 2-core machine some hundred
# private buses, sixty Xvfbs and their notification servers then start in the same seconds, and a wait for a fresh bus
# to answer ran out (FakeServerTests.withNoServerTheToastWaitsAndAppearsWhenOneStarts: 25 ms alone, 27-36 s and twice
# over its 15 s wait in full runs). Twelve per core keeps such waits short and the run shorter (on 2 cores: that test
# 2.6 s, the run 300 s against 355-430 s). A width set outside is kept.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-$(($(nproc) * 12))}"

# What people install without a Swift toolchain: the Debian packages and the release archive, made from that binary
# and proven in clean Debian 12 and 13 chroots (made once, then cached under /var/cache/toastkit-test).
echo "== scripts/package-test.sh (the .deb packages and the release archive, in clean Debian 12 and 13 systems)"
scripts/package-test.sh --binary "$binary"

echo "== swift test"
TOASTKIT_STATIC_BINARY="$binary" swift test --skip-build

echo "== the command-line tests on the static binary"
# (DesktopShellEndToEndTests and PortalEndToEndTests sit under TestSupport's OneAtATime, so their test ids do not
# carry the module's name.)
TOASTKIT_BINARY="$binary" TOASTKIT_STATIC_BINARY="$binary" swift test --skip-build \
    --filter 'ToastKitCommandLineTests|DesktopShellEndToEndTests|PortalEndToEndTests'
