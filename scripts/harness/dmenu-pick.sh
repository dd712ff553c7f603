#!/usr/bin/env bash
# dmenu stand-in for dunst's context menu. dunst writes one line per action on stdin
# ("#Label (summary) [id,key]") and invokes the line printed here. The line chosen is the first that matches the
# extended regex in $NOTIFY_HARNESS_DIR/dmenu-pick (the file is consumed); no pattern cancels the menu.
# Every menu offered is appended to $NOTIFY_HARNESS_DIR/dmenu-input.log.
set -u
dir="${NOTIFY_HARNESS_DIR:-/tmp}"
input=$(cat)
pattern=""
if [ -f "$dir/dmenu-pick" ]; then
    pattern=$(cat "$dir/dmenu-pick")
    rm -f "$dir/dmenu-pick"
fi
choice=""
[ -n "$pattern" ] && choice=$(printf '%s\n' "$input" | grep -m1 -E -- "$pattern" || true)
printf -- '--- menu\n%s\npattern: %s\nchoice: %s\n' "$input" "$pattern" "$choice" >> "$dir/dmenu-input.log"
[ -n "$choice" ] || exit 1
printf '%s\n' "$choice"
