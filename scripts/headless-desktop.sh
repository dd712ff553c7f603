#!/usr/bin/env bash
# Runs a command in a private headless desktop: its own dbus-daemon (own configuration, WITHOUT service activation,
# so nothing installed on the machine can auto-start and grab org.freedesktop.Notifications), Xvfb on a display it
# picks itself, and dunst with scripts/harness/dunstrc. It waits until dunst owns org.freedesktop.Notifications,
# runs the command with DBUS_SESSION_BUS_ADDRESS, DISPLAY and NOTIFY_HARNESS_DIR (the run folder, where the dunst
# context-menu script reads its choice from `dmenu-pick`) exported, then stops what it started, by pid, newest first.
#
# Usage: scripts/headless-desktop.sh [--screen WxHxD] [--] command [args...]
# Exit status: the command's; 125 when the desktop could not be set up (the message says which part).
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
harness="$here/harness"
screen=1280x800x24
while [ $# -gt 0 ]; do
    case "$1" in
    --screen) screen=${2:?}; shift 2 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--screen WxHxD] [--] command [args...]" >&2; exit 64; }

fail() { echo "headless-desktop: $*" >&2; exit 125; }
for tool in dbus-daemon dbus-send Xvfb dunst; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (run scripts/install-deps.sh demo)"
done

rundir=$(mktemp -d "${TMPDIR:-/tmp}/toastkit-desktop.XXXXXX") || fail "mktemp failed"
chmod 700 "$rundir"
pids=()

alive() { kill -0 "$1" 2>/dev/null && [ "$(sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
stop() {
    local pid=$1 i
    alive "$pid" || { wait "$pid" 2>/dev/null; return 0; }
    kill -TERM "$pid" 2>/dev/null
    for i in $(seq 1 60); do alive "$pid" || break; sleep 0.05; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}
cleanup() {
    local status=$? i
    trap - EXIT INT TERM HUP
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop "${pids[i]}"; done
    rm -rf "$rundir"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Polls for a condition (dunst announces itself only on the bus) while the process lives. The bound is a safety net
# for a process that hangs, not a guess at how long a start takes: a start after a large build once took over 10 s.
wait_for() {
    local what=$1 pid=$2 deadline=$((SECONDS + 120))
    shift 2
    while ((SECONDS < deadline)); do
        "$@" && return 0
        alive "$pid" || fail "$what exited (logs: $rundir)"
        sleep 0.02
    done
    fail "$what was not ready after 120 s (logs: $rundir)"
}

# Waits for the line a daemon writes on its descriptor 3 once it is ready (dbus-daemon's address, Xvfb's display),
# read from the FIFO "$rundir/$2" that the shell holds open on descriptor 4: the read returns as the line comes,
# and every second the daemon is checked to be alive.
announced() {
    local what=$1 pid=$2 line deadline=$((SECONDS + 120))
    while ((SECONDS < deadline)); do
        if IFS= read -r -t 1 line <&4; then
            printf '%s\n' "$line"
            return 0
        fi
        alive "$pid" || fail "$what exited (logs: $rundir)"
    done
    fail "$what did not say it was ready within 120 s (logs: $rundir)"
}

sed "s|@DIRECTORY@|$rundir|g" "$harness/session-bus.conf" >"$rundir/bus.conf"
mkfifo "$rundir/bus-address" || fail "mkfifo failed"
exec 4<>"$rundir/bus-address"
dbus-daemon --config-file="$rundir/bus.conf" --nofork --print-address=3 3>"$rundir/bus-address" \
    >"$rundir/dbus-daemon.log" 2>&1 </dev/null &
pids+=($!)
DBUS_SESSION_BUS_ADDRESS=$(announced dbus-daemon "$!") || exit 125
exec 4<&-
export DBUS_SESSION_BUS_ADDRESS
unset DBUS_STARTER_ADDRESS DBUS_STARTER_BUS_TYPE WAYLAND_DISPLAY

mkfifo "$rundir/display" || fail "mkfifo failed"
exec 4<>"$rundir/display"
Xvfb -displayfd 3 -screen 0 "$screen" -nolisten tcp -noreset 3>"$rundir/display" >"$rundir/xvfb.log" 2>&1 </dev/null &
pids+=($!)
display=$(announced Xvfb "$!") || exit 125
exec 4<&-
DISPLAY=":$display"
export DISPLAY
export NOTIFY_HARNESS_DIR="$rundir"

sed "s|@HARNESS_DIR@|$harness|g" "$harness/dunstrc" >"$rundir/dunstrc"
mkdir -p "$rundir/config" "$rundir/cache" "$rundir/runtime"
chmod 700 "$rundir/runtime"
XDG_CONFIG_HOME="$rundir/config" XDG_CACHE_HOME="$rundir/cache" XDG_RUNTIME_DIR="$rundir/runtime" \
    dunst -config "$rundir/dunstrc" >"$rundir/dunst.log" 2>&1 </dev/null &
pids+=($!)
server_owned() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null | grep -q "boolean true"
}
wait_for dunst "$!" server_owned

"$@"
