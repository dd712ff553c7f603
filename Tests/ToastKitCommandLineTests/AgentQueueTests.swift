import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// The agent's queueing rule (issue 18, point 2; docs/decisions/0006-agent-lanes-and-sessions.md), end to end on
/// dunst: no toast waits behind another application's, nor behind a question or an indefinite toast; `-r N`
/// replaces at once and, aimed at a toast the agent shows, updates it with its actions and waiters; `-p` answers
/// within one round trip of the server. Each test checks what reached the server by the time the last `send`
/// returned (the bus monitor synced), not after a wait; the toasts that must stay in front have a minute, so none
/// ends by itself before the check however loaded the machine. The agent shows one toast of an application at a time
/// here (`max-visible = 1`), so an application's queue is there to be seen behind a single toast; the stack of three
/// that is the default is `AgentStackTests`'.
@Suite(.timeLimit(.minutes(2))) struct AgentQueueTests {
    private func withDesktop(_ body: (NotificationEnvironment, BusWatcher, DBusConnection) async throws -> Void)
        async throws
    {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            try desktop.configureAgent("max-visible = 1\n")
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            try await body(desktop, watcher, bus)
        }
    }

    /// The summaries of the `Notify` calls so far. A toast that a `send` showed itself while no agent ran is
    /// taken over by the agent on dunst with the same notification again, in place (docs/decisions/0007-hand-over.md):
    /// that repeat (same summary, replacing) is not a toast of its own, and is left out.
    private func notified(_ watcher: BusWatcher, _ bus: DBusConnection) async throws -> [String] {
        try await watcher.sync(from: bus)
        var summaries: [String] = []
        for call in watcher.seen(where: { $0.kind == .methodCall && $0.member == "Notify" && $0.destination != nil }) {
            guard call.body.count > 3, let summary = call.body[3].stringValue else { continue }
            let replaces = call.body[1].uint32Value ?? 0
            if replaces != 0, summary == summaries.last { continue }
            summaries.append(summary)
        }
        return summaries
    }

    /// The `Notify` of `summary`, awaited (and so left out of ``notified(_:_:)``): an update in place that came
    /// within its toast's update interval reaches the server after its `send` returned (docs/agent.md).
    private func notify(_ summary: String, _ watcher: BusWatcher) async throws -> DBusMessage {
        try await watcher.next("the Notify of \(summary)") {
            $0.kind == .methodCall && $0.member == "Notify" && $0.destination != nil && $0.body.count > 3
                && $0.body[3].stringValue == summary
        }
    }

    private func send(_ arguments: [String], _ env: [String: String]) async throws -> ToolProcess.Result {
        let result = try await toastkit(["send"] + arguments, environment: env)
        #expect(result.status == 0 && result.error.isEmpty, "send \(arguments): \(result.status) \(result.error)")
        return result
    }

    /// Before: a second script's toast waited behind the first one's whatever its application. Now two applications'
    /// toasts are both on the server as soon as both `send`s return; one application's second toast still waits.
    @Test func toastsOfDifferentApplicationsAreShownAtOnce() async throws {
        try await withDesktop { desktop, watcher, bus in
            let env = desktop.agentEnvironment
            _ = try await send(["-a", "backup", "-d", "60", "Backup listo"], env)
            _ = try await send(["-a", "descargas", "-d", "60", "Descarga lista"], env)
            _ = try await send(["-a", "backup", "-d", "60", "Segunda copia"], env)
            #expect(try await notified(watcher, bus) == ["Backup listo", "Descarga lista"])
            let list = try await toastkit(["list"], environment: env)
            #expect(list.lines.filter { $0.contains("\tfront\t") }.count == 2, "\(list.output)")
            #expect(list.lines.contains { $0.hasPrefix("toastkit-") && $0.contains("\twaiting\t") }, "\(list.output)")
        }
    }

    /// Before: 20 sends of `-r 4242` queued 20 toasts, 4 s each, and a second after the loop the server still
    /// showed the first. Now each replaces the one notification at once, as notify-send's do. Sends that come
    /// within the toast's update interval of the last update merge into the next one (the newest wins), so how many
    /// of the 20 reach the server depends on the machine's pace; the newest always does, in place.
    @Test func aVolumeLoopReplacesOneNotificationAtOnce() async throws {
        try await withDesktop { desktop, watcher, bus in
            let env = desktop.agentEnvironment
            for value in stride(from: 5, through: 100, by: 5) {
                _ = try await send(["-r", "4242", "-h", "int:value:\(value)", "Volumen \(value)%"], env)
            }
            let newest = try await notify("Volumen 100%", watcher)
            #expect((newest.body[1].uint32Value ?? 0) != 0, "the newest volume replaces the notification")
            let earlier = try await notified(watcher, bus)
            let values = earlier.compactMap { Int($0.dropFirst("Volumen ".count).dropLast()) }
            #expect(values.count == earlier.count && values == values.sorted() && values.count < 20, "\(earlier)")
            try await desktop.waitUntilDisplayed(1)
            #expect(try await desktop.displayedCount() == 1, "one notification, replaced in place")
            let list = try await toastkit(["list"], environment: env)
            #expect(list.lines.filter { !$0.isEmpty }.count == 1, "\(list.output)")
            #expect(list.output.contains("Volumen 100%"), "\(list.output)")
        }
    }

    /// Before: `id=$(send -p …)` then `send -r $id …` queued the update ("3 %" came 12 s later). Now `-p` prints the
    /// server's id at once and `-r` updates the same notification at once.
    @Test func theProgressIdiomUpdatesInPlace() async throws {
        try await withDesktop { desktop, watcher, bus in
            let env = desktop.agentEnvironment
            // Something in the application's queue already: -p must not wait behind it.
            _ = try await send(["-d", "60", "Delante"], env)
            _ = try await send(["-d", "60", "Detrás"], env)
            let printed = try await send(["-p", "-d", "indefinite", "Copiando 0 %"], env)
            let id = try #require(UInt32(printed.output.trimmingCharacters(in: .whitespacesAndNewlines)))
            _ = try await send(["-r", "\(id)", "-d", "indefinite", "Copiando 3 %"], env)
            let update = try await notify("Copiando 3 %", watcher)
            #expect(update.body[1] == .uint32(id), "the update replaces notification \(id)")
            #expect(try await notified(watcher, bus) == ["Delante", "Copiando 0 %"])
            let list = try await toastkit(["list"], environment: env)
            #expect(list.output.contains("Copiando 3 %") && !list.output.contains("Copiando 0 %"), "\(list.output)")
        }
    }

    /// A live id replaced with what calls for a lane of its own leaves its application's lane: a queued toast
    /// sent again with `-p` is shown at once and its id printed (it waited behind the front toast before), and one
    /// made indefinite no longer holds its application's next toast back.
    @Test func aQueuedIDSentAgainWithPrintIDLeavesTheQueue() async throws {
        try await withDesktop { desktop, watcher, bus in
            let env = desktop.agentEnvironment
            _ = try await send(["-a", "app", "--id", "front", "-d", "30", "Delante"], env)
            _ = try await send(["-a", "app", "--id", "t", "-d", "30", "En cola"], env)
            let printed = try await send(["-a", "app", "--id", "t", "-p", "-d", "30", "Ya no"], env)
            _ = try #require(UInt32(printed.output.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(try await notified(watcher, bus) == ["Delante", "Ya no"])
            // The front one made indefinite: it leaves the lane, and the application's next toast is shown.
            _ = try await send(["-a", "app", "--id", "front", "-d", "indefinite", "Delante, sin fin"], env)
            _ = try await send(["-a", "app", "--id", "next", "-d", "30", "Siguiente"], env)
            let summaries = try await notified(watcher, bus)
            #expect(summaries.suffix(2) == ["Delante, sin fin", "Siguiente"], "\(summaries)")
            let list = try await toastkit(["list"], environment: env)
            #expect(list.lines.filter { $0.contains("\tfront\t") }.count == 3, "\(list.output)")
        }
    }

    /// Before: a toast waiting for an answer held back every other script's toast. Now a question (and any
    /// indefinite toast) has a lane of its own, and the next toasts, of its application or another, are shown at
    /// once.
    @Test func aQuestionNeverHoldsBackOtherToasts() async throws {
        try await withDesktop { desktop, watcher, bus in
            let env = desktop.agentEnvironment
            let question = try ToolProcess.start(
                ["send", "-A", "si=Sí", "-A", "no=No", "-d", "indefinite", "¿Seguro?"].map { Array($0.utf8) },
                environment: env)
            _ = try await watcher.nextNotifyAndReply()
            _ = try await send(["Backup listo"], env)
            _ = try await send(["-a", "otra", "Descarga lista"], env)
            #expect(try await notified(watcher, bus) == ["Backup listo", "Descarga lista"])
            question.signal(SIGINT)
            let ended = await question.finish()
            #expect(ended.status == 130, "\(ended.error)")
        }
    }

    /// Before: `-r N` aimed at a toast the agent shows took over its events: its button ran nothing and it stayed
    /// "front" for ever. Now it updates that toast in place; its button and its command stay, and `wait --id`
    /// still gets its end.
    @Test func replacingAnAgentToastByServerIDKeepsItsActionsAndWaiters() async throws {
        try await withDesktop { desktop, watcher, _ in
            let env = desktop.agentEnvironment
            let flag = "\(desktop.directory)/clicked"
            _ = try await send(
                ["--id", "q", "-A", "ok=Vale", "--on-action", "ok=touch \(flag)", "-d", "indefinite", "Pregunta"], env)
            let (_, serverID) = try await watcher.nextNotifyAndReply()
            let waiting = try ToolProcess.start(
                ["wait", "--id", "q"].map { Array($0.utf8) }, environment: env)
            _ = try await send(["-r", "\(serverID)", "Pregunta actualizada"], env)
            let (update, sameID) = try await watcher.nextNotifyAndReply()
            #expect(update.summary == "Pregunta actualizada" && update.replacesID == serverID && sameID == serverID)
            #expect(update.actionList == ["ok", "Vale"], "the update keeps the button")
            try await desktop.waitUntilDisplayed(1)
            try await desktop.dunstctl("action", "0")
            let waited = await waiting.finish()
            #expect(waited.status == 0 && waited.output == "ok\n", "\(waited.status) \(waited.output) \(waited.error)")
            _ = try await Deadline.run(within: .seconds(10), "the button's command") {
                while access(flag, F_OK) != 0 { try await Task.sleep(for: .milliseconds(20)) }
                return true
            }
            let list = try await toastkit(["list"], environment: env)
            #expect(list.output.isEmpty, "nothing stays front: \(list.output)")
        }
    }
}
