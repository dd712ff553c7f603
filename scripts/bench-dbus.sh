#!/usr/bin/env bash
# Benchmarks the DBus package (release build of `dbus-benchmark`) against a raw C libdbus client making the same
# calls, both against the same instant C server, on a private dbus-daemon. Not part of the tests.
#
#   scripts/bench-dbus.sh [--rounds R] [--calls N] [--window W] [--method ping|notify] [--scratch-path DIR]
#
# Per round, each client measures (a) N sequential calls and (b) N calls pipelined with up to W in flight, after a
# warm-up; the clients take turns (odd rounds C first, even rounds Swift first). The table shows every round, the
# median of the rounds and the ratio Swift/C of the medians. C programs are built into .build/bench-c/.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
calls=10000
window=64
method=ping
scratch=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --calls) calls="$2"; shift 2 ;;
        --window) window="$2"; shift 2 ;;
        --method) method="$2"; shift 2 ;;
        --scratch-path) scratch=(--scratch-path "$2"); shift 2 ;;
        -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "bench-dbus.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

for tool in gcc pkg-config dbus-daemon swift; do
    command -v "$tool" >/dev/null || { echo "bench-dbus.sh: $tool is not installed" >&2; exit 1; }
done
pkg-config --exists dbus-1 || { echo "bench-dbus.sh: libdbus-1-dev is not installed" >&2; exit 1; }

# --- Build -----------------------------------------------------------------------------------------------------
c_dir=.build/bench-c
mkdir -p "$c_dir"
echo "== build C client and server ($c_dir, gcc -O2)"
# shellcheck disable=SC2046 # pkg-config output is meant to split into flags
for program in raw-libdbus-client instant-notifications-server; do
    gcc -O2 -Wall -Wextra -o "$c_dir/$program" "scripts/benchmarks/$program.c" $(pkg-config --cflags --libs dbus-1)
done
echo "== swift build -c release --product dbus-benchmark ${scratch[*]}"
swift build -c release --product dbus-benchmark "${scratch[@]}" 2>&1 | tail -n 1
swift_bin="$(swift build -c release --show-bin-path "${scratch[@]}")/dbus-benchmark"
c_client="$c_dir/raw-libdbus-client"
c_server="$c_dir/instant-notifications-server"

# --- Private bus: own config, no service activation, killed by pid on exit ---------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/toastkit-bench.XXXXXX")"
daemon_pid=""
server_pid=""
cleanup() {
    set +e # `wait` reports the killed process's status; it must not end the cleanup early
    local pid
    for pid in "$server_pid" "$daemon_pid"; do
        if [[ -n "$pid" ]]; then
            kill "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
        fi
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sed "s|@DIRECTORY@|$work|g" scripts/harness/session-bus.conf >"$work/bus.conf"
dbus-daemon --config-file="$work/bus.conf" --nofork --print-address=1 >"$work/address" 2>"$work/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do [[ -s "$work/address" ]] && break; sleep 0.05; done
address="$(head -n 1 "$work/address")"
[[ -n "$address" ]] || { echo "bench-dbus.sh: dbus-daemon did not start:" >&2; cat "$work/daemon.log" >&2; exit 1; }

"$c_server" --address "$address" --name org.toastkit.BenchServer >"$work/server.out" &
server_pid=$!
for _ in $(seq 100); do grep -q '^ready' "$work/server.out" 2>/dev/null && break; sleep 0.05; done
grep -q '^ready' "$work/server.out" || { echo "bench-dbus.sh: the C server did not start" >&2; exit 1; }

echo "== bus $address; C server pid $server_pid; $rounds rounds of $calls calls, window $window, method $method"
echo "   $(nproc) cores; $(uname -r); libdbus $(pkg-config --modversion dbus-1)"

# --- Rounds --------------------------------------------------------------------------------------------------------
metrics=(seq_rate seq_median seq_p99 seq_cpu pipe_rate pipe_cpu)
declare -A results # results[client,metric] = "r1 r2 r3"
json_re='"sequential":\{"calls_per_s":([0-9.]+),"median_us":([0-9.]+),"p99_us":([0-9.]+),"cpu_us_per_call":([0-9.]+)\},"pipelined":\{"calls_per_s":([0-9.]+),"cpu_us_per_call":([0-9.]+)\}'

run_client() { # client-label command...
    local label="$1" line
    shift
    line="$("$@" --json)"
    [[ "$line" =~ $json_re ]] || { echo "bench-dbus.sh: unexpected output from $label: $line" >&2; exit 1; }
    local i
    for i in "${!metrics[@]}"; do
        results[$label,${metrics[$i]}]+="${BASH_REMATCH[$((i + 1))]} "
    done
    printf '   %-6s sequential %9s calls/s  median %7s µs  p99 %7s µs | pipelined %9s calls/s\n' "$label" \
        "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}" "${BASH_REMATCH[5]}"
}
common=(--address "$address" --calls "$calls" --window "$window" --method "$method")
run_c() { run_client C "$c_client" "${common[@]}" --destination org.toastkit.BenchServer; }
run_swift() { run_client Swift "$swift_bin" "${common[@]}" --server external --server-name org.toastkit.BenchServer; }

for round in $(seq "$rounds"); do
    echo "-- round $round"
    if ((round % 2)); then run_c; run_swift; else run_swift; run_c; fi
done

# --- Table -----------------------------------------------------------------------------------------------------------
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A titles=(
    [seq_rate]="sequential calls/s" [seq_median]="sequential median µs" [seq_p99]="sequential p99 µs"
    [seq_cpu]="sequential cpu µs/call" [pipe_rate]="pipelined calls/s" [pipe_cpu]="pipelined cpu µs/call"
)
echo
echo "== results: $calls calls per mode, window $window, method $method, same C server, $rounds rounds (median)"
printf '%-24s %-26s %-26s %10s %10s %8s\n' "metric" "C (rounds)" "Swift (rounds)" "C med" "Swift med" "Swift/C"
for metric in "${metrics[@]}"; do
    c_values="${results[C,$metric]}"
    s_values="${results[Swift,$metric]}"
    c_median="$(echo "$c_values" | median)"
    s_median="$(echo "$s_values" | median)"
    ratio="$(awk -v s="$s_median" -v c="$c_median" 'BEGIN { printf (c > 0 ? "%.3f" : "-"), (c > 0 ? s / c : 0) }')"
    # printf pads bytes, and "µ" is two: widen the title column by one when it has one.
    width=24
    [[ "${titles[$metric]}" == *µ* ]] && width=25
    printf "%-${width}s %-26s %-26s %10s %10s %8s\n" "${titles[$metric]}" "${c_values% }" "${s_values% }" \
        "$c_median" "$s_median" "$ratio"
done
echo
echo "Swift/C: above 1 is better for calls/s; below 1 is better for µs. Target: calls/s ratio ≥ 0.90."
