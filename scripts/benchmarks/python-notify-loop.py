#!/usr/bin/python3
"""python-notify-loop: the python3-dbus peer of benchmark P2 (scripts/bench.sh).

N Notify calls to org.freedesktop.Notifications, the same arguments as raw-notify-loop.c:
  sequential: one blocking call after another: calls/s, median and p99 latency;
  pipelined:  up to W calls outstanding (reply_handler, refilled from the GLib main loop): calls/s.
cpu µs/call is this process's user+system time (os.times) per call. Prints the same JSON line as raw-notify-loop.

Run it with Debian's /usr/bin/python3 (pyenv's python3 has no dbus module; NOTES.md P8).
Usage: python-notify-loop.py [--address ADDR] [--calls N] [--window W] [--warmup N] [--json]
"""
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib
from p2_peer import arguments, cpu_us, figures, report

IFACE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
SIG = "susssasa{sv}i"


class Loop:
    def __init__(self, bus):
        self.proxy = bus.get_object(IFACE, PATH, introspect=False)
        self.actions = dbus.Array([], signature="s")
        self.hints = dbus.Dictionary({"urgency": dbus.Byte(1)}, signature="sv")

    def args(self, k):
        return ("toastkit-benchmark", dbus.UInt32(0), "", f"Benchmark {k}", "A toast from the benchmark",
                self.actions, self.hints, dbus.Int32(4000))

    def sequential(self, calls, latency):
        lat = []
        c0, t0 = cpu_us(), time.perf_counter()
        for k in range(calls):
            s = time.perf_counter()
            nid = self.proxy.Notify(*self.args(k), dbus_interface=IFACE, signature=SIG)
            if int(nid) == 0:
                raise SystemExit("python-notify-loop: Notify answered id 0")
            if latency:
                lat.append((time.perf_counter() - s) * 1e6)
        return figures(calls, time.perf_counter() - t0, cpu_us() - c0, lat)

    def pipelined(self, calls, window):
        loop = GLib.MainLoop()
        state = {"sent": 0, "done": 0, "error": None}

        def send_one():
            k = state["sent"]
            state["sent"] += 1
            self.proxy.Notify(*self.args(k), dbus_interface=IFACE, signature=SIG,
                              reply_handler=ok, error_handler=err, timeout=60)

        def ok(nid):
            state["done"] += 1
            if state["sent"] < calls:
                send_one()
            elif state["done"] == calls:
                loop.quit()

        def err(error):
            state["error"] = str(error)
            loop.quit()

        c0, t0 = cpu_us(), time.perf_counter()
        for _ in range(min(window, calls)):
            send_one()
        loop.run()
        elapsed, cpu = time.perf_counter() - t0, cpu_us() - c0
        if state["error"]:
            raise SystemExit(f"python-notify-loop: {state['error']}")
        return figures(calls, elapsed, cpu)


def main():
    a = arguments("python-notify-loop.py", address=True)
    if not a.address:
        raise SystemExit("python-notify-loop: no bus: set DBUS_SESSION_BUS_ADDRESS or pass --address")

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(a.address)
    loop = Loop(bus)
    if a.warmup:
        loop.sequential(a.warmup, False)
        loop.pipelined(a.warmup, a.window)
    seq = loop.sequential(a.calls, True)
    pipe = loop.pipelined(a.calls, a.window)
    report(a, "python3-dbus", seq, pipe)


if __name__ == "__main__":
    main()
