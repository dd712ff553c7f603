// toastkit-benchmark: the Swift side of `scripts/bench.sh` (issue 6 §1). Not run by the tests.
//
//   burst  (P2)  N presents through ToastCenter + DesktopNotificationPresenter (`--client library`), or N raw
//                Notify calls through NotificationsClient (`--client raw`): sequential and pipelined (≤ W in flight);
//                the library also as one burst (all presented at once, then all awaited).
//   action (P3)  server emits ActionInvoked → the toast action's handler runs: median, p90, p99, max; and the same
//                through the D-Bus layer alone ("wire").
//   memory (P4)  VmRSS/VmHWM after 1k, 10k, 100k toasts presented and ended (in batches).
//   idle   (P5)  CPU time of this process over a window while it holds one indefinite toast.
//   replace (P6) one id presented N times in a loop: the cost of each present, the Notify calls the server got and
//                the time until it has the final text.
//   agent-queue (P8) Present to a running agent with its application's queue empty, then with 10,000 waiting.
//   schedules (P10) one ScheduleStore.put (a `send --in`'s write) with no other schedule, then with 10,000 (no bus).
//   markup       BodyMarkup.sanitize/strip on 64 KiB of `<`, of unclosed nested tags and of ordinary markup
//                (issue 12 item 9; no bus).
//
// Every mode but markup and schedules needs scripts/benchmarks/instant-notifications-server on the bus (it owns
// org.freedesktop.Notifications and has the org.toastkit.Bench extras: EmitAction, Stats). Each prints one JSON line.

import BenchmarkSupport
import DBus
import Foundation
import Glibc

struct Options {
    enum Mode: String { case burst, action, memory, idle, replace, markup, schedules, agentQueue = "agent-queue" }
    enum Client: String { case library, raw }

    var mode = Mode.burst
    var address: String?
    var calls = 10_000
    var window = 64
    var warmup = 1_000
    var client = Client.library
    var ioExecutor = true
    var iterations = 1_000
    var checkpoints = [1_000, 10_000, 100_000]
    var batch = 1_000
    var seconds = 10.0
    var bytes = 65_536
    /// burst, library client: which timed modes run (all by default; for profiling one of them).
    var modes: Set<String> = ["sequential", "pipelined", "burst"]

    static let usage = """
        usage: toastkit-benchmark burst  [--client library|raw] [--calls N] [--window W] [--warmup N]
                                         [--executor io|global] [--modes LIST] [--address ADDR]
               toastkit-benchmark action [--iterations N] [--warmup N] [--address ADDR]
               toastkit-benchmark memory [--checkpoints 1000,10000,100000] [--batch B] [--address ADDR]
               toastkit-benchmark idle   [--seconds S] [--address ADDR]
               toastkit-benchmark replace [--calls N] [--warmup N] [--address ADDR]
               toastkit-benchmark markup [--bytes N] [--iterations R]
               toastkit-benchmark agent-queue [--calls N] [--checkpoints QUEUED] [--address ADDR]
               toastkit-benchmark schedules [--calls N] [--checkpoints EXISTING]

          --address ADDR   the bus (default: DBUS_SESSION_BUS_ADDRESS); instant-notifications-server must run on it
          --client C       library: ToastCenter + DesktopNotificationPresenter (default); raw: NotificationsClient
          --calls N        timed calls per mode (default 10000; schedules: timed puts per store, default 200)
          --window W       calls in flight in the pipelined mode (default 64)
          --warmup N       untimed calls (burst) or iterations (action) first (default 1000 / 50)
          --executor E     raw client only: io runs the loop on the connection's I/O thread (default), global on
                           Swift's global executor
          --modes LIST     burst with the library client: the timed modes to run, of sequential,pipelined,burst
                           (default all; the others report 0, for profiling one of them)
          --iterations N   action: timed iterations (default 1000)
          --checkpoints L  memory: cumulative toast counts at which RSS is read; agent-queue, schedules: the
                           toasts waiting, the schedules kept (the last number)
          --batch B        memory: toasts presented at once per batch (default 1000)
          --seconds S      idle: the measured window (default 10)
          --bytes N        markup: the size of each input (default 65536); --iterations: runs, best kept (default 3)
        Prints one JSON line.
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var index = 0
        var warmupGiven = false
        var iterationsGiven = false
        var callsGiven = false
        func value() -> String {
            index += 1
            guard index < arguments.count else { fail("\(arguments[index - 1]) needs a value\n\n\(usage)", code: 2) }
            return arguments[index]
        }
        func count(_ text: String, minimum: Int) -> Int {
            guard let number = Int(text), number >= minimum else {
                fail("\(arguments[index - 1]) takes a number ≥ \(minimum), not \(text)", code: 2)
            }
            return number
        }
        guard let first = arguments.first, let mode = Mode(rawValue: first) else {
            if arguments.first == "-h" || arguments.first == "--help" {
                print(usage)
                exit(0)
            }
            fail(
                "the first argument is the mode: burst, action, memory, idle, replace, markup, schedules or agent-queue\n\n"
                    + usage,
                code: 2)
        }
        options.mode = mode
        index = 1
        while index < arguments.count {
            switch arguments[index] {
            case "--address": options.address = value()
            case "--calls":
                options.calls = count(value(), minimum: 1)
                callsGiven = true
            case "--window": options.window = count(value(), minimum: 1)
            case "--warmup":
                options.warmup = count(value(), minimum: 0)
                warmupGiven = true
            case "--iterations":
                options.iterations = count(value(), minimum: 1)
                iterationsGiven = true
            case "--modes": options.modes = Set(value().split(separator: ",").map(String.init))
            case "--batch": options.batch = count(value(), minimum: 1)
            case "--bytes": options.bytes = count(value(), minimum: 1)
            case "--seconds":
                guard let seconds = Double(value()), seconds > 0 else { fail("--seconds takes a positive number") }
                options.seconds = seconds
            case "--checkpoints":
                let list = value().split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
                guard !list.isEmpty else { fail("--checkpoints takes a list of positive numbers", code: 2) }
                options.checkpoints = list
            case "--client":
                guard let client = Client(rawValue: value()) else { fail("--client takes library or raw", code: 2) }
                options.client = client
            case "--executor":
                switch value() {
                case "io": options.ioExecutor = true
                case "global": options.ioExecutor = false
                case let other: fail("--executor takes io or global, not \(other)", code: 2)
                }
            case "-h", "--help":
                print(usage)
                exit(0)
            case let other:
                fail("unknown argument \(other)\n\n\(usage)", code: 2)
            }
            index += 1
        }
        if mode == .action && !warmupGiven { options.warmup = 50 }
        if mode == .markup && !iterationsGiven { options.iterations = 3 }
        if mode == .schedules && !callsGiven { options.calls = 200 }
        return options
    }
}

func runBurst(_ options: Options, bus: BusAddress, control: ServerControl) async throws -> String {
    var pairs: [(String, String)] = [
        ("client", jsonString("swift-\(options.client.rawValue)")), ("calls", String(options.calls)),
        ("window", String(options.window)), ("warmup", String(options.warmup)),
    ]
    switch options.client {
    case .library:
        let (center, presenter) = LibraryClient.makeCenter(
            bus: bus, maxVisible: max(options.calls, options.warmup) + 1)
        defer { presenter.disconnect() }
        func client(_ round: Int) -> LibraryClient {
            LibraryClient(center: center, presenter: presenter, control: control, round: round)
        }
        if options.warmup > 0 {
            _ = try await client(0).sequential(calls: options.warmup, measureLatency: false)
            _ = try await client(1).pipelined(calls: options.warmup, window: options.window)
        }
        var skipped = await timed(calls: 1) {}
        (skipped.callsPerSecond, skipped.cpuMicrosecondsPerCall) = (0, 0)
        let sequential =
            options.modes.contains("sequential")
            ? try await client(2).sequential(calls: options.calls, measureLatency: true) : skipped
        let pipelined =
            options.modes.contains("pipelined")
            ? try await client(3).pipelined(calls: options.calls, window: options.window) : skipped
        let burst =
            options.modes.contains("burst")
            ? try await client(4).pipelined(calls: options.calls, window: options.calls) : skipped
        pairs += [("sequential", sequential.json), ("pipelined", pipelined.json), ("burst", burst.json)]
    case .raw:
        let connection = try await DBusConnection.connect(to: bus)
        defer { connection.close() }
        let client = RawClient(connection: connection)
        @concurrent func measure() async throws -> (Figures, Figures) {
            if options.warmup > 0 {
                _ = try await client.sequential(calls: options.warmup, measureLatency: false)
                _ = try await client.pipelined(calls: options.warmup, window: options.window)
            }
            let sequential = try await client.sequential(calls: options.calls, measureLatency: true)
            let pipelined = try await client.pipelined(calls: options.calls, window: options.window)
            return (sequential, pipelined)
        }
        let (sequential, pipelined) =
            options.ioExecutor
            ? try await withTaskExecutorPreference(connection.executor) { try await measure() }
            : try await measure()
        pairs += [
            ("executor", jsonString(options.ioExecutor ? "io" : "global")), ("sequential", sequential.json),
            ("pipelined", pipelined.json),
        ]
    }
    return jsonObject(pairs)
}

func run(_ options: Options) async throws -> String {
    if options.mode == .markup { return markupTimes(size: options.bytes, repeats: options.iterations) }
    if options.mode == .schedules {
        return try schedulePuts(calls: options.calls, existing: options.checkpoints.last ?? 10_000).json
    }
    if options.mode == .agentQueue {
        let bus: BusAddress = options.address.map { .address($0) } ?? .session
        return try await agentQueue(
            bus: bus, calls: options.calls, queued: options.checkpoints.last ?? 10_000
        ).json
    }
    let bus: BusAddress = options.address.map { .address($0) } ?? .session
    let control = try await ServerControl(bus: bus)
    defer { control.connection.close() }
    switch options.mode {
    case .burst:
        return try await runBurst(options, bus: bus, control: control)
    case .action:
        let library = try await actionLatencyThroughLibrary(
            bus: bus, control: control, iterations: options.iterations, warmup: options.warmup)
        let wire = try await actionLatencyOnWire(
            bus: bus, control: control, iterations: options.iterations, warmup: options.warmup)
        return jsonObject([("library", library.json), ("wire", wire.json)])
    case .memory:
        let (baseline, points) = try await memoryGrowth(
            bus: bus, control: control, checkpoints: options.checkpoints, batch: options.batch)
        return jsonObject([
            ("batch", String(options.batch)), ("baseline", baseline.json),
            ("points", "[" + points.map(\.json).joined(separator: ",") + "]"),
        ])
    case .markup, .agentQueue, .schedules:
        return markupTimes(size: options.bytes, repeats: options.iterations)
    case .idle:
        let (cpu, wall) = try await idleCPU(bus: bus, seconds: options.seconds)
        return jsonObject([("cpu_us", number(cpu)), ("wall_s", number(wall))])
    case .replace:
        let figures = try await replaceStorm(bus: bus, control: control, calls: options.calls, warmup: options.warmup)
        return jsonObject([
            ("client", jsonString("swift-library")), ("calls", String(options.calls)), ("replace", figures.json),
        ])
    }
}

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
do {
    print(try await run(options))
} catch {
    fail("\(error)")
}
