import BenchmarkSupport
import DBus
import Glibc

// P8, the agent with a long queue: the cost of one `Present` to a running agent (`org.toastkit.Agent1`) while its
// application's queue is empty, and again while 10,000 toasts wait in it (issue 18 §6: at most 1.2× the first).
// Each timed `Present` is a new timed toast of the same application, so it joins the queue; the agent writes it
// ahead to its journal before it answers. The toasts are closed at the end.

struct AgentQueueFigures {
    var emptyMicroseconds: Double
    var fullMicroseconds: Double
    var queued: Int

    var json: String {
        jsonObject([
            ("queued", String(queued)), ("present_us_empty", number(emptyMicroseconds)),
            ("present_us_queued", number(fullMicroseconds)),
            ("ratio", number(fullMicroseconds / max(emptyMicroseconds, 0.001))),
        ])
    }
}

func agentQueue(bus: BusAddress, calls: Int, queued: Int) async throws -> AgentQueueFigures {
    let connection = try await DBusConnection.connect(to: bus)
    defer { connection.close() }
    var serial = 0
    func present(_ title: String) async throws {
        serial += 1
        _ = try await connection.call(
            DBusMethodCall(
                destination: "org.toastkit.Agent1", path: "/org/toastkit/Agent1", interface: "org.toastkit.Agent1",
                member: "Present",
                arguments: [
                    .variantDictionary([
                        ("title", .string(title)), ("id", .string("bench-\(serial)")), ("duration", .double(3600)),
                        ("app-name", .string("bench-queue")),
                    ])
                ]), timeout: .seconds(30))
    }
    func timedPresents() async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        for index in 0..<calls { try await present("Timed \(index)") }
        let elapsed = clock.now - start
        return (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
            / Double(calls)
    }
    // The front toast first (it is shown; the rest wait behind it), then a warm-up.
    try await present("Front")
    for index in 0..<100 { try await present("Warm-up \(index)") }
    let empty = try await timedPresents()
    while serial < queued { try await present("Filler \(serial)") }
    let full = try await timedPresents()
    for index in 1...serial {
        _ = try? await connection.call(
            DBusMethodCall(
                destination: "org.toastkit.Agent1", path: "/org/toastkit/Agent1", interface: "org.toastkit.Agent1",
                member: "Close", arguments: [.string("bench-\(index)")]), timeout: .seconds(30))
    }
    return AgentQueueFigures(emptyMicroseconds: empty, fullMicroseconds: full, queued: serial - calls)
}
