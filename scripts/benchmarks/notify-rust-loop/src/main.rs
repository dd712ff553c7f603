// notify-rust-loop: the notify-rust peer of benchmark P2 (scripts/bench.sh, issue 44).
//
// notify-rust (4.11 on zbus 5, as Debian 13 packages it) is the library a Rust app developer picks to send desktop
// notifications. This sends N notifications through its public API, with the same arguments as the other P2 clients
// (app "toastkit-benchmark", "Benchmark K", "A toast from the benchmark", urgency normal, 4,000 ms):
//   sequential: Notification::show(), one after another: calls/s, median and p99 latency;
//   pipelined:  Notification::show_async(), up to W outstanding (refilled as each one is answered), driven by
//               zbus::block_on, the executor notify-rust's own show() and async example use: calls/s.
// notify-rust opens a session-bus connection for every notification (its handle keeps it; here the handle is
// dropped once the call is answered, as an app that only shows a toast does): measured as the library is used.
// cpu µs/call is this process's user+system time (getrusage, all threads) per call. Prints the same JSON line as
// the other peers (scripts/benchmarks/p2_peer.py).
//
// Built by scripts/benchmarks/notify-rust-peer.sh, run by scripts/bench.sh.
// Usage: notify-rust-loop [--calls N] [--window W] [--warmup N] [--json]   (the bus: DBUS_SESSION_BUS_ADDRESS)

use futures_util::stream::{FuturesUnordered, StreamExt};
use notify_rust::{Notification, Urgency};
use std::process::exit;
use std::time::Instant;

struct Arguments {
    calls: usize,
    window: usize,
    warmup: usize,
    json: bool,
}

const USAGE: &str = "usage: notify-rust-loop [--calls N] [--window W] [--warmup N] [--json]";

fn arguments() -> Arguments {
    let mut a = Arguments { calls: 10000, window: 64, warmup: 1000, json: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> usize {
            match args.next().map(|v| v.parse::<usize>()) {
                Some(Ok(n)) => n,
                _ => fail(2, &format!("{name} takes a number\n{USAGE}")),
            }
        };
        match arg.as_str() {
            "--calls" => a.calls = number("--calls"),
            "--window" => a.window = number("--window"),
            "--warmup" => a.warmup = number("--warmup"),
            "--json" => a.json = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                exit(0)
            }
            other => fail(2, &format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if a.calls == 0 || a.window == 0 {
        fail(2, &format!("--calls and --window must be at least 1\n{USAGE}"));
    }
    a
}

fn fail(code: i32, message: &str) -> ! {
    eprintln!("notify-rust-loop: {message}");
    exit(code)
}

/// This process's user and system time so far, in µs (every thread's).
fn cpu_us() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        fail(1, "getrusage failed");
    }
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    us(usage.ru_utime) + us(usage.ru_stime)
}

/// Toast k, as an app builds it.
fn notification(k: usize) -> Notification {
    let mut n = Notification::new();
    n.appname("toastkit-benchmark")
        .summary(&format!("Benchmark {k}"))
        .body("A toast from the benchmark")
        .urgency(Urgency::Normal)
        .timeout(4000);
    n
}

struct Figures {
    calls_per_s: f64,
    cpu_us_per_call: f64,
    median_us: f64,
    p99_us: f64,
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn figures(calls: usize, started: Instant, cpu0: f64, mut latencies: Vec<f64>) -> Figures {
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = cpu_us() - cpu0;
    latencies.sort_by(f64::total_cmp);
    let (median_us, p99_us) = if latencies.is_empty() {
        (0.0, 0.0)
    } else {
        (percentile(&latencies, 0.5), percentile(&latencies, 0.99))
    };
    Figures { calls_per_s: calls as f64 / elapsed, cpu_us_per_call: cpu / calls as f64, median_us, p99_us }
}

fn sequential(calls: usize) -> Figures {
    let mut latencies = Vec::with_capacity(calls);
    let (cpu0, t0) = (cpu_us(), Instant::now());
    for k in 0..calls {
        let s = Instant::now();
        if let Err(error) = notification(k).show() {
            fail(1, &format!("show() failed at call {k}: {error}"));
        }
        latencies.push(s.elapsed().as_secs_f64() * 1e6);
    }
    figures(calls, t0, cpu0, latencies)
}

fn pipelined(calls: usize, window: usize) -> Figures {
    let (cpu0, t0) = (cpu_us(), Instant::now());
    zbus::block_on(async {
        let mut in_flight = FuturesUnordered::new();
        let mut next = 0;
        let mut done = 0;
        while done < calls {
            while next < calls && in_flight.len() < window {
                let n = notification(next);
                in_flight.push(async move { n.show_async().await });
                next += 1;
            }
            match in_flight.next().await {
                Some(Ok(_handle)) => done += 1,
                Some(Err(error)) => fail(1, &format!("show_async() failed after {done} answers: {error}")),
                None => unreachable!("calls remain, so some are in flight"),
            }
        }
    });
    figures(calls, t0, cpu0, Vec::new())
}

fn main() {
    let a = arguments();
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        fail(1, "no bus: set DBUS_SESSION_BUS_ADDRESS");
    }
    if a.warmup > 0 {
        sequential(a.warmup);
        pipelined(a.warmup, a.window);
    }
    let seq = sequential(a.calls);
    let pipe = pipelined(a.calls, a.window);
    let client = format!("notify-rust {}", option_env!("NOTIFY_RUST_VERSION").unwrap_or("4"));
    if a.json {
        println!(
            concat!(
                "{{\"client\":\"{}\",\"server\":\"org.freedesktop.Notifications\",\"method\":\"Notify\",",
                "\"calls\":{},\"window\":{},\"warmup\":{},",
                "\"sequential\":{{\"calls_per_s\":{:.1},\"median_us\":{:.1},\"p99_us\":{:.1},\"cpu_us_per_call\":{:.1}}},",
                "\"pipelined\":{{\"calls_per_s\":{:.1},\"cpu_us_per_call\":{:.1}}}}}"
            ),
            client, a.calls, a.window, a.warmup, seq.calls_per_s, seq.median_us, seq.p99_us, seq.cpu_us_per_call,
            pipe.calls_per_s, pipe.cpu_us_per_call
        );
    } else {
        println!(
            "{client}: sequential {:.1} calls/s (median {:.1} µs, p99 {:.1} µs); pipelined {:.1} calls/s",
            seq.calls_per_s, seq.median_us, seq.p99_us, pipe.calls_per_s
        );
    }
}
