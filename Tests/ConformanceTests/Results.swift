import Foundation
import FreedesktopNotifications
import Synchronization
import TestSupport
import Testing

/// The scenarios of the matrix, in table order.
enum Scenario: String, CaseIterable, Sendable {
    /// The servers of the matrix, in column order.
    static let servers = ConformanceServer.all
    /// The order the servers start in: the desktop shells first, whose rows take longest (Swift Testing runs a few
    /// test cases at a time, so the last ones started would otherwise finish last).
    static let startOrder =
        servers.filter(\.kind.isDesktopShell).reversed() + servers.filter { !$0.kind.isDesktopShell }

    case present = "present"
    case replace = "replace by id"
    case tap = "tap (default action)"
    case tapAddedByUpdate = "tap added by an update"
    case button = "button action"
    case dismiss = "dismiss by the user"
    case closeByApp = "close by the app"
    case expiry = "expiry enforced by ToastKit (1 s)"
    case markup = "markup shown literally"
    case statuses = "statuses and icons"
    case restart = "server restart with live toasts"
    case capabilities = "capabilities and degradation"
    case progress = "progress, then done"
    case doNotDisturb = "Do Not Disturb holds a toast"
    case sound = "sound, played once"
    case reply = "inline reply"
    case stack = "three at once, newest in front"
}

/// What one scenario on one server found: its failed checks (each also a test issue) and its quirks.
final class ScenarioRecord: Sendable {
    let server: ConformanceServer
    let scenario: Scenario
    /// Whether failures are also test issues (false for a helper record whose failures a scenario takes over).
    let reportsIssues: Bool
    private struct Findings {
        var failures: [String] = []
        var notTestable: String?
        var quirks: [String] = []
    }
    private let state = Mutex(Findings())

    init(server: ConformanceServer, scenario: Scenario, reportsIssues: Bool = true) {
        self.server = server
        self.scenario = scenario
        self.reportsIssues = reportsIssues
    }

    /// Records a failure: an issue for the test (so it fails) and a FAIL cell in the table.
    func fail(_ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        state.withLock { $0.failures.append(message) }
        guard reportsIssues else { return }
        Issue.record(Comment(rawValue: "\(server) — \(scenario.rawValue): \(message)"), sourceLocation: sourceLocation)
    }

    /// Checks `condition`; on failure records `message` (see ``fail(_:sourceLocation:)``). Returns `condition`.
    @discardableResult
    func check(
        _ condition: Bool, _ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        if !condition { fail(message(), sourceLocation: sourceLocation) }
        return condition
    }

    /// Checks `actual == expected`, naming both on failure.
    @discardableResult
    func equal<T: Equatable>(
        _ actual: T, _ expected: T, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        check(actual == expected, "\(what): got \(actual), expected \(expected)", sourceLocation: sourceLocation)
    }

    /// Records that the server deviates here (ToastKit's fallback is checked by the scenario).
    func quirk(_ text: String) {
        state.withLock { if !$0.quirks.contains(text) { $0.quirks.append(text) } }
    }

    /// Records that the scenario cannot be carried out on this server from outside, and why (the cell says so; it
    /// is never a pass).
    func notTestable(_ reason: String) {
        state.withLock { $0.notTestable = reason }
    }

    var failures: [String] { state.withLock { $0.failures } }

    /// What the table cell says: `**FAIL**`, `not testable`, `quirk` or `pass`, and the texts that go to its notes.
    var cell: Cell {
        state.withLock { state in
            if !state.failures.isEmpty { return Cell(verdict: "**FAIL**", notes: state.failures) }
            if let reason = state.notTestable { return Cell(verdict: "not testable", notes: [reason] + state.quirks) }
            if !state.quirks.isEmpty { return Cell(verdict: "quirk", notes: state.quirks) }
            return Cell(verdict: "pass", notes: [])
        }
    }

    /// A cell of the matrix: a short verdict, and the notes it points to (written once under the table).
    struct Cell: Sendable {
        var verdict: String
        var notes: [String]
    }
}

/// The matrix of every server the suite ran, written as Markdown to `.build/conformance/results.md` after each
/// server (so the file always holds what has run; servers that did not run are marked so).
final class ConformanceResults: Sendable {
    static let shared = ConformanceResults()

    private struct State {
        var cells: [ConformanceServer: [Scenario: ScenarioRecord.Cell]] = [:]
        var servers: [ConformanceServer: String] = [:]
        var timings: [String] = []
    }

    private let state = Mutex(State())

    static var path: String { "\(NotificationEnvironment.repositoryRoot)/.build/conformance/results.md" }

    func record(_ record: ScenarioRecord) {
        state.withLock { $0.cells[record.server, default: [:]][record.scenario] = record.cell }
    }

    /// Notes how long a scenario took, desktop start and stop included (`.build/conformance/timings.txt`).
    func record(_ server: ConformanceServer, _ scenario: Scenario, took duration: Duration) {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        state.withLock { $0.timings.append("\(server.name)\t\(scenario.rawValue)\t\(milliseconds) ms") }
    }

    func record(_ server: ConformanceServer, capabilities: ServerCapabilities) {
        let info = capabilities.information
        let identity =
            info.map { "`\($0.name)` \($0.version) (\($0.vendor), spec \($0.specificationVersion))" } ?? "unknown"
        let names = capabilities.capabilities.sorted().joined(separator: ", ")
        state.withLock { $0.servers[server] = "\(identity); capabilities: \(names)" }
    }

    /// The Markdown table, its notes and the server lines. A cell is one word and the numbers of its notes
    /// (`quirk [3, 7]`); each note's text is written once, under the table, so the table reads at a glance.
    var markdown: String {
        state.withLock { state in
            let servers = Scenario.servers
            var lines = [
                "| scenario | " + servers.map(\.name).joined(separator: " | ") + " |",
                "|---|" + servers.map { _ in "---|" }.joined(),
            ]
            var notes: [String] = []
            for scenario in Scenario.allCases {
                let cells = servers.map { server -> String in
                    guard let cell = state.cells[server]?[scenario] else { return "not run" }
                    let numbers = cell.notes.map { note -> Int in
                        if let index = notes.firstIndex(of: note) { return index + 1 }
                        notes.append(note)
                        return notes.count
                    }
                    return numbers.isEmpty
                        ? cell.verdict : "\(cell.verdict) [\(numbers.map(String.init).joined(separator: ", "))]"
                }
                lines.append("| \(scenario.rawValue) | " + cells.map(Self.escape).joined(separator: " | ") + " |")
            }
            if !notes.isEmpty {
                lines.append("")
                lines.append("Notes:")
                lines.append("")
                for (index, note) in notes.enumerated() {
                    lines.append("\(index + 1). " + note.replacingOccurrences(of: "\n", with: " "))
                }
            }
            lines.append("")
            lines.append("Servers (GetServerInformation; GetCapabilities):")
            lines.append("")
            for server in servers {
                lines.append("- \(server.name): \(state.servers[server] ?? "not run")")
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    /// Writes ``markdown`` to ``path``.
    func write() throws {
        let text = markdown
        let url = URL(fileURLWithPath: Self.path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        // One writer at a time: the servers' tests finish concurrently.
        try state.withLock { state in
            try text.write(to: url, atomically: true, encoding: .utf8)
            try (state.timings.joined(separator: "\n") + "\n").write(
                to: url.deletingLastPathComponent().appendingPathComponent("timings.txt"), atomically: true,
                encoding: .utf8)
        }
    }

    private static func escape(_ cell: String) -> String {
        cell.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
