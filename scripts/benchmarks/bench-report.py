#!/usr/bin/python3
"""bench-report: prints scripts/bench.sh's tables from its results file (one JSON object per line:
{"bench": "P1".."P10", "client": label, "data": what the program printed}).

Every table shows medians (of hyperfine runs, or of rounds), the ratio of ToastKit to each peer, the target and
PASS/MISS. Usage: bench-report.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def load(path):
    by = defaultdict(list)
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                by[(r["bench"], r["client"])].append(r["data"])
    return by


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits=1):
    if v is None:
        return "-"
    return f"{v:,.{digits}f}"


def verdict(ok):
    return "PASS" if ok else "MISS"


def table(title, header, rows, notes=()):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    print(f"### {title}")
    line = lambda cells: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                                    for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))
    for note in notes:
        print(note)
    print()


def p1(by):
    runs = by.get(("P1", "hyperfine"))
    if not runs:
        return
    results = {r["command"]: r for r in runs[0]["results"]}
    ms = {name: r["median"] * 1e3 for name, r in results.items()}
    tk = ms["toastkit send (agent)"]
    direct = ms["toastkit send --no-agent"]
    rows = []
    for name, r in results.items():
        rows.append([name, fmt(ms[name], 2), fmt(r["mean"] * 1e3, 2), fmt(r["stddev"] * 1e3, 2),
                     fmt(r["min"] * 1e3, 2), fmt(r["max"] * 1e3, 2), fmt(tk / ms[name], 2)])
    c_ratio, ns_ratio = direct / ms["C one-shot"], tk / ms["notify-send"]
    timed = ms.get("toastkit send -t 1000 (agent)")
    issue39 = []
    if timed is not None and "dbus-send" in ms:
        t_ns, t_ds = timed / ms["notify-send"], timed / ms["dbus-send"]
        issue39 = [f"target toastkit send -t 1000 through a running agent ≤ 0.35× notify-send: {t_ns:.2f}× "
                   f"{verdict(t_ns <= 0.35)}; ≤ 0.9× one dbus-send call: {t_ds:.2f}× {verdict(t_ds <= 0.9)}"]
    table("P1 one toast from a script, whole process (ms; hyperfine -N, %d runs each)" % len(runs[0]["results"][0]["times"]),
          ["command", "median", "mean", "σ", "min", "max", "toastkit/this"], rows,
          ["toastkit/this: the agent row over each row",
           f"target toastkit send --no-agent ≤ 1.3× C one-shot: {c_ratio:.2f}× {verdict(c_ratio <= 1.3)}",
           f"target toastkit send through a running agent ≤ 0.5× notify-send: {ns_ratio:.2f}× "
           f"{verdict(ns_ratio <= 0.5)}"] + issue39)


def p2(by):
    labels = ["Swift library", "Swift raw", "Swift raw (pool)", "desktop-notifier", "notify-rust", "python3-dbus", "C"]
    data = {l: by.get(("P2", l), []) for l in labels}
    if not any(data.values()):
        return
    first = next(v[0] for v in data.values() if v)
    rows = []
    meds = {}
    for l in labels:
        runs = data[l]
        if not runs:
            continue
        m = {
            "seq": med([r["sequential"]["calls_per_s"] for r in runs]),
            "seq_med": med([r["sequential"]["median_us"] for r in runs]),
            "seq_p99": med([r["sequential"]["p99_us"] for r in runs]),
            "seq_cpu": med([r["sequential"]["cpu_us_per_call"] for r in runs]),
            "pipe": med([r["pipelined"]["calls_per_s"] for r in runs]),
            "pipe_cpu": med([r["pipelined"]["cpu_us_per_call"] for r in runs]),
            "burst": med([r.get("burst", {}).get("calls_per_s") for r in runs]),
        }
        meds[l] = m
        rows.append([l, len(runs), fmt(m["seq"], 0), fmt(m["seq_med"]), fmt(m["seq_p99"]), fmt(m["seq_cpu"]),
                     fmt(m["pipe"], 0), fmt(m["pipe_cpu"]), fmt(m["burst"], 0)])
    table(f"P2 library burst: {first['calls']} Notify per mode, pipelined window {first['window']} "
          f"(median of rounds)",
          ["client", "rounds", "seq calls/s", "seq median µs", "seq p99 µs", "seq cpu µs/call",
           "pipe calls/s", "pipe cpu µs/call", "burst calls/s"], rows)
    lib = meds.get("Swift library")
    rows = []
    notes = []
    for who in ("Swift library", "Swift raw", "Swift raw (pool)", "C"):
        if who not in meds:
            continue
        for peer in ("C", "desktop-notifier", "notify-rust", "python3-dbus", "Swift raw", "Swift raw (pool)"):
            if who == "C" and peer not in ("desktop-notifier", "notify-rust"):  # the libraries apps pick instead
                continue
            if peer == who or peer not in meds:
                continue
            rows.append([f"{who} / {peer}", fmt(meds[who]["seq"] / meds[peer]["seq"], 2),
                         fmt(meds[who]["pipe"] / meds[peer]["pipe"], 2)])
    table("P2 ratios of calls/s (above 1: faster than the peer)", ["ratio", "sequential", "pipelined"], rows)
    # Issue 44's targets (issue 22's, 0.9x the C loop and 1.5x desktop-notifier, were above what any client here
    # reaches): at least the libraries an app developer would pick instead, and 0.9x the raw wire on the library's
    # own threading; the C loop stays in the table as the floor.
    for peer, goal in (("desktop-notifier", 1.0), ("notify-rust", 1.0), ("Swift raw (pool)", 0.9)):
        if lib and peer in meds:
            s, p = lib["seq"] / meds[peer]["seq"], lib["pipe"] / meds[peer]["pipe"]
            print(f"target library ≥ {goal}× {peer} (issue 44): sequential {s:.2f}× {verdict(s >= goal)}, "
                  f"pipelined {p:.2f}× {verdict(p >= goal)}\n")


def p3(by):
    runs = by.get(("P3", "swift"))
    if not runs:
        return
    d = runs[0]
    rows = [[name, d[key]["samples"], fmt(d[key]["median_us"]), fmt(d[key]["p90_us"]), fmt(d[key]["p99_us"]),
             fmt(d[key]["max_us"])]
            for key, name in (("library", "ToastCenter action handler"), ("wire", "D-Bus layer only (subscription)"))]
    m = d["library"]["median_us"]
    table("P3 action latency: server emits ActionInvoked → Swift handler runs (µs)",
          ["path", "samples", "median", "p90", "p99", "max"], rows,
          [f"target median < 500 µs: {m:.1f} µs {verdict(m < 500)}"])


def p4(by):
    cli = {l: by.get(("P4cli", l), []) for l in ("toastkit send", "notify-send", "gdbus call", "C one-shot")}
    if any(cli.values()):
        meds = {l: med([r["maxrss_kib"] for r in v]) for l, v in cli.items() if v}
        tk = meds["toastkit send"]
        rows = [[l, len(cli[l]), fmt(m / 1024, 1), fmt(tk / m, 2)] for l, m in meds.items()]
        table("P4 peak RSS of one toast from a script (MiB, median of runs; wait4 ru_maxrss)",
              ["command", "runs", "peak RSS MiB", "toastkit/this"], rows,
              [f"no numeric target; toastkit send uses {tk / meds['notify-send']:.2f}× notify-send's peak RSS"])
    lib = by.get(("P4lib", "swift"))
    if lib:
        d = lib[0]
        base = d["baseline"]["rss_kib"]
        rows = [["baseline (after 1 warm-up batch)", fmt(base / 1024, 2), fmt(d["baseline"]["hwm_kib"] / 1024, 2),
                 "-", "-"]]
        for p in d["points"]:
            rows.append([f"after {p['toasts']:,} toasts", fmt(p["rss_kib"] / 1024, 2), fmt(p["hwm_kib"] / 1024, 2),
                         fmt((p["rss_kib"] - base) / 1024, 2), fmt(p["seconds"], 1)])
        pts = d["points"]
        ref = next((p for p in pts if p["toasts"] >= 10000), pts[0])
        growth = pts[-1]["rss_kib"] - ref["rss_kib"]
        per = growth * 1024 / max(1, pts[-1]["toasts"] - ref["toasts"])
        table(f"P4 library RSS: toasts presented and ended in batches of {d['batch']} (MiB)",
              ["point", "VmRSS", "VmHWM", "Δ vs baseline", "elapsed s"], rows,
              [f"target flat: growth from {ref['toasts']:,} to {pts[-1]['toasts']:,} toasts = {growth / 1024:.2f} MiB "
               f"({per:.1f} B/toast); PASS when ≤ 1 MiB: {verdict(growth <= 1024)}"])


def p5(by):
    rows = []
    lib = None
    for label in ("library", "toastkit send --wait", "toastkit agent", "notify-send --wait"):
        runs = by.get(("P5", label))
        if not runs:
            continue
        d = runs[0]
        if label == "library":
            lib = d["cpu_us"]
        rows.append([label, fmt(d["wall_s"], 1), fmt(d["cpu_us"] / 1e3, 3),
                     fmt(100 * d["cpu_us"] / 1e6 / d["wall_s"], 4)])
    if not rows:
        return
    lib_line = "-"
    if lib is not None:
        wall = by[("P5", "library")][0]["wall_s"]
        limit = 10000 * wall / 10  # 10 ms per 10 s: 0.1 % of a core
        lib_line = f"{lib / 1e3:.3f} ms over {wall:.1f} s {verdict(lib <= limit)}"
    table("P5 idle: CPU time while holding one indefinite toast",
          ["process", "window s", "CPU ms", "% of a core"], rows,
          ["library: getrusage of toastkit-benchmark over the window; the CLIs: /proc/PID/stat utime+stime "
           "(10 ms ticks), from 1 s after start",
           f"target library ≈ 0 (≤ 10 ms per 10 s): {lib_line}"])


def p6(by):
    lib = by.get(("P6", "Swift library"), [])
    c = by.get(("P6", "C"), [])
    if not lib and not c:
        return
    rows = []
    if lib:
        rows.append(["Swift library (ToastCenter.present, one id)", len(lib),
                     fmt(med([r["replace"]["present_us_per_call"] for r in lib]), 2),
                     fmt(med([r["replace"]["present_cpu_us_per_call"] for r in lib]), 2),
                     fmt(med([r["replace"]["notify_calls"] for r in lib]), 0),
                     fmt(med([r["replace"]["final_ms"] for r in lib]), 1)])
    if c:
        rows.append(["C loop (every replacement sent, ≤ 64 in flight)", len(c), "-", "-",
                     fmt(med([r["notify_calls"] for r in c]), 0), fmt(med([r["final_ms"] for r in c]), 1)])
    notes = []
    if lib and c:
        present = med([r["replace"]["present_us_per_call"] for r in lib])
        ratio = med([r["replace"]["final_ms"] for r in lib]) / med([r["final_ms"] for r in c])
        calls = med([r["replace"]["notify_calls"] for r in lib])
        notes = [f"target final text ≤ 0.2× the C loop: {ratio:.2f}× {verdict(ratio <= 0.2)}",
                 f"aim present ≤ 5 µs: {present:.2f} µs {verdict(present <= 5)}; Notify calls {calls:,.0f} of "
                 f"{lib[0]['calls']:,} presents (bounded by round trips)"]
    table(f"P6 replace storm: one id replaced {(lib or c)[0]['calls']:,} times in a loop (median of rounds)",
          ["client", "rounds", "present µs", "present cpu µs", "Notify calls", "final text ms"], rows, notes)


def p7(by):
    cold, warm = by.get(("P7", "cold")), by.get(("P7", "warm"))
    if not cold or not warm:
        return
    results = cold[0]["results"] + warm[0]["results"]
    rows = [[r["command"], fmt(r["median"] * 1e3, 2), fmt(r["mean"] * 1e3, 2), fmt(r["min"] * 1e3, 2),
             fmt(r["max"] * 1e3, 2)] for r in results]
    table("P7 the agent's cold start (ms; hyperfine -N, %d runs each)" % len(results[0]["times"]),
          ["command", "median", "mean", "min", "max"], rows,
          ["cold: before each run the agent is stopped and its saved toasts removed; the bus activates a new one "
           "from its service file (scripts/dbus)"])


def p8(by):
    runs = by.get(("P8", "agent"))
    if not runs:
        return
    empty = med([r["present_us_empty"] for r in runs])
    full = med([r["present_us_queued"] for r in runs])
    ratio = full / empty
    rss = med([r.get("agent_rss_kib", 0) for r in runs]) / 1024
    hwm = med([r.get("agent_hwm_kib", 0) for r in runs]) / 1024
    table(f"P8 one Present to a running agent, its application's queue empty vs {runs[0]['queued']:,} waiting "
          f"(µs per call, median of {len(runs)} rounds)",
          ["queue", "Present µs"], [["empty", fmt(empty, 1)], [f"{runs[0]['queued']:,} waiting", fmt(full, 1)]],
          [f"target ≤ 1.2× with the queue full: {ratio:.2f}× {verdict(ratio <= 1.2)}",
           f"the agent's memory with the queue full: {rss:.1f} MiB resident, {hwm:.1f} MiB at its peak"])


def p9(by):
    runs = by.get(("P9", "run"))
    if not runs:
        return
    results = runs[0]["results"]
    rows = [[r["command"], fmt(r["median"] * 1e3, 1), fmt(r["mean"] * 1e3, 1), fmt(r["min"] * 1e3, 1),
             fmt((r["user"] + r["system"]) * 1e3, 1)] for r in results]
    if len(results) < 4:  # an older run: the command alone, then through run
        ratio = results[1]["median"] / results[0]["median"]
        table("P9 a chatty command through `toastkit run` (ms; hyperfine, %d runs each)" % len(results[0]["times"]),
              ["command", "median", "mean", "min", "CPU"], rows,
              [f"target ≤ 1.2× the command alone: {ratio:.2f}× {verdict(ratio <= 1.2)}"])
        return
    null, piped, run_null, run_piped = results[:4]

    def cpu(r):
        return r["user"] + r["system"]

    ratio = run_piped["median"] / piped["median"]
    table("P9 a chatty command through `toastkit run` (ms; hyperfine, %d runs each; CPU: user + system, mean)"
          % len(results[0]["times"]),
          ["command", "median", "mean", "min", "CPU"], rows,
          [f"target ≤ 1.2× the command alone, output to a pipe (`| cat`) both ways: {ratio:.2f}× "
           f"(CPU {cpu(run_piped) / cpu(piped):.2f}×) {verdict(ratio <= 1.2)}",
           f"run to /dev/null against the command into a pipe (one pipe, one reader each): "
           f"{run_null['median'] / piped['median']:.2f}× (CPU {cpu(run_null) / cpu(piped):.2f}×)",
           f"against the command to /dev/null (no pipe at all; `seq | cat` is "
           f"{piped['median'] / null['median']:.2f}× it): {run_null['median'] / null['median']:.2f}×"])


def p10(by):
    runs = by.get(("P10", "schedules"))
    if not runs:
        return
    kept = runs[0]["existing"]
    empty, full = med([r["put_us_empty"] for r in runs]), med([r["put_us_full"] for r in runs])
    rows = [["none", fmt(empty, 1), fmt(med([r["put_us_empty_p90"] for r in runs]), 1),
             fmt(med([r["put_us_empty_mean"] for r in runs]), 1)],
            [f"{kept:,}", fmt(full, 1), fmt(med([r["put_us_full_p90"] for r in runs]), 1),
             fmt(med([r["put_us_full_mean"] for r in runs]), 1)]]
    ratio = full / empty
    fill = med([r["fill_ms"] for r in runs]) / 1000
    table(f"P10 one schedule written (ScheduleStore.put, what `send --in` costs the agent), none kept vs {kept:,} "
          f"(µs per put, median of {len(runs)} rounds of {runs[0]['calls']} puts into each)",
          ["schedules kept", "median", "p90", "mean"], rows,
          [f"target ≤ 1.2× with {kept:,} kept (issue 39): {ratio:.2f}× {verdict(ratio <= 1.2)}",
           f"writing the {kept:,}, one put each: {fill:.1f} s"])


def main():
    by = load(sys.argv[1])
    for f in (p1, p2, p3, p4, p5, p6, p7, p8, p9, p10):
        f(by)


if __name__ == "__main__":
    main()
