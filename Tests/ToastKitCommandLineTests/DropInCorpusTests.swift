import DBus
import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing
import ToastKit

/// The drop-in promise on real scripts' command lines. Every line of `Tests/Corpus/drop-in.jsonl` (a call of
/// notify-send or dunstify found in a public script, with its source) runs through the real tool and through toastkit
/// called by that tool's name (a link named `notify-send` or `dunstify`), each on a fresh private bus with a recording
/// server. The server must receive the same calls — `Notify` with every argument (`sender-pid` is the sender's own
/// number, so only its presence and type count), and `CloseNotification` for the lines that ask for one — and the
/// tool must print the same standard output and exit with the same code. Where a line waits for the person, the test
/// answers as a person would: it clicks the first button (or the notification), then the server closes it.
///
/// A line may only differ where its `differs` field names one of the differences `docs/drop-in.md` lists with its
/// reason; such a line must then really differ, so the list stays true. At least 95 % of the lines must be identical.
@Suite(.timeLimit(.minutes(10)))
struct DropInCorpusTests {
    @Test func everyCorpusLineReachesTheServerAndTheScriptAsWithTheRealTool() async throws {
        let lines = try CorpusLine.all()
        #expect(lines.count >= 150, "the corpus has \(lines.count) lines; the issue asks for at least 150")
        let links = try ToolLinks()
        defer { links.remove() }
        let results = try await CorpusRun.pairs(lines) { line in
            (
                try await CorpusRun.run(line, executable: try Tools.require(line.tool, package: line.package)),
                try await CorpusRun.run(line, executable: links.path(of: line.tool))
            )
        }
        var identical = 0
        for (index, real, ours) in results {
            let line = lines[index]
            let same = real == ours
            if same { identical += 1 }
            if let reason = line.differs {
                #expect(
                    !same,
                    "\(line.label) is listed as differing (\(reason)) but toastkit now does what \(line.tool) does: drop its \"differs\""
                )
                #expect(
                    CorpusLine.documentedDifferences.contains(reason),
                    "\(line.label): the difference \"\(reason)\" is not listed in docs/drop-in.md")
            } else {
                #expect(same, "\(line.label)\n\(CorpusRun.explain(real: real, ours: ours, tool: line.tool))")
            }
        }
        let share = Double(identical) / Double(max(lines.count, 1))
        #expect(
            share >= 0.95, "\(identical) of \(lines.count) lines identical (\(Int(share * 100)) %); the goal is 95 %")
    }

    /// `toastkit send` takes notify-send's command line as it is: every notify-send line of the corpus, run as
    /// `toastkit send …`, gives the server what notify-send gives it and prints what it prints, with toastkit's own
    /// rules where it asks for more (docs/drop-in.md, "toastkit send"): the app name is `toastkit` unless `-a` gives
    /// one, a toast with actions and no duration stays until answered (`expire_timeout` 0), and a failure exits
    /// with toastkit's code for it (64, 65 or 69) instead of 1.
    @Test func toastkitSendTakesEveryNotifySendLine() async throws {
        let lines = try CorpusLine.all().filter { $0.tool == "notify-send" && $0.differs == nil }
        let results = try await CorpusRun.pairs(lines) { line in
            let real = try await CorpusRun.run(
                line, executable: try Tools.require("notify-send", package: "libnotify-bin"))
            var send = line
            send.argv = ["send"] + line.argv
            return (real.asToastkitSend(line), try await CorpusRun.run(send, executable: ToolProcess.binary))
        }
        for (index, expected, ours) in results {
            var ours = ours
            // A failure: notify-send's 1 is one of toastkit's failure codes.
            if expected.status == 1, [64, 65, 69].contains(ours.status) { ours.status = 1 }
            ours.notifies = CorpusRun.withoutTakeOvers(ours.notifies)
            #expect(
                expected == ours,
                "\(lines[index].label)\n\(CorpusRun.explain(real: expected, ours: ours, tool: "notify-send (toastkit's rules)"))"
            )
        }
    }
}

/// One line of the corpus.
struct CorpusLine: Sendable, Decodable {
    var tool: String
    var argv: [String]
    var source: String
    var original: String?
    var stdin: String?
    var differs: String?
    var lineNumber = 0

    enum CodingKeys: String, CodingKey { case tool, argv, source, original, stdin, differs }

    /// The corpus, or the file `TOASTKIT_CORPUS` names (to try lines before adding them).
    static let path =
        ProcessInfo.processInfo.environment["TOASTKIT_CORPUS"]
        ?? "\(NotificationEnvironment.repositoryRoot)/Tests/Corpus/drop-in.jsonl"

    static func all() throws -> [CorpusLine] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines: [CorpusLine] = []
        for (offset, row) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !row.trimmingCharacters(in: .whitespaces).isEmpty {
            do {
                var line = try JSONDecoder().decode(CorpusLine.self, from: Data(row.utf8))
                line.lineNumber = offset + 1
                guard ["notify-send", "dunstify"].contains(line.tool) else {
                    throw TestEnvironmentError("unknown tool \"\(line.tool)\"")
                }
                lines.append(line)
            } catch {
                throw TestEnvironmentError("Tests/Corpus/drop-in.jsonl:\(offset + 1): \(error)")
            }
        }
        return lines
    }

    /// The differences docs/drop-in.md lists (its `### ` headings' `{#key}` anchors).
    static let documentedDifferences: Set<String> = {
        let text =
            (try? String(contentsOfFile: "\(NotificationEnvironment.repositoryRoot)/docs/drop-in.md", encoding: .utf8))
            ?? ""
        var keys: Set<String> = []
        for row in text.split(separator: "\n") where row.hasPrefix("### ") {
            if let open = row.range(of: "{#"), let close = row.range(of: "}", range: open.upperBound..<row.endIndex) {
                keys.insert(String(row[open.upperBound..<close.lowerBound]))
            }
        }
        return keys
    }()

    var package: String { tool == "dunstify" ? "dunst" : "libnotify-bin" }

    /// How a failure names the line: where it is in the corpus, where it comes from, what it runs.
    var label: String {
        "drop-in.jsonl:\(lineNumber) (\(source)): \(tool) \(argv.map(Self.quote).joined(separator: " "))"
    }

    static func quote(_ word: String) -> String {
        word.allSatisfy({ $0.isLetter || $0.isNumber || "-_=:./,%+".contains($0) }) && !word.isEmpty
            ? word : "'\(word.replacingOccurrences(of: "'", with: "'\\''"))'"
    }

    /// Whether the tool waits for the person: notify-send with `-A`/`-w`, dunstify with `-A`/`-b`.
    var waits: Bool {
        let flags: Set<Character> = tool == "dunstify" ? ["A", "b"] : ["A", "w"]
        let long: Set<String> = tool == "dunstify" ? ["--action", "--block"] : ["--action", "--wait"]
        let valued: Set<Character> =
            tool == "dunstify"
            ? ["a", "A", "u", "h", "t", "i", "I", "r", "C"] : ["u", "t", "a", "i", "n", "c", "h", "r", "A"]
        for word in argv {
            if word == "--" { break }
            if long.contains(where: { word == $0 || word.hasPrefix($0 + "=") }) { return true }
            guard word.hasPrefix("-"), !word.hasPrefix("--"), word.count > 1 else { continue }
            for letter in word.dropFirst() {
                if flags.contains(letter) { return true }
                if valued.contains(letter) { break }
            }
        }
        return false
    }

    /// Whether the line closes a notification (dunstify's `-C`): only then are `CloseNotification` calls compared
    /// (toastkit's agent closes a notification itself when its duration ends, on servers that ignore the timeout).
    var closes: Bool {
        tool == "dunstify" && argv.contains { $0 == "-C" || $0 == "--close" || $0.hasPrefix("--close=") }
    }
}

/// What one run of a tool left: the server's calls, the output, the exit code.
struct CorpusRun: Sendable, Equatable {
    var notifies: [String]
    var closes: [UInt32]
    var output: String
    var status: Int32

    /// `compare` for every line, six lines at a time, in the lines' order: (index, expected, toastkit's).
    static func pairs(
        _ lines: [CorpusLine], _ compare: @escaping @Sendable (CorpusLine) async throws -> (CorpusRun, CorpusRun)
    ) async throws -> [(Int, CorpusRun, CorpusRun)] {
        try await withThrowingTaskGroup(of: (Int, CorpusRun, CorpusRun).self) { group in
            var results: [(Int, CorpusRun, CorpusRun)] = []
            var next = 0
            func add() {
                guard next < lines.count else { return }
                let index = next
                next += 1
                group.addTask {
                    let (expected, ours) = try await compare(lines[index])
                    return (index, expected, ours)
                }
            }
            for _ in 0..<6 { add() }
            while let result = try await group.next() {
                results.append(result)
                add()
            }
            return results.sorted { $0.0 < $1.0 }
        }
    }

    /// Runs `line` with `executable` on a fresh bus with a recording server.
    /// `notifies` without the agent's taking over of a toast `toastkit send` showed itself while no agent ran: on
    /// dunst (this recording server's name), the agent sends it once more, in place, with the time it has left
    /// (docs/decisions/0007-hand-over.md). Such a repeat is the `Notify` before it with `replaces_id` set (to the
    /// id the server gave) and a shorter `expire_timeout`; any other difference keeps it.
    static func withoutTakeOvers(_ notifies: [String]) -> [String] {
        func field(_ name: String, of text: String) -> Int? {
            guard let range = text.range(of: " \(name)=") else { return nil }
            return Int(text[range.upperBound...].prefix { $0.isNumber })
        }
        func rest(_ text: String) -> String {
            text.replacing(#/\sreplaces_id=\d+/#, with: "").replacing(#/\sexpire_timeout=-?\d+/#, with: "")
        }
        var kept: [String] = []
        for notify in notifies {
            if let previous = kept.last, let replaces = field("replaces_id", of: notify), replaces != 0,
                rest(previous) == rest(notify),
                let before = field("expire_timeout", of: previous), let after = field("expire_timeout", of: notify),
                after > 0, after <= before
            {
                continue
            }
            kept.append(notify)
        }
        return kept
    }

    static func run(_ line: CorpusLine, executable: String) async throws -> CorpusRun {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        var options = FakeNotificationServer.Options()
        options.reportsAfterReply = true
        options.name = "dunst"
        let server = try await FakeNotificationServer.start(on: bus, options: options)
        defer { server.stop() }
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-corpus")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for folder in ["runtime", "state", "config", "home"] {
            try FileManager.default.createDirectory(
                atPath: "\(directory)/\(folder)", withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        let environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": "\(directory)/home", "DBUS_SESSION_BUS_ADDRESS": bus.address,
            "XDG_RUNTIME_DIR": "\(directory)/runtime", "XDG_STATE_HOME": "\(directory)/state",
            "XDG_CONFIG_HOME": "\(directory)/config", "LANG": "C.UTF-8", "LANGUAGE": "en",
            "TOASTKIT_AGENT_START_TIMEOUT": "30",
        ]
        // The person: answers each notification of a line that waits — the first button, or else the notification
        // itself — and the server then closes it.
        let waits = line.waits
        let person = Task {
            for await event in server.events {
                guard waits, case .notify(let notification) = event else { continue }
                let keys = notification.actions.map(\.key)
                if let key = keys.first(where: { $0 != "default" }) ?? keys.first {
                    try? server.emitActionInvoked(id: notification.id, key: key)
                }
                try? server.emitClosed(id: notification.id, reason: 2)
            }
        }
        defer { person.cancel() }
        let process = try ToolProcess.start(
            line.argv.map { Array($0.utf8) }, environment: environment, executable: executable)
        process.feed(line.stdin.map { Array($0.utf8) })
        let result = await process.finish()
        let notifies = server.notifications.map { Self.describe($0.arguments) }
        return CorpusRun(
            notifies: notifies, closes: line.closes ? server.closeRequests : [], output: result.output,
            status: result.status)
    }

    /// A `Notify` call as text, with `sender-pid`'s value left out (it is the sender's own process id).
    static func describe(_ call: NotifyCall) -> String {
        var hints = call.hints
        if case .int64? = hints["sender-pid"] { hints["sender-pid"] = .int64(0) }
        let hintText = hints.keys.sorted().map { "\($0)=\(hints[$0]!)" }.joined(separator: ", ")
        return """
            app_name=\(CorpusLine.quote(call.appName)) replaces_id=\(call.replacesID) \
            app_icon=\(CorpusLine.quote(call.appIcon)) summary=\(CorpusLine.quote(call.summary)) \
            body=\(CorpusLine.quote(call.body)) actions=\(call.actions.map { "\($0.key)=\($0.label)" }) hints=[\(hintText)] \
            expire_timeout=\(call.expireTimeout)
            """
    }

    /// What `toastkit send` gives for a line where notify-send gave this run: `toastkit` as the app name unless
    /// `-a` gives one, and `expire_timeout` 0 for a toast with actions and no duration (it stays until answered).
    func asToastkitSend(_ line: CorpusLine) -> CorpusRun {
        let namesApp = line.argv.contains { $0 == "-a" || $0 == "--app-name" || $0.hasPrefix("--app-name=") }
        let timed = line.argv.contains { $0 == "-t" || $0 == "--expire-time" || $0.hasPrefix("--expire-time=") }
        var run = self
        run.notifies = notifies.map { text in
            var text = text
            if !namesApp { text = text.replacingOccurrences(of: "app_name=notify-send ", with: "app_name=toastkit ") }
            if !timed, !text.contains("actions=[] "), text.hasSuffix("expire_timeout=-1") {
                text = String(text.dropLast("-1".count)) + "0"
            }
            return text
        }
        return run
    }

    /// What differs, for a failure message.
    static func explain(real: CorpusRun, ours: CorpusRun, tool: String) -> String {
        var parts: [String] = []
        if real.notifies != ours.notifies {
            parts.append(
                "Notify calls:\n  \(tool):    \(real.notifies.joined(separator: "\n    "))\n  toastkit: \(ours.notifies.joined(separator: "\n    "))"
            )
        }
        if real.closes != ours.closes {
            parts.append("CloseNotification: \(tool) \(real.closes), toastkit \(ours.closes)")
        }
        if real.output != ours.output {
            parts.append(
                "stdout: \(tool) \(String(reflecting: real.output)), toastkit \(String(reflecting: ours.output))")
        }
        if real.status != ours.status { parts.append("exit code: \(tool) \(real.status), toastkit \(ours.status)") }
        return parts.joined(separator: "\n")
    }
}

/// A folder with links named `notify-send` and `dunstify` to the built `toastkit`, as `scripts/install.sh --links`
/// makes them.
struct ToolLinks {
    let directory: String

    init() throws {
        directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-links")
        for name in ["notify-send", "dunstify"] {
            try FileManager.default.createSymbolicLink(
                atPath: "\(directory)/\(name)", withDestinationPath: ToolProcess.binary)
        }
    }

    func path(of tool: String) -> String { "\(directory)/\(tool)" }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
