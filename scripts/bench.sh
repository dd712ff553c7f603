#!/usr/bin/env bash
# ToastKit's benchmarks (issue 6 §1): P1–P5 side by side, in one run, on one private bus, against one instant
# notification server that draws nothing (scripts/benchmarks/instant-notifications-server.c). Not part of the tests.
#
#   scripts/bench.sh [--quick] [--rounds R] [--calls N] [--window W] [--runs R1] [--iterations N3]
#                    [--checkpoints LIST] [--idle-seconds S] [--scratch-path DIR] [--only P1,P2,...] [--keep DIR]
#
#   P1 one toast from a script, whole process: toastkit send vs notify-send vs gdbus call vs a raw C one-shot (hyperfine)
#   P2 N Notify calls, sequential and pipelined (≤ W in flight): the library (ToastCenter + desktop presenter), the
#      raw wire (NotificationsClient), desktop-notifier (PyPI, in a virtual environment under .build/), notify-rust
#      (Debian 13's, built in a trixie chroot), python3-dbus and a raw C libdbus loop; R rounds, clients take turns
#   P3 server emits ActionInvoked → the Swift action handler runs: median, p99
#   P4 peak RSS of the CLI vs notify-send; the library's RSS after 1k, 10k, 100k toasts
#   P5 CPU time of a process holding one indefinite toast over S seconds
#   P6 replace storm: one id replaced N times in a loop: the library (latest wins) vs a C loop sending them all
#   P7 the agent's cold start: `toastkit send` when no agent runs and the bus activates one (service file), vs warm;
#      and a plain toast (no duration), which needs no agent: shown directly, as notify-send's
#   P8 one Present to a running agent with its application's queue empty, then with 10,000 toasts waiting
#   P9 a chatty command (1,500,000 lines) through `toastkit run` against the command alone, to /dev/null and to a pipe
#   P10 one schedule written (ScheduleStore.put, what `send --in` costs the agent) with none kept, then with 10,000
#       (no bus: `--only P10` builds toastkit-benchmark alone, and needs neither the packages nor the C programs)
# Defaults: 3 rounds × 10,000 calls, window 64, 200 hyperfine runs, 1,000 action iterations, 10 s idle (~3 min on
# 2 cores). --quick: 1 round × 2,000 calls, 50 runs, 300 iterations, checkpoints 1k,10k,30k, 3 s idle (~40 s).
# Release binaries come from `swift build -c release`; the C programs are built into .build/bench-c/.
# How to read the tables: docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 calls=10000 window=64 runs=200 iterations=1000 checkpoints=1000,10000,100000 idle=10
only=P1,P2,P3,P4,P5,P6,P7,P8,P9,P10
scratch=()
keep=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) rounds=1 calls=2000 runs=50 iterations=300 checkpoints=1000,10000,30000 idle=3; shift ;;
        --rounds) rounds="$2"; shift 2 ;;
        --calls) calls="$2"; shift 2 ;;
        --window) window="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --iterations) iterations="$2"; shift 2 ;;
        --checkpoints) checkpoints="$2"; shift 2 ;;
        --idle-seconds) idle="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --keep) keep="$2"; shift 2 ;;
        --scratch-path) scratch=(--scratch-path "$2"); shift 2 ;;
        -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
wants() { [[ ",$only," == *",$1,"* ]]; }
# P1–P9 need the bus, the instant server, the packages and the C programs; P10 only toastkit-benchmark.
bus=false
for section in P1 P2 P3 P4 P5 P6 P7 P8 P9; do wants "$section" && bus=true; done

if $bus; then
    scripts/install-deps.sh bench
    for tool in gcc pkg-config dbus-daemon swift hyperfine notify-send gdbus /usr/bin/python3; do
        command -v "$tool" >/dev/null || { echo "bench.sh: $tool is not installed" >&2; exit 1; }
    done
    /usr/bin/python3 -c 'import dbus, gi' 2>/dev/null \
        || { echo "bench.sh: python3-dbus/python3-gi missing" >&2; exit 1; }
fi
command -v swift >/dev/null || { echo "bench.sh: swift is not installed" >&2; exit 1; }

# --- Build -----------------------------------------------------------------------------------------------------
c_dir=.build/bench-c
mkdir -p "$c_dir"
if $bus; then
    echo "== build C programs ($c_dir, gcc -O2)"
    # pkg-config prints the flags on one line, separated by spaces: split them into words once.
    read -ra dbus_flags <<<"$(pkg-config --cflags --libs dbus-1)"
    read -ra dbus_cflags <<<"$(pkg-config --cflags dbus-1)"
    for program in instant-notifications-server raw-notify-oneshot raw-libdbus-client; do
        gcc -O2 -Wall -Wextra -o "$c_dir/$program" "scripts/benchmarks/$program.c" "${dbus_flags[@]}"
    done
    gcc -O2 -Wall -Wextra -o "$c_dir/run-rusage" scripts/benchmarks/run-rusage.c
    # The C one-shot again, linked statically like toastkit (scripts/build-cli.sh): shown for context in P1; the
    # target stays the usual dynamically linked build.
    gcc -O2 -Wall -Wextra -static -o "$c_dir/raw-notify-oneshot-static" scripts/benchmarks/raw-notify-oneshot.c \
        "${dbus_cflags[@]}" scripts/static/no-systemd-sockets.c -l:libdbus-1.a -lpthread 2>&1 \
        | grep -v -e "in statically linked applications requires at runtime" -e "in function \`" >&2 || true
    [[ -x "$c_dir/raw-notify-oneshot-static" ]] \
        || { echo "bench.sh: the static C one-shot did not build" >&2; exit 1; }
    echo "== scripts/build-cli.sh (toastkit: fully static, release)"
    toastkit="$(scripts/build-cli.sh ${scratch[@]:+--scratch-path "${scratch[1]}/static"} 2>"$c_dir/build-cli.log")" \
        || { cat "$c_dir/build-cli.log" >&2; exit 1; }
    tail -n 1 "$c_dir/build-cli.log"
fi
echo "== swift build -c release --product toastkit-benchmark ${scratch[*]}"
swift build -c release --static-swift-stdlib --product toastkit-benchmark "${scratch[@]}" 2>&1 | tail -n 1
benchmark="$(swift build -c release --static-swift-stdlib --show-bin-path "${scratch[@]}")/toastkit-benchmark"
server="$c_dir/instant-notifications-server"
python=(/usr/bin/python3 scripts/benchmarks/python-notify-loop.py)
# desktop-notifier, the Python library an app developer would pick instead (issue 22 §3): from PyPI, pinned, into a
# virtual environment of the bench's own (Debian's python3 with python3-venv).
notifier_version=6.2.0
notifier_venv=.build/bench-venv
if wants P2 && ! "$notifier_venv/bin/python" -c "import desktop_notifier" 2>/dev/null; then
    echo "== desktop-notifier $notifier_version from PyPI into $notifier_venv"
    /usr/bin/python3 -m venv "$notifier_venv"
    "$notifier_venv/bin/pip" install --quiet --disable-pip-version-check "desktop-notifier==$notifier_version"
fi
desktop_notifier=("$notifier_venv/bin/python" scripts/benchmarks/desktop-notifier-loop.py)
# notify-rust, the Rust library an app developer would pick (issue 44): Debian 13's crates, built offline with cargo in
# a cached trixie chroot, run through that chroot's loader (scripts/benchmarks/notify-rust-peer.sh says why).
if wants P2; then
    echo "== notify-rust from Debian 13's crates (scripts/benchmarks/notify-rust-peer.sh)"
    notify_rust_command="$(scripts/benchmarks/notify-rust-peer.sh --command)" \
        || { echo "bench.sh: the notify-rust peer is not built (see above)" >&2; exit 1; }
    mapfile -t notify_rust <<<"$notify_rust_command"
fi

# --- Private bus: own config, killed by pid on exit; it may activate one service, the toastkit agent -------------
work="$(mktemp -d "${TMPDIR:-/tmp}/toastkit-bench.XXXXXX")"
runtime=""
daemon_pid=""
server_pid=""
idle_pids=()
cleanup() {
    set +e # `wait` reports the killed process's status; it must not end the cleanup early
    local pid
    for pid in "${idle_pids[@]}" "$server_pid" "$daemon_pid"; do
        if [[ -n "$pid" ]]; then
            kill "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
        fi
    done
    [[ -n "$keep" ]] && mkdir -p "$keep" && cp "$work"/results.jsonl "$work"/*.json "$keep"/ 2>/dev/null
    rm -rf "$work"
    if [[ -n "$runtime" ]]; then rm -rf "$runtime"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
  <limit name="max_replies_per_connection">50000</limit>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_message_size">100000000</limit>
  <servicedir>$work/services</servicedir>
</busconfig>
CONF
# P1–P9's bus, with the instant server on it.
if $bus; then
    mkdir -p "$work/services"
    sed "s|@BINDIR@|$(dirname "$toastkit")|" scripts/dbus/org.toastkit.Agent1.service.in >"$work/services/org.toastkit.Agent1.service"
    # The CLI and the agent keep their state under the XDG folders: fresh ones, so runs never touch the real ones
    # (set before the bus starts: an activated agent inherits the bus's environment). XDG_RUNTIME_DIR is a tmpfs on a
    # desktop (/run/user/UID): here a folder in /dev/shm, so the agent's and the --id store's fsyncs cost what they
    # cost there.
    runtime="$(mktemp -d /dev/shm/toastkit-bench-runtime.XXXXXX)"
    mkdir -m 700 "$work/state" "$work/config"
    export XDG_RUNTIME_DIR="$runtime" XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/config"
    dbus-daemon --config-file="$work/bus.conf" --nofork --print-address=1 >"$work/address" 2>"$work/daemon.log" &
    daemon_pid=$!
    for _ in $(seq 100); do [[ -s "$work/address" ]] && break; sleep 0.05; done
    address="$(head -n 1 "$work/address")"
    [[ -n "$address" ]] || { echo "bench.sh: dbus-daemon did not start:" >&2; cat "$work/daemon.log" >&2; exit 1; }
    export DBUS_SESSION_BUS_ADDRESS="$address"

    "$server" >"$work/server.out" &
    server_pid=$!
    for _ in $(seq 100); do grep -q '^ready' "$work/server.out" 2>/dev/null && break; sleep 0.05; done
    grep -q '^ready' "$work/server.out" || { echo "bench.sh: the instant server did not start" >&2; exit 1; }
fi

results="$work/results.jsonl"
: >"$results"
record() { # bench client json
    printf '{"bench":"%s","client":"%s","data":%s}\n' "$1" "$2" "$3" >>"$results"
}
started=$(date +%s)
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(uname -r)"
if $bus; then echo "   bus $address; instant server pid $server_pid; libdbus $(pkg-config --modversion dbus-1)"; fi

# The agent's pid, asked of the bus (never of the agent: that would start one).
agent_pid() {
    dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.GetConnectionUnixProcessID string:org.toastkit.Agent1 2>/dev/null | awk '{print $2}'
}
# Stops the agent, if one runs, and returns once its name is free (for P7's cold starts).
cat >"$work/stop-agent.sh" <<'STOP'
#!/usr/bin/env bash
# A cold `send` hands its toast over to the agent it starts (docs/decisions/0007-hand-over.md): that agent is still
# starting when `send` has exited. Wait until it has taken the toast over (at most 5 s), so it is the one stopped here
# and the next run finds no agent.
for _ in $(seq 2500); do
    compgen -G "$XDG_RUNTIME_DIR/toastkit/handover-*.json" >/dev/null || break
    sleep 0.002
done
pid="$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.toastkit.Agent1 2>/dev/null | awk '{print $2}')"
[[ -n "$pid" ]] && kill "$pid"
while dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.toastkit.Agent1 | grep -q true; do sleep 0.002; done
# Nothing for the next agent to adopt: a clean cold start.
rm -f "$XDG_RUNTIME_DIR"/toastkit/agent-*.json "$XDG_RUNTIME_DIR"/toastkit/handover-*.json
STOP
chmod +x "$work/stop-agent.sh"

# --- P1 --------------------------------------------------------------------------------------------------------
if wants P1; then
    echo "== P1: one toast from a script, whole process (hyperfine -N, $runs runs, warm-up 10)"
    # Through the agent, each send replaces the one toast `bench` (a Notify with replaces_id, as a script that
    # updates its status does: back to back, each update waits for the toast's update interval, and is answered
    # with the notification it replaces), then a new toast of a second each time (issue 39's P1); the agent is
    # started (activated) by the warm-up. `dbus-send`: one bare call to the bus (issue 39's yardstick).
    hyperfine -N --warmup 10 --runs "$runs" --style basic --export-json "$work/p1.json" \
        -n "toastkit send (agent)" "$toastkit send --id bench Benchmark 'A toast from a script'" \
        -n "toastkit send -t 1000 (agent)" "$toastkit send -t 1000 Benchmark 'A toast from a script'" \
        -n "toastkit send --no-agent" "$toastkit send --no-agent Benchmark 'A toast from a script'" \
        -n "notify-send" "notify-send Benchmark 'A toast from a script'" \
        -n "dbus-send" "dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.GetId" \
        -n "gdbus call" "gdbus call --session --dest org.freedesktop.Notifications --object-path /org/freedesktop/Notifications --method org.freedesktop.Notifications.Notify -- gdbus 0 '' Benchmark 'A toast from a script' '[]' '{\"urgency\": <byte 1>}' -1" \
        -n "C one-shot" "$c_dir/raw-notify-oneshot Benchmark 'A toast from a script'" \
        -n "C one-shot, static" "$c_dir/raw-notify-oneshot-static Benchmark 'A toast from a script'" \
        >"$work/p1.log" 2>&1 || { cat "$work/p1.log" >&2; exit 1; }
    record P1 hyperfine "$(/usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))))' \
        "$work/p1.json")"
fi

# --- P2 --------------------------------------------------------------------------------------------------------
if wants P2; then
    echo "== P2: $calls Notify calls per mode, window $window, $rounds round(s); clients take turns"
    p2_common=(--calls "$calls" --window "$window")
    p2_run() { # label command...
        local label="$1" line
        shift
        line="$("$@")" || { echo "bench.sh: $label failed" >&2; exit 1; }
        record P2 "$label" "$line"
        echo "   $label: $(echo "$line" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print("sequential %.0f/s, pipelined %.0f/s" % (d["sequential"]["calls_per_s"], d["pipelined"]["calls_per_s"]))')"
    }
    # Swift raw runs on the connection's I/O thread (no thread switch, as a C loop); Swift raw (pool) on Swift's
    # global executor, with the library's two thread switches per call (decisions 0001, 0002) and none of its model:
    # the most the library can reach on its own threading.
    clients=(c python desktop-notifier notify-rust swift-raw swift-raw-pool swift-library)
    for round in $(seq "$rounds"); do
        echo "-- round $round"
        # rotate the order each round, so no client always runs first (or last, on a warmer machine)
        for k in "${!clients[@]}"; do
            case "${clients[$(((k + round - 1) % ${#clients[@]}))]}" in
                c) p2_run C "$c_dir/raw-libdbus-client" --method freedesktop-notify "${p2_common[@]}" --json ;;
                python) p2_run python3-dbus "${python[@]}" "${p2_common[@]}" --json ;;
                desktop-notifier) p2_run desktop-notifier "${desktop_notifier[@]}" "${p2_common[@]}" --json ;;
                notify-rust) p2_run notify-rust "${notify_rust[@]}" "${p2_common[@]}" --json ;;
                swift-raw) p2_run "Swift raw" "$benchmark" burst --client raw "${p2_common[@]}" ;;
                swift-raw-pool) p2_run "Swift raw (pool)" "$benchmark" burst --client raw --executor global "${p2_common[@]}" ;;
                swift-library) p2_run "Swift library" "$benchmark" burst --client library "${p2_common[@]}" ;;
            esac
        done
    done
fi

# --- P3 --------------------------------------------------------------------------------------------------------
if wants P3; then
    echo "== P3: ActionInvoked → handler, $iterations iterations"
    record P3 swift "$("$benchmark" action --iterations "$iterations")"
fi

# --- P4 --------------------------------------------------------------------------------------------------------
if wants P4; then
    echo "== P4: peak RSS of one toast from a script (5 runs each); library RSS at $checkpoints toasts"
    for _ in 1 2 3 4 5; do
        record P4cli "toastkit send" "$("$c_dir/run-rusage" -- "$toastkit" send Benchmark 'A toast from a script')"
        record P4cli notify-send "$("$c_dir/run-rusage" -- notify-send Benchmark 'A toast from a script')"
        record P4cli "gdbus call" "$("$c_dir/run-rusage" -- gdbus call --session --dest org.freedesktop.Notifications \
            --object-path /org/freedesktop/Notifications --method org.freedesktop.Notifications.Notify -- \
            gdbus 0 '' Benchmark 'A toast from a script' '[]' '{"urgency": <byte 1>}' -1)"
        record P4cli "C one-shot" "$("$c_dir/run-rusage" -- "$c_dir/raw-notify-oneshot" Benchmark 'A toast from a script')"
    done
    record P4lib swift "$("$benchmark" memory --checkpoints "$checkpoints")"
fi

# --- P5 --------------------------------------------------------------------------------------------------------
if wants P5; then
    echo "== P5: CPU over ${idle} s while holding one indefinite toast (all three at once)"
    ticks=$(getconf CLK_TCK)
    cpu_ns() { # pid: user+system time of the process, ns (/proc/PID/stat utime+stime: clock ticks, exited threads
        # included; per-thread schedstat would be finer but loses the time of threads that end in the window)
        local fields
        read -r -a fields <"/proc/$1/stat"
        echo $(((fields[13] + fields[14]) * 1000000000 / ticks))
    }
    "$toastkit" send --wait --duration indefinite Holding 'An indefinite toast' >/dev/null &
    idle_pids+=($!)
    notify-send --wait --expire-time 0 Holding 'An indefinite toast' >/dev/null &
    idle_pids+=($!)
    "$toastkit" send --id holding --duration indefinite Holding 'An indefinite toast' >/dev/null
    agent_pid="$(agent_pid)"
    "$benchmark" idle --seconds "$idle" >"$work/p5-library.json" &
    library_pid=$!
    sleep 1 # past start-up: measure the holding only
    before=("$(cpu_ns "${idle_pids[0]}")" "$(cpu_ns "${idle_pids[1]}")" "$(cpu_ns "$agent_pid")")
    sleep "$idle"
    after=("$(cpu_ns "${idle_pids[0]}")" "$(cpu_ns "${idle_pids[1]}")" "$(cpu_ns "$agent_pid")")
    wait "$library_pid"
    record P5 "toastkit send --wait" "{\"cpu_us\":$(((after[0] - before[0]) / 1000)),\"wall_s\":$idle}"
    record P5 "notify-send --wait" "{\"cpu_us\":$(((after[1] - before[1]) / 1000)),\"wall_s\":$idle}"
    record P5 "toastkit agent" "{\"cpu_us\":$(((after[2] - before[2]) / 1000)),\"wall_s\":$idle}"
    "$toastkit" close --id holding
    record P5 "library" "$(cat "$work/p5-library.json")"
    for pid in "${idle_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    idle_pids=()
fi

# --- P6 --------------------------------------------------------------------------------------------------------
if wants P6; then
    echo "== P6: one id replaced $calls times, $rounds round(s); C and the library take turns"
    for _ in $(seq "$rounds"); do
        record P6 C "$("$c_dir/raw-libdbus-client" --method replace --calls "$calls" --window "$window" --warmup 1000)"
        record P6 "Swift library" "$("$benchmark" replace --calls "$calls" --warmup 1000)"
    done
fi

# --- P7 --------------------------------------------------------------------------------------------------------
if wants P7; then
    cold_runs=$((runs < 50 ? runs : 50))
    echo "== P7: the agent's cold start through D-Bus activation ($cold_runs runs) vs a running agent"
    hyperfine -N --runs "$cold_runs" --style basic --export-json "$work/p7-cold.json" \
        --prepare "$work/stop-agent.sh" \
        -n "toastkit send, no agent running (the bus starts one)" "$toastkit send --id cold -d 0.5 Cold 'start'" \
        -n "toastkit send, a plain toast (no duration: shown directly, no agent started)" "$toastkit send Cold 'start'" \
        -n "notify-send, cold" "notify-send Cold 'start'" \
        >"$work/p7.log" 2>&1 || { cat "$work/p7.log" >&2; exit 1; }
    hyperfine -N --warmup 5 --runs "$cold_runs" --style basic --export-json "$work/p7-warm.json" \
        -n "toastkit send, agent running" "$toastkit send --id cold -d 0.5 Cold 'start'" \
        -n "notify-send" "notify-send -t 500 Cold 'start'" \
        >>"$work/p7.log" 2>&1 || { cat "$work/p7.log" >&2; exit 1; }
    for part in cold warm; do
        record P7 "$part" "$(/usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))))' \
            "$work/p7-$part.json")"
    done
fi

# --- P8 --------------------------------------------------------------------------------------------------------
if wants P8; then
    echo "== P8: Present to the agent with its application's queue empty, then with 10,000 waiting ($rounds round(s))"
    for _ in $(seq "$rounds"); do
        "$work/stop-agent.sh"
        record P8 agent "$("$benchmark" agent-queue --calls 1000 --checkpoints 10000)"
    done
    "$work/stop-agent.sh"
fi

# --- P9 --------------------------------------------------------------------------------------------------------
if wants P9; then
    lines=1500000
    p9_runs=$((runs < 30 ? runs : 30))
    echo "== P9: $lines lines through toastkit run vs the command alone (hyperfine, sh, $p9_runs runs)"
    # Side by side, each to the same place: nothing (/dev/null), and a pipe a reader empties (cat), which is what the
    # command pays for its output once anything reads it: run's own cost is what it adds to `seq | cat`. Through run,
    # the whole output also goes to the log (XDG_STATE_HOME, on disk) and its last lines to the tail.
    hyperfine -S sh --warmup 3 --runs "$p9_runs" --style basic --export-json "$work/p9.json" \
        -n "seq 1 $lines > /dev/null" "seq 1 $lines > /dev/null" \
        -n "seq 1 $lines | cat > /dev/null" "seq 1 $lines | cat > /dev/null" \
        -n "toastkit run -- seq 1 $lines > /dev/null" "$toastkit run --min-seconds 100000 -- seq 1 $lines > /dev/null" \
        -n "toastkit run -- seq 1 $lines | cat > /dev/null" \
        "$toastkit run --min-seconds 100000 -- seq 1 $lines | cat > /dev/null" \
        >"$work/p9.log" 2>&1 || { cat "$work/p9.log" >&2; exit 1; }
    record P9 run "$(/usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))))' \
        "$work/p9.json")"
fi

# --- P10 -------------------------------------------------------------------------------------------------------
if wants P10; then
    echo "== P10: one schedule written (ScheduleStore.put) with none kept, then with 10,000 ($rounds round(s))"
    for _ in $(seq "$rounds"); do
        # Its stores in folders of their own under $work (removed with it), on the disk a state folder is on.
        record P10 schedules "$(TMPDIR="$work" "$benchmark" schedules --calls 200 --checkpoints 10000)"
    done
fi

echo "== done in $(($(date +%s) - started)) s (after the build)"
echo
/usr/bin/python3 scripts/benchmarks/bench-report.py "$results"
