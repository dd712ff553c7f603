// dbus-benchmark: method calls per second through the DBus package, against an exported object on a bus.
//
// Not run by the tests. `scripts/bench-dbus.sh` builds it in release mode and compares it with the raw libdbus
// client in scripts/benchmarks/, both against the same C server (`--server external`).
//
//   sequential: N calls one after another (each awaited), calls/s, median and p99 latency;
//   pipelined:  N calls with up to W outstanding (a task group refilled as calls finish), calls/s.
//
// Each call builds a fresh message and checks its reply. `cpu µs/call` is the whole process's user+system time
// (getrusage) per call: with the in-process server it includes the server's connection too.

import BenchmarkSupport
import DBus
import Foundation
import Glibc
import Synchronization

// MARK: Options

struct Options {
    enum Server: Equatable {
        /// An object exported by a second connection of this process.
        case inProcess
        /// Another process that owns `name` (e.g. scripts/benchmarks/instant-notifications-server --name org.toastkit.BenchServer).
        case external(name: String)
    }

    var address: String?
    var calls = 10_000
    var window = 64
    var warmup = 1_000
    var method = BenchMethod.ping
    var server = Server.inProcess
    var externalName = "org.toastkit.BenchServer"
    var json = false
    var ioExecutor = true

    static let usage = """
        usage: dbus-benchmark [--address ADDR] [--calls N] [--window W] [--warmup N] [--method ping|notify]
                              [--server swift|external] [--server-name NAME] [--json]

          --address ADDR     the bus (default: DBUS_SESSION_BUS_ADDRESS)
          --calls N          timed calls per mode (default 10000)
          --window W         calls in flight in the pipelined mode (default 64)
          --warmup N         untimed calls before each mode's measurement (default 1000)
          --method M         ping: Ping(u) -> u (default); notify: Notify(susssasa{sv}i) -> u
          --server swift     serve the object from a second connection of this process (default)
          --server external  call the object of another process, by bus name (see --server-name)
          --server-name NAME the external server's name (default org.toastkit.BenchServer)
          --executor E       io: run the client on the connection's I/O thread (DBusConnection.executor,
                             default); global: on Swift's global executor
          --json             print one JSON line instead of the table
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var useExternal = false
        var index = 0
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
        while index < arguments.count {
            switch arguments[index] {
            case "--address": options.address = value()
            case "--calls": options.calls = count(value(), minimum: 1)
            case "--window": options.window = count(value(), minimum: 1)
            case "--warmup": options.warmup = count(value(), minimum: 0)
            case "--json": options.json = true
            case "--executor":
                switch value() {
                case "io": options.ioExecutor = true
                case "global": options.ioExecutor = false
                case let other: fail("--executor takes io or global, not \(other)", code: 2)
                }
            case "--server-name": options.externalName = value()
            case "--method":
                switch value() {
                case "ping": options.method = .ping
                case "notify": options.method = .notify
                case let other: fail("--method takes ping or notify, not \(other)", code: 2)
                }
            case "--server":
                switch value() {
                case "swift", "in-process": useExternal = false
                case "external": useExternal = true
                case let other: fail("--server takes swift or external, not \(other)", code: 2)
                }
            case "-h", "--help":
                print(usage)
                exit(0)
            case let other:
                fail("unknown argument \(other)\n\n\(usage)", code: 2)
            }
            index += 1
        }
        if useExternal { options.server = .external(name: options.externalName) }
        return options
    }
}

enum BenchMethod: Sendable {
    case ping
    case notify

    var member: MemberName {
        switch self {
        case .ping: Self.pingMember
        case .notify: Self.notifyMember
        }
    }
    private static let pingMember: MemberName = "Ping"
    private static let notifyMember: MemberName = "Notify"

    var title: String {
        switch self {
        case .ping: "Ping(u) -> u"
        case .notify: "Notify(susssasa{sv}i) -> u"
        }
    }

    var jsonName: String {
        switch self {
        case .ping: "Ping"
        case .notify: "Notify"
        }
    }

    /// The arguments of call number `index` (the same as the C client's).
    func arguments(_ index: UInt32) -> [DBusValue] {
        switch self {
        case .ping:
            [.uint32(index)]
        case .notify:
            [
                .string("dbus-benchmark"), .uint32(index), .string(""), .string("Benchmark"),
                .string("A Notify-shaped call"), .strings([]),
                .variantDictionary(["urgency": .byte(1), "category": .string("bench")]), .int32(-1),
            ]
        }
    }
}

func fail(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("dbus-benchmark: \(message)\n".utf8))
    exit(code)
}

// MARK: The in-process server

/// Exports org.toastkit.Bench at /bench on its own connection and owns a per-process name.
func startInProcessServer(address: BusAddress) async throws -> (connection: DBusConnection, name: String) {
    let connection = try await DBusConnection.connect(to: address)
    let notifications = Atomic<UInt32>(0)
    var object = DBusObject(interface: "org.toastkit.Bench")
    object.method("Ping") { call in
        guard let value = (try? call.message.arguments("u"))?.first?.uint32Value else {
            call.fail(DBusError(name: DBusError.Name.invalidArgs, message: "Ping takes (u)"))
            return
        }
        call.reply([.uint32(value)])
    }
    object.method("Notify") { call in
        guard (try? call.message.arguments("susssasa{sv}i")) != nil else {
            call.fail(DBusError(name: DBusError.Name.invalidArgs, message: "Notify takes (susssasa{sv}i)"))
            return
        }
        call.reply([.uint32(notifications.add(1, ordering: .relaxed).newValue)])
    }
    connection.export(object, at: "/bench")
    let name = "org.toastkit.Bench.p\(getpid())"
    let owned = try await connection.bus.requestName(try BusName(validating: name), flags: [.doNotQueue])
    guard owned == .primaryOwner else { throw BenchmarkError("could not own \(name): \(owned)") }
    return (connection, name)
}

// MARK: The client

struct Client: Sendable {
    let connection: DBusConnection
    let destination: BusName
    let method: BenchMethod
    // Validated once, as a long-lived client would keep them (a literal argument is validated on every call).
    let path: ObjectPath = "/bench"
    let interface: InterfaceName = "org.toastkit.Bench"

    /// One call, with its reply checked.
    func call(_ index: Int) async throws {
        let value = UInt32(truncatingIfNeeded: index)
        let reply = try await connection.call(
            destination: destination, path: path, interface: interface, member: method.member,
            arguments: method.arguments(value))
        guard let answer = try reply.arguments("u").first?.uint32Value else {
            throw BenchmarkError("the reply has no u")
        }
        if method == .ping && answer != value {
            throw BenchmarkError("Ping(\(value)) answered \(answer)")
        }
    }

    func sequential(calls: Int, measureLatency: Bool) async throws -> Figures {
        try await sequentialLoop(calls: calls, measureLatency: measureLatency) { try await call($0) }
    }

    func pipelined(calls: Int, window: Int) async throws -> Figures {
        try await pipelinedLoop(calls: calls, window: window) { try await call($0) }
    }
}

// MARK: Output

func number(_ value: Double?) -> String {
    value.map { String(format: "%.1f", $0) } ?? "-"
}

func padded(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

func printTable(options: Options, serverTitle: String, sequential: Figures, pipelined: Figures) {
    let calls = String(options.calls)
    print("client       Swift (DBus package)")
    print("server       \(serverTitle)")
    print("method       \(options.method.title)")
    print("calls        \(options.calls) (warm-up \(options.warmup))")
    print("window       \(options.window)")
    print("")
    print("mode            calls      calls/s    median µs       p99 µs    cpu µs/call")
    for (mode, figures) in [("sequential", sequential), ("pipelined", pipelined)] {
        let columns = [
            mode.padding(toLength: 12, withPad: " ", startingAt: 0), padded(calls, 9),
            padded(number(figures.callsPerSecond), 13), padded(number(figures.medianMicroseconds), 13),
            padded(number(figures.p99Microseconds), 13), padded(number(figures.cpuMicrosecondsPerCall), 15),
        ]
        print(columns.joined())
    }
}

func printJSON(options: Options, serverName: String, sequential: Figures, pipelined: Figures) {
    print(
        """
        {"client":"swift","server":"\(serverName)","method":"\(options.method.jsonName)",\
        "calls":\(options.calls),"window":\(options.window),"warmup":\(options.warmup),\
        "sequential":{"calls_per_s":\(number(sequential.callsPerSecond)),\
        "median_us":\(number(sequential.medianMicroseconds)),"p99_us":\(number(sequential.p99Microseconds)),\
        "cpu_us_per_call":\(number(sequential.cpuMicrosecondsPerCall))},\
        "pipelined":{"calls_per_s":\(number(pipelined.callsPerSecond)),\
        "cpu_us_per_call":\(number(pipelined.cpuMicrosecondsPerCall))}}
        """)
}

// MARK: Main

func run(_ options: Options) async throws {
    let bus: BusAddress = options.address.map { .address($0) } ?? .session
    var server: DBusConnection?
    let serverName: String
    let serverTitle: String
    switch options.server {
    case .inProcess:
        let started = try await startInProcessServer(address: bus)
        server = started.connection
        serverName = started.name
        serverTitle = "\(started.name) (Swift, in this process)"
    case .external(let name):
        serverName = name
        serverTitle = "\(name) (external)"
    }
    let connection = try await DBusConnection.connect(to: bus)
    let client = Client(
        connection: connection, destination: try BusName(validating: serverName), method: options.method)

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

    if options.json {
        printJSON(options: options, serverName: serverName, sequential: sequential, pipelined: pipelined)
    } else {
        printTable(options: options, serverTitle: serverTitle, sequential: sequential, pipelined: pipelined)
    }
    connection.close()
    server?.close()
}

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
do {
    try await run(options)
} catch {
    fail("\(error)")
}
