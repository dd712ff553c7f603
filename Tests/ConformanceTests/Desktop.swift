import DBus
import Foundation
import FreedesktopNotifications
import Glibc
import TestSupport
import Testing
import ToastModel

/// A point relative to a popup: `dx` pixels left of its right edge, and `dy` pixels up from its bottom edge
/// (`fromTop` false) or down from its top edge (`fromTop` true).
struct PopupOffset: Sendable {
    var dx: Int
    var dy: Int
    var fromTop = false
}

/// A visible popup window.
struct Popup: Sendable, CustomStringConvertible {
    var window: String
    var x: Int
    var y: Int
    var width: Int
    var height: Int

    func point(_ offset: PopupOffset) -> (x: Int, y: Int) {
        (x + width - offset.dx, offset.fromTop ? y + offset.dy : y + height - offset.dy)
    }

    /// A point on the body text, clear of buttons and the close control.
    var body: (x: Int, y: Int) { (x + 40, y + height / 2) }

    var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// How the suite works each server, from `../shared/harness` (`prove-dunst.sh`, `prove-other-servers.sh`, NOTES
/// §4–§5): dunst through `dunstctl` and its scripted context menu, the GTK servers through xdotool clicks at offsets
/// from the popup's corner, measured at 1280x800 with DejaVu fonts on Debian 12 for the suite's two-action toast
/// (tap "Abrir" + button "Archivar", one line of text). The "x" is measured from the top, because the popup's
/// height follows its text; the buttons sit at the bottom right.
struct ServerDriver: Sendable {
    let kind: NotificationServerKind
    /// Where the "Archivar" button is (the right-most button). nil: no buttons (dunst).
    var archiveButton: PopupOffset?
    /// Where the default action's own button is, for a server that draws `default` as a button (xfce4-notifyd).
    var openButton: PopupOffset?
    /// Where the close control ("x") is; nil when the popup has none.
    var closeButton: PopupOffset?

    init(_ kind: NotificationServerKind) {
        self.kind = kind
        switch kind {
        case .dunst:
            break
        case .notificationDaemon:
            archiveButton = PopupOffset(dx: 88, dy: 40)
            closeButton = PopupOffset(dx: 24, dy: 32, fromTop: true)
        case .xfce4Notifyd:
            archiveButton = PopupOffset(dx: 57, dy: 31)
            openButton = PopupOffset(dx: 149, dy: 31)
        case .mateNotificationDaemon:
            archiveButton = PopupOffset(dx: 72, dy: 28)
            closeButton = PopupOffset(dx: 33, dy: 27, fromTop: true)
        }
    }
}

/// One scenario's private desktop: a private bus, Xvfb, the server, a bus monitor and a center with a desktop
/// presenter. Every scenario gets a fresh one, so no popup, pointer position (P10) or id of one scenario can touch
/// the next.
final class Desktop: Sendable {
    let kind: NotificationServerKind
    let driver: ServerDriver
    let environment: NotificationEnvironment
    let bus: BusTraffic
    let toasts: ToastHarness
    let startedAt = ContinuousClock.now

    private init(environment: NotificationEnvironment, bus: BusTraffic, toasts: ToastHarness) {
        kind = environment.server
        driver = ServerDriver(environment.server)
        self.environment = environment
        self.bus = bus
        self.toasts = toasts
    }

    static func start(_ kind: NotificationServerKind) async throws -> Desktop {
        let environment = try await NotificationEnvironment.start(server: kind)
        do {
            let bus = try await BusTraffic(bus: environment.bus.address)
            return Desktop(
                environment: environment, bus: bus, toasts: ToastHarness(busAddress: environment.bus.address))
        } catch {
            try? await offPool { environment.stop() }
            throw error
        }
    }

    /// Stops the center's connection, the monitor, then the server, Xvfb and the bus (by pid, reaped); returns the
    /// pids of the server and the bus that are still alive afterwards (none, normally).
    func stop() async -> [Int32] {
        toasts.stop()
        bus.stop()
        let environment = self.environment
        try? await offPool { environment.stop() }
        return [environment.serverPID, environment.bus.pid].filter { kill($0, 0) == 0 }
    }

    // MARK: - What is on screen

    /// Runs a short-lived tool of this desktop (xdotool, dunstctl, import) off the cooperative pool.
    @discardableResult
    func run(_ tool: String, _ arguments: [String]) async throws -> String {
        let environment = self.environment
        return try await offPool { try environment.run(tool, arguments) }
    }

    /// The visible popups: for dunst the number it displays (`dunstctl count displayed`), for the GTK servers the
    /// visible windows smaller than the screen and larger than GTK's 1x1 helper windows.
    func visiblePopups() async throws -> [Popup] {
        if kind == .dunst {
            let count = Int(try await run("dunstctl", ["count", "displayed"]).trimmed) ?? -1
            return Array(repeating: Popup(window: "dunst", x: 0, y: 0, width: 0, height: 0), count: max(count, 0))
        }
        let environment = self.environment.environment
        let result = try await offPool {
            try Tools.run(
                "xdotool", ["search", "--onlyvisible", "--name", ".*", "getwindowgeometry", "--shell", "%@"],
                environment: environment)
        }
        // `xdotool search` exits 1 when nothing matches: no popup.
        guard result.status == 0 else { return [] }
        var popups: [Popup] = []
        var fields: [String: String] = [:]
        func flush() {
            if let window = fields["WINDOW"], let x = Int(fields["X"] ?? ""), let y = Int(fields["Y"] ?? ""),
                let width = Int(fields["WIDTH"] ?? ""), let height = Int(fields["HEIGHT"] ?? ""),
                width > 1, height > 1, width < 1280
            {
                popups.append(Popup(window: window, x: x, y: y, width: width, height: height))
            }
            fields = [:]
        }
        for line in result.output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if parts[0] == "WINDOW" { flush() }
            fields[parts[0]] = parts[1]
        }
        flush()
        return popups
    }

    /// Waits until exactly `count` popups are visible and returns them, or nil after `limit`.
    ///
    /// A window appearing or going away is not announced on the bus (the server answers `Notify` and emits
    /// `NotificationClosed` around its drawing, not after it), so this is the one place the suite polls: every
    /// 25 ms, for at most `limit`.
    func waitForPopups(_ count: Int, within limit: Duration = .seconds(5)) async throws -> [Popup]? {
        let deadline = ContinuousClock.now + limit
        while true {
            let popups = try await visiblePopups()
            if popups.count == count { return popups }
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(25))
        }
    }

    /// Clicks at `point` with the left button, then parks the pointer in the bottom-left corner: a pointer resting
    /// on a GTK popup pauses its timeout (P10).
    func click(_ point: (x: Int, y: Int)) async throws {
        try await run("xdotool", ["mousemove", "\(point.x)", "\(point.y)", "click", "1", "mousemove", "0", "799"])
    }

    /// Saves the top-right part of the screen (where every server draws) as a PNG.
    func screenshot(named name: String) async throws -> String {
        let folder = "\(NotificationEnvironment.repositoryRoot)/.build/conformance"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = "\(folder)/\(name).png"
        try await run("import", ["-window", "root", "-crop", "520x200+760+0", "+repage", path])
        return path
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
        let folder = "\(NotificationEnvironment.repositoryRoot)/.build/conformance/transcripts/\(kind.rawValue)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let name = scenario.rawValue.filter { $0.isLetter || $0.isNumber || $0 == " " }
            .replacingOccurrences(of: " ", with: "-")
        try? transcript.write(toFile: "\(folder)/\(name).txt", atomically: true, encoding: .utf8)
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
