"""p2_peer: what the Python peers of benchmark P2 share (python-notify-loop.py, desktop-notifier-loop.py).

Their command line, the CPU clock, the figures of a timed run and the line they print (the same JSON line as
raw-libdbus-client). Each peer imports it from its own folder; nothing here imports a D-Bus library, so it runs
under Debian's python3 and under the benchmark's virtual environment alike.
"""
import argparse
import json
import os


def arguments(program, address=False):
    """The peers' options: --calls, --window, --warmup, --json (and --address, for a peer that takes it)."""
    ap = argparse.ArgumentParser(prog=program)
    if address:
        ap.add_argument("--address", default=os.environ.get("DBUS_SESSION_BUS_ADDRESS"))
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    return ap.parse_args()


def cpu_us():
    """This process's user and system time so far, in µs."""
    t = os.times()
    return (t.user + t.system) * 1e6


def percentile(values, q):
    rank = min(max(int(-(-q * len(values) // 1)), 1), len(values))
    return values[rank - 1]


def figures(calls, elapsed, cpu, latencies=None):
    """calls/s and CPU µs per call of a timed run, with the median and p99 of its latencies when it kept them."""
    result = {"calls_per_s": calls / elapsed, "cpu_us_per_call": cpu / calls}
    if latencies:
        latencies.sort()
        result["median_us"] = percentile(latencies, 0.5)
        result["p99_us"] = percentile(latencies, 0.99)
    return result


def report(a, client, seq, pipe):
    """Prints the run: one JSON line with --json, else a sentence."""
    if a.json:
        print(json.dumps({
            "client": client, "server": "org.freedesktop.Notifications", "method": "Notify", "calls": a.calls,
            "window": a.window, "warmup": a.warmup,
            "sequential": {k: round(seq[k], 1) for k in ("calls_per_s", "median_us", "p99_us", "cpu_us_per_call")},
            "pipelined": {k: round(pipe[k], 1) for k in ("calls_per_s", "cpu_us_per_call")},
        }, separators=(",", ":")))
    else:
        print(f"{client}: sequential {seq['calls_per_s']:.1f} calls/s (median {seq['median_us']:.1f} µs, "
              f"p99 {seq['p99_us']:.1f} µs); pipelined {pipe['calls_per_s']:.1f} calls/s")
