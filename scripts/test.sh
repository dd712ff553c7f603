#!/usr/bin/env bash
# The test command: installs what the tests need, builds with warnings as errors, lints, runs every test.
# Every service a test uses (private dbus-daemons, Xvfb, dunst) is started by the tests themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh test

echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

echo "== swift format lint"
swift format lint --strict --recursive Sources Tests

echo "== swift test"
swift test --skip-build
