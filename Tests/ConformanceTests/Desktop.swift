import DBus
import Foundation
import FreedesktopNotifications
import Glibc
import TestSupport
import Testing
import ToastModel

/// One scenario's private desktop: a private bus, Xvfb, the server, a bus monitor and a center with a desktop
/// presenter. Every scenario gets a fresh one, so no popup, pointer position (P10) or id of one scenario can touch
/// the next.
final class Desktop: Sendable {
    let kind: NotificationServerKind
    /// The matrix's column: the server and where its build comes from.
    let server: ConformanceServer
    let environment: NotificationEnvironment
    let bus: BusTraffic
    let toasts: ToastHarness
    let startedAt = ContinuousClock.now

    private init(environment: NotificationEnvironment, bus: BusTraffic, toasts: ToastHarness) {
        kind = environment.server
        server = environment.modern.map { .modern($0) } ?? .debian12(environment.server)
        self.environment = environment
        self.bus = bus
        self.toasts = toasts
    }

    static func start(_ kind: NotificationServerKind, maxVisible: Int = 1) async throws -> Desktop {
        try await start(.debian12(kind), maxVisible: maxVisible)
    }

    static func start(_ server: ConformanceServer, maxVisible: Int = 1) async throws -> Desktop {
        let environment = try await server.startEnvironment()
        do {
            let bus = try await BusTraffic(bus: environment.bus.address)
            return Desktop(
                environment: environment, bus: bus,
                toasts: ToastHarness(busAddress: environment.bus.address, maxVisible: maxVisible))
        } catch {
            try? await offPool { environment.stopAndWait() }
            throw error
        }
    }

    /// Stops the center's connection, the monitor, then the server, Xvfb and the bus (by pid, reaped); returns the
    /// pids of the server and the bus that are still alive afterwards (none, normally).
    func stop() async -> [Int32] {
        toasts.stop()
        bus.stop()
        let environment = self.environment
        let pids = environment.pids
        try? await offPool { environment.stopAndWait() }
        return pids.filter { Tools.isAlive($0) }
    }

    // MARK: - What is on screen

    /// Runs a short-lived tool of this desktop (xdotool, dunstctl, import) off the cooperative pool.
    @discardableResult
    func run(_ tool: String, _ arguments: [String]) async throws -> String {
        try await environment.run(tool, arguments)
    }

    /// The notifications on screen (see TestSupport's `NotificationEnvironment.popups()`).
    func visiblePopups() async throws -> [Popup] {
        try await environment.popups()
    }

    /// Waits until exactly `count` popups are visible and returns them, or nil after `limit`.
    func waitForPopups(_ count: Int, within limit: Duration? = nil) async throws -> [Popup]? {
        try await environment.waitForPopups(count, within: limit)
    }

    /// Saves where the server draws (`popupRegion`) as `.build/conformance/<name>.png`.
    func screenshot(named name: String) async throws -> String {
        let folder = "\(NotificationEnvironment.repositoryRoot)/.build/conformance"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = "\(folder)/\(name).png"
        try await environment.screenshot(to: path, region: environment.popupRegion)
        return path
    }

    /// A call to the server and its answer: the server sends its signals in order with its replies, so every
    /// signal it sent before is on the bus monitor once this returns.
    func serverRoundTrip() async throws {
        let connection = try await environment.bus.connect()
        defer { connection.close() }
        let call = NotificationsClient.call("GetServerInformation")
        let reply = try await connection.call(
            destination: call.destination, path: call.path, interface: call.interface, member: call.member,
            timeout: .seconds(10))
        let serial = reply.replySerial
        _ = try await bus.log.next("the server's answer on the monitor") {
            $0.kind == .methodReturn && $0.replySerial == serial && $0.destination == reply.destination
        }
    }

    /// dunst's history entry for server id `id` (closed notifications): field name → value.
    func dunstHistory(of id: UInt32) async throws -> [String: Any]? {
        let json = try await run("dunstctl", ["history"])
        guard let root = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let data = root["data"] as? [[[String: Any]]]
        else { return nil }
        for entry in data.first ?? [] {
            let fields = entry.mapValues { ($0 as? [String: Any])?["data"] ?? NSNull() }
            if (fields["id"] as? Int) == Int(id) { return fields }
        }
        return nil
    }
}

extension Desktop {
    /// What the bus monitor and the center saw, merged in arrival order, for `.build/conformance/transcripts/`.
    var transcript: String {
        let start = startedAt
        func stamp(_ at: ContinuousClock.Instant) -> String {
            let milliseconds =
                (at - start).components.seconds * 1000
                + (at - start).components.attoseconds / 1_000_000_000_000_000
            return String(repeating: " ", count: max(0, 6 - String(milliseconds).count)) + "\(milliseconds) ms"
        }
        var lines: [(ContinuousClock.Instant, String)] = []
        for entry in bus.log.all {
            let message = entry.value
            var line = "bus    \(message.kind) \(message.sender ?? "-") -> \(message.destination ?? "*")"
            if let member = message.member { line += " \(member)" }
            if let reply = message.replySerial { line += " (reply to \(reply))" } else { line += " #\(message.serial)" }
            if let error = message.errorName { line += " \(error)" }
            if !message.body.isEmpty, message.member != "GetCapabilities" {
                line += " " + message.body.map { String(describing: $0) }.joined(separator: ", ")
            }
            lines.append((entry.at, line))
        }
        for entry in toasts.events.all { lines.append((entry.at, "center \(entry.value)")) }
        return lines.sorted { $0.0 < $1.0 }.map { "\(stamp($0.0))  \($0.1)" }.joined(separator: "\n") + "\n"
    }

    /// Saves ``transcript`` as `.build/conformance/transcripts/<server>/<scenario>.txt`.
    func saveTranscript(_ scenario: Scenario) {
        saveTranscript(
            named: scenario.rawValue.filter { $0.isLetter || $0.isNumber || $0 == " " }
                .replacingOccurrences(of: " ", with: "-"))
    }

    /// Saves ``transcript`` as `.build/conformance/transcripts/<server>/<name>.txt`.
    func saveTranscript(named name: String) {
        let folder = "\(NotificationEnvironment.repositoryRoot)/.build/conformance/transcripts/\(server.name)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try? transcript.write(toFile: "\(folder)/\(name).txt", atomically: true, encoding: .utf8)
    }
}
