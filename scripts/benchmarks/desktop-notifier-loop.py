"""desktop-notifier-loop: the desktop-notifier peer of benchmark P2 (scripts/bench.sh).

desktop-notifier (PyPI, on dbus-fast) is the library a Python app developer picks instead of ToastKit. This sends N
notifications through its public API, `await DesktopNotifier.send(...)`, with the same title and message shape as the
other P2 clients:
  sequential: one awaited send after another: calls/s, median and p99 latency;
  pipelined:  up to W sends outstanding (asyncio tasks, refilled as each one is answered): calls/s.
cpu µs/call is this process's user+system time (os.times) per call. Prints the same JSON line as raw-libdbus-client.

scripts/bench.sh installs desktop-notifier from PyPI into a virtual environment and runs this with its python.
Usage: desktop-notifier-loop.py [--calls N] [--window W] [--warmup N] [--json]   (the bus: DBUS_SESSION_BUS_ADDRESS)
"""
import argparse
import asyncio
import importlib.metadata
import json
import logging
import os
import time

from desktop_notifier import DesktopNotifier


class Failures(logging.Handler):
    """desktop-notifier logs a failed send as a warning and returns: count them, so a run that failed says so."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def cpu_us():
    t = os.times()
    return (t.user + t.system) * 1e6


def percentile(values, q):
    rank = min(max(int(-(-q * len(values) // 1)), 1), len(values))
    return values[rank - 1]


async def send(notifier, k):
    await notifier.send(title=f"Benchmark {k}", message="A toast from the benchmark", timeout=4)


async def sequential(notifier, calls, latency):
    lat = []
    c0, t0 = cpu_us(), time.perf_counter()
    for k in range(calls):
        s = time.perf_counter()
        await send(notifier, k)
        if latency:
            lat.append((time.perf_counter() - s) * 1e6)
    elapsed, cpu = time.perf_counter() - t0, cpu_us() - c0
    result = {"calls_per_s": calls / elapsed, "cpu_us_per_call": cpu / calls}
    if latency:
        lat.sort()
        result["median_us"] = percentile(lat, 0.5)
        result["p99_us"] = percentile(lat, 0.99)
    return result


async def pipelined(notifier, calls, window):
    next_k = 0

    async def worker():
        nonlocal next_k
        while next_k < calls:
            k = next_k
            next_k += 1
            await send(notifier, k)

    c0, t0 = cpu_us(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(window, calls))))
    elapsed, cpu = time.perf_counter() - t0, cpu_us() - c0
    return {"calls_per_s": calls / elapsed, "cpu_us_per_call": cpu / calls}


async def run(a):
    notifier = DesktopNotifier(app_name="toastkit-benchmark")
    if a.warmup:
        await sequential(notifier, a.warmup, False)
        await pipelined(notifier, a.warmup, a.window)
    seq = await sequential(notifier, a.calls, True)
    pipe = await pipelined(notifier, a.calls, a.window)
    return seq, pipe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        raise SystemExit("desktop-notifier-loop: no bus: set DBUS_SESSION_BUS_ADDRESS")
    failures = Failures()
    logging.getLogger("desktop_notifier").addHandler(failures)
    seq, pipe = asyncio.run(run(a))
    if failures.messages:
        raise SystemExit(f"desktop-notifier-loop: {len(failures.messages)} send(s) failed: {failures.messages[0]}")
    version = importlib.metadata.version("desktop-notifier")
    if a.json:
        print(json.dumps({
            "client": f"desktop-notifier {version}", "server": "org.freedesktop.Notifications", "method": "Notify",
            "calls": a.calls, "window": a.window, "warmup": a.warmup,
            "sequential": {k: round(seq[k], 1) for k in ("calls_per_s", "median_us", "p99_us", "cpu_us_per_call")},
            "pipelined": {k: round(pipe[k], 1) for k in ("calls_per_s", "cpu_us_per_call")},
        }, separators=(",", ":")))
    else:
        print(f"desktop-notifier {version}: sequential {seq['calls_per_s']:.1f} calls/s (median "
              f"{seq['median_us']:.1f} µs, p99 {seq['p99_us']:.1f} µs); pipelined {pipe['calls_per_s']:.1f} calls/s")


if __name__ == "__main__":
    main()
