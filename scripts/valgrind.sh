#!/usr/bin/env bash
# Leak check (issue 6 §2): runs the D-Bus layer's and the desktop presenter's test scenarios under Debian's valgrind
# (memcheck, --leak-check=full) and fails unless "definitely lost" is 0 bytes. Not part of the test command.
#
#   scripts/valgrind.sh [--filter REGEX] [--skip REGEX] [--scratch-path DIR]
#
# Default filter: the D-Bus layer's bus scenarios (method calls, names, signals, executor, disconnects, monitor, the
# callback-style and blocking calls) and
# the presenter and the blocking sender against the fake server. valgrind runs them ~20-50× slower:
# a few minutes on 2 cores. Known toolchain-runtime noise (reachable/possible only, outside our code) is suppressed
# by scripts/valgrind.supp; definite leaks are never suppressed.
set -euo pipefail
cd "$(dirname "$0")/.."

filter='MethodCallTests|NameTests|SignalTests|ExecutorTests|DisconnectTests|MonitorTests|CallbackCallTests|BlockingConnectionTests|FakeServerTests|FaultInjectionTests|BlockingSenderTests'
# Stress tests with a 1-minute time limit that valgrind's slowdown alone would break:
skip='tenThousandPresentsFromSixteenTasksEndExactlyOnceEach|aThousandConcurrentCallsFromSixteenTasks'
scratch=(--scratch-path "${TMPDIR:-/tmp}/toastkit-valgrind-build")
while [[ $# -gt 0 ]]; do
    case "$1" in
        --filter) filter="$2"; shift 2 ;;
        --skip) skip="$2"; shift 2 ;;
        --scratch-path) scratch=(--scratch-path "$2"); shift 2 ;;
        -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "valgrind.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

scripts/install-deps.sh bench
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed" >&2; exit 1; }

echo "== swift build --build-tests (debug) ${scratch[*]}"
swift build --build-tests "${scratch[@]}" 2>&1 | tail -n 1
tests="$(swift build --show-bin-path "${scratch[@]}")/ToastKitPackageTests.xctest"
[[ -x "$tests" ]] || { echo "valgrind.sh: no test bundle at $tests" >&2; exit 1; }

# Debian 12's valgrind 3.19 faults on libdispatch's sigsuspend with a read-only mask at the end of an async main;
# the shim passes a writable copy (see scripts/benchmarks/valgrind-sigsuspend-shim.c).
mkdir -p .build/bench-c
shim="$PWD/.build/bench-c/valgrind-sigsuspend-shim.so"
gcc -O2 -Wall -Wextra -shared -fPIC -o "$shim" scripts/benchmarks/valgrind-sigsuspend-shim.c

log="$(mktemp "${TMPDIR:-/tmp}/toastkit-valgrind.XXXXXX.log")"
echo "== valgrind $(valgrind --version) on: $filter, skipping $skip (log: $log)"
started=$(date +%s)
set +e
# --fair-sched: the runtime's spin/futex patterns otherwise starve threads under valgrind's big lock.
LD_PRELOAD="$shim" valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,possible --errors-for-leak-kinds=definite \
    --error-exitcode=99 --fair-sched=yes --num-callers=30 --suppressions=scripts/valgrind.supp \
    --log-file="$log" \
    "$tests" --testing-library swift-testing --filter "$filter" --skip "$skip"
status=$?
set -e
echo "== valgrind finished in $(($(date +%s) - started)) s, exit status $status"
grep -E 'definitely lost|indirectly lost|possibly lost|still reachable|ERROR SUMMARY|suppressed:' "$log" | sed 's/^==[0-9]*== /   /'
definite="$(grep -Eo 'definitely lost: [0-9,]+ bytes' "$log" | tail -n 1 | grep -Eo '[0-9,]+' | tr -d ,)"
if [[ "$status" -ne 0 ]]; then
    echo "valgrind.sh: FAIL (exit status $status: 99 = memcheck errors or definite leaks; otherwise a test failed)" >&2
    grep -B2 -A25 'definitely lost in' "$log" | head -n 120 >&2 || true
    exit 1
fi
if [[ -z "$definite" ]]; then
    # memcheck prints no leak summary when nothing at all was allocated and kept; "All heap blocks were freed".
    grep -q 'All heap blocks were freed' "$log" && definite=0
fi
[[ "${definite:-x}" == 0 ]] || { echo "valgrind.sh: FAIL: definitely lost ${definite:-?} bytes" >&2; exit 1; }
echo "valgrind.sh: PASS: definitely lost: 0 bytes"
