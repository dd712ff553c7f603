#!/usr/bin/env bash
# The test command: installs what the tests need, builds with warnings as errors, lints, runs every test, then
# runs the command-line tests again on the fully static release `toastkit` (scripts/build-cli.sh).
# Every service a test uses (private dbus-daemons, Xvfb, sway, the nine notification servers) is started by the tests
# themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh test

echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

echo "== swift format lint"
swift format lint --strict --recursive Sources Tests

echo "== swift test"
swift test --skip-build

# What users install and the demo runs is the fully static release build: its command-line suite runs again on it.
echo "== scripts/build-cli.sh, then the command-line tests on that binary"
binary="$(scripts/build-cli.sh)"
# (DesktopShellEndToEndTests sits under TestSupport's OneAtATime, so its test ids do not carry the module's name.)
TOASTKIT_BINARY="$binary" swift test --skip-build --filter 'ToastKitCommandLineTests|DesktopShellEndToEndTests'
