#!/usr/bin/env bash
# The main job: a tour of real toasts. The tour needs the `toastkit` CLI, which is being built (issue 5);
# until it lands this checks the build and says what it will do.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh demo
swift build --product toastkit
echo "demo: coming in the CLI — it will pop statuses, an icon, a replace by id (Sincronizando… → Sincronizado)"
echo "      and an action with a callback, on your desktop or in a private headless desktop (Xvfb + dunst)."
