import DBus
import Foundation
import TestSupport
import Testing
import ToastKit

/// The drop-in corpus on a real dunst: every line of `Tests/Corpus/drop-in.jsonl` runs, one after the other, through
/// the real tool on one dunst desktop and through toastkit called by the tool's name on another, and each tool must
/// give its dunst the same `Notify` calls (seen by a bus monitor), get the same ids back, print the same and exit
/// the same. Where a line waits, the test closes the notification once dunst shows it, as a person does; between
/// lines it closes everything, and waits for the toastkit agent to have ended the toasts it held, so that no line
/// waits behind the one before (docs/drop-in.md).
@Suite(.timeLimit(.minutes(10)))
struct DropInDunstTests {
    @Test func everyCorpusLineOnDunstAsWithTheRealTool() async throws {
        let lines = try CorpusLine.all()
        let links = try ToolLinks()
        defer { links.remove() }
        let real = try await DunstDesk.start()
        defer { real.stop() }
        let ours = try await DunstDesk.start()
        defer { ours.stop() }
        var identical = 0
        var notifies = 0
        for line in lines {
            let expected = try await real.run(line, executable: try Tools.require(line.tool, package: line.package))
            let got = try await ours.run(line, executable: links.path(of: line.tool))
            if expected == got { identical += 1 }
            notifies += expected.notifies.count
            if line.differs == nil {
                #expect(
                    expected == got,
                    "on dunst: \(line.label)\n\(CorpusRun.explain(real: expected, ours: got, tool: line.tool))")
            }
        }
        #expect(notifies > lines.count * 3 / 4, "the monitor saw \(notifies) Notify calls of the real tools")
        let documented = lines.filter { $0.differs != nil }.count
        #expect(identical >= lines.count - documented, "\(identical) of \(lines.count) lines identical on dunst")
    }
}

/// One dunst desktop with a bus monitor that sees the notification traffic and the toastkit agent's events.
final class DunstDesk {
    let desktop: NotificationEnvironment
    let watcher: BusWatcher
    let bus: DBusConnection
    /// How many `Notify` calls, replies and agent events the monitor had seen before the current line.
    private var seenBefore = 0

    private init(desktop: NotificationEnvironment, watcher: BusWatcher, bus: DBusConnection) {
        self.desktop = desktop
        self.watcher = watcher
        self.bus = bus
    }

    static func start() async throws -> DunstDesk {
        let desktop = try await NotificationEnvironment.start(server: .dunst)
        let watcher = try await BusWatcher(
            bus: desktop.bus.address,
            rules: BusWatcher.notificationTraffic + [
                MatchRule(kind: .methodCall, interface: "org.toastkit.Agent1"),
                MatchRule(kind: .signal, interface: "org.toastkit.Agent1"),
            ])
        return DunstDesk(desktop: desktop, watcher: watcher, bus: try await desktop.bus.connect())
    }

    func stop() {
        bus.close()
        watcher.stop()
        desktop.stop()
    }

    /// Runs `line` with `executable`; a line that waits is answered by closing its notification once dunst shows it.
    /// Then everything is closed, and the toastkit agent's toasts of this line are awaited to their end.
    func run(_ line: CorpusLine, executable: String) async throws -> CorpusRun {
        var environment = desktop.agentEnvironment
        environment["LANG"] = "C.UTF-8"
        let process = try ToolProcess.start(
            line.argv.map { Array($0.utf8) }, environment: environment, executable: executable)
        process.feed(line.stdin.map { Array($0.utf8) })
        let finished = Task { await process.finish() }
        if line.waits {
            // A waiting tool that sends nothing (it failed first) has exited by the time dunst would show it.
            for _ in 0..<250 {
                if try await desktop.totalCount() > 0 { break }
                if kill(process.pid, 0) != 0 { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            if try await desktop.totalCount() > 0 {
                try await desktop.waitUntilDisplayed(1)
                try await desktop.dunstctl("close")
            }
        }
        let result = await finished.value
        try await watcher.sync(from: bus)
        let messages = watcher.seen { _ in true }
        let new = messages.dropFirst(seenBefore)
        // libnotify's proxy calls the server by its unique name: the interface tells a client's call.
        let notifies = new.filter {
            $0.kind == .methodCall && $0.member == "Notify" && $0.interface == "org.freedesktop.Notifications"
        }
        let closes: [UInt32] =
            line.closes
            ? new.filter {
                $0.kind == .methodCall && $0.member == "CloseNotification"
                    && $0.interface == "org.freedesktop.Notifications"
            }.compactMap {
                $0.body.first?.uint32Value
            } : []
        // The agent's toasts of this line: their ids come back in the replies to `Present`.
        let presents = new.filter { $0.kind == .methodCall && $0.member == "Present" }
        let agentIDs = new.filter { reply in
            reply.kind == .methodReturn
                && presents.contains { $0.serial == reply.replySerial && $0.sender == reply.destination }
        }.compactMap { $0.body.first?.stringValue }
        let run = CorpusRun(
            notifies: try notifies.map { CorpusRun.describe(try NotifyCall($0)) }, closes: closes,
            output: result.output, status: result.status)
        // Clean up for the next line: nothing on screen, nothing held by the agent.
        if try await desktop.totalCount() > 0 { try await desktop.dunstctl("close-all") }
        for id in agentIDs {
            _ = try await watcher.next("the agent's end of toast \(id)", within: .seconds(20)) {
                $0.member == "Event" && $0.body.count == 3 && $0.body[0].stringValue == id
                    && $0.body[1].stringValue == "ended"
            }
        }
        try await watcher.sync(from: bus)
        seenBefore = watcher.seen { _ in true }.count
        return run
    }
}
