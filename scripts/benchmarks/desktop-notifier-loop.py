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
import asyncio
import importlib.metadata
import logging
import os
import time

from desktop_notifier import DesktopNotifier
from p2_peer import arguments, cpu_us, figures, report


class Failures(logging.Handler):
    """desktop-notifier logs a failed send as a warning and returns: count them, so a run that failed says so."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


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
    return figures(calls, time.perf_counter() - t0, cpu_us() - c0, lat)


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
    return figures(calls, time.perf_counter() - t0, cpu_us() - c0)


async def run(a):
    notifier = DesktopNotifier(app_name="toastkit-benchmark")
    if a.warmup:
        await sequential(notifier, a.warmup, False)
        await pipelined(notifier, a.warmup, a.window)
    seq = await sequential(notifier, a.calls, True)
    pipe = await pipelined(notifier, a.calls, a.window)
    return seq, pipe


def main():
    a = arguments("desktop-notifier-loop.py")
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        raise SystemExit("desktop-notifier-loop: no bus: set DBUS_SESSION_BUS_ADDRESS")
    failures = Failures()
    logging.getLogger("desktop_notifier").addHandler(failures)
    seq, pipe = asyncio.run(run(a))
    if failures.messages:
        raise SystemExit(f"desktop-notifier-loop: {len(failures.messages)} send(s) failed: {failures.messages[0]}")
    report(a, f"desktop-notifier {importlib.metadata.version('desktop-notifier')}", seq, pipe)


if __name__ == "__main__":
    main()
