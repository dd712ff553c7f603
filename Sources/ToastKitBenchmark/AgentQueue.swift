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
    /// The agent's resident memory with the queue full, and its peak (KiB, /proc/PID/status).
    var residentKiB: Int
    var peakKiB: Int

    var json: String {
        jsonObject([
            ("queued", String(queued)), ("present_us_empty", number(emptyMicroseconds)),
            ("present_us_queued", number(fullMicroseconds)),
            ("ratio", number(fullMicroseconds / max(emptyMicroseconds, 0.001))),
            ("agent_rss_kib", String(residentKiB)), ("agent_hwm_kib", String(peakKiB)),
        ])
    }
}

/// `VmRSS` and `VmHWM` of process `pid`, in KiB (0 when unreadable).
private func memory(of pid: UInt32) -> (resident: Int, peak: Int) {
    guard let file = fopen("/proc/\(pid)/status", "r") else { return (0, 0) }
    defer { fclose(file) }
    var resident = 0
    var peak = 0
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let value = Int(text.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        if text.hasPrefix("VmRSS:") { resident = value }
        if text.hasPrefix("VmHWM:") { peak = value }
    }
    return (resident, peak)
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
    let info = try await connection.call(
        DBusMethodCall(
            destination: "org.toastkit.Agent1", path: "/org/toastkit/Agent1", interface: "org.toastkit.Agent1",
            member: "GetInfo"))
    let pid = try info.arguments("a{sv}")[0].variantDictionaryValue?["pid"]?.uint32Value ?? 0
    let (resident, peak) = memory(of: pid)
    for index in 1...serial {
        _ = try? await connection.call(
            DBusMethodCall(
                destination: "org.toastkit.Agent1", path: "/org/toastkit/Agent1", interface: "org.toastkit.Agent1",
                member: "Close", arguments: [.string("bench-\(index)")]), timeout: .seconds(30))
    }
    return AgentQueueFigures(
        emptyMicroseconds: empty, fullMicroseconds: full, queued: serial - calls, residentKiB: resident, peakKiB: peak)
}
