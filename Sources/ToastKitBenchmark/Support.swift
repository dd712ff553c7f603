import BenchmarkSupport
import DBus
import Foundation
import Glibc
import Synchronization

// MARK: Errors and output

func fail(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("toastkit-benchmark: \(message)\n".utf8))
    exit(code)
}

/// A JSON number with one decimal (or `null`).
func number(_ value: Double?) -> String {
    guard let value, value.isFinite else { return "null" }
    return String(format: "%.1f", value)
}

/// One JSON object on one line from ordered key/value pairs whose values are already JSON.
func jsonObject(_ pairs: [(String, String)]) -> String {
    "{" + pairs.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
}

func jsonString(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

// MARK: Clocks and process figures

/// `VmRSS` and `VmHWM` from /proc/self/status, in KiB.
func residentKiB() -> (rss: Int, hwm: Int) {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
    var rss = 0
    var hwm = 0
    for line in status.split(separator: "\n") {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 2, let value = Int(fields[1]) else { continue }
        if fields[0] == "VmRSS:" { rss = value }
        if fields[0] == "VmHWM:" { hwm = value }
    }
    return (rss, hwm)
}

// MARK: The instant server's extras

/// The control connection to scripts/benchmarks/instant-notifications-server: its bench interface.
struct ServerControl: Sendable {
    let connection: DBusConnection
    private let destination: BusName = "org.freedesktop.Notifications"
    private let path: ObjectPath = "/org/freedesktop/Notifications"
    private let interface: InterfaceName = "org.toastkit.Bench"

    init(bus: BusAddress) async throws {
        connection = try await DBusConnection.connect(to: bus)
    }

    /// Makes the server emit `ActionInvoked(id, key)` to the caller of `Notify(id)`; returns the server's
    /// CLOCK_MONOTONIC stamp (ns) taken just before the signal was queued.
    func emitAction(id: UInt32, key: String) async throws -> UInt64 {
        let reply = try await connection.call(
            destination: destination, path: path, interface: interface, member: "EmitAction",
            arguments: [.uint32(id), .string(key)])
        guard let stamp = try reply.arguments("t").first?.uint64Value else {
            throw BenchmarkError("EmitAction answered no t (is the server instant-notifications-server?)")
        }
        return stamp
    }

    /// (Notify calls, CloseNotification calls) the server has received so far.
    func stats() async throws -> (notifies: UInt64, closes: UInt64) {
        let reply = try await connection.call(
            destination: destination, path: path, interface: interface, member: "Stats")
        let values = try reply.arguments("tt")
        guard let notifies = values[0].uint64Value, let closes = values[1].uint64Value else {
            throw BenchmarkError("Stats answered no (tt)")
        }
        return (notifies, closes)
    }

    /// Waits until the server has received at least `closes` CloseNotification calls.
    func waitForCloses(atLeast closes: UInt64, timeout: Duration = .seconds(120)) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await stats().closes < closes {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError("the server got \(try await stats().closes) of \(closes) CloseNotification calls")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

// MARK: A one-shot latch

/// Carries one value from a handler (any thread) to one waiter, whichever comes first.
final class Latch: Sendable {
    private struct State {
        var value: UInt64?
        var waiter: CheckedContinuation<UInt64, Never>?
    }
    private let state = Mutex(State())

    func fire(_ value: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<UInt64, Never>? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    func wait() async -> UInt64 {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> UInt64? in
                if let value = state.value { return value }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Waits at most `timeout`; 0 means it timed out.
    func wait(timeout: Duration) async -> UInt64 {
        let watchdog = Task { [self] in
            try? await Task.sleep(for: timeout)
            fire(0)
        }
        defer { watchdog.cancel() }
        return await wait()
    }
}
