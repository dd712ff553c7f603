#!/usr/bin/env bash
# The test command: installs what the tests need, builds with warnings as errors, lints, runs every test, then
# runs the command-line tests again on the fully static release `toastkit` (scripts/build-cli.sh).
# Every service a test uses (private dbus-daemons, Xvfb, sway, the nine notification servers, the notification portal)
# is started by the tests themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh test

echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

echo "== swift format lint"
swift format lint --strict --recursive Sources Tests

# What users install and the demo runs is the fully static release build. It is built before the tests (nothing
# else runs meanwhile): the real Flatpak app runs it in both passes (the mini runtime has no libraries), and the
# command-line suite runs again on it.
echo "== scripts/build-cli.sh"
binary="$(scripts/build-cli.sh)"

echo "== swift test"
TOASTKIT_STATIC_BINARY="$binary" swift test --skip-build

echo "== the command-line tests on the static binary"
# (DesktopShellEndToEndTests and PortalEndToEndTests sit under TestSupport's OneAtATime, so their test ids do not
# carry the module's name.)
TOASTKIT_BINARY="$binary" TOASTKIT_STATIC_BINARY="$binary" swift test --skip-build \
    --filter 'ToastKitCommandLineTests|DesktopShellEndToEndTests|PortalEndToEndTests'
