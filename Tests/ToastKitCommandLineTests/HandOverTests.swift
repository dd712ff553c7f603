import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// The hand-over (docs/decisions/0007-hand-over.md): with no agent running, `send` shows a timed toast itself, writes
/// it down and starts the agent without waiting for it; the agent takes the notification over as it is on screen
/// (on dunst, which sends its signals only to the last sender, it sends it once more, in place) and closes it on
/// time. Nothing is lost whoever starts when.
@Suite(.timeLimit(.minutes(2))) struct HandOverTests {
    /// The hand-over files in the test's runtime folder.
    private func handOverFiles(_ environment: BusOnlyEnvironment) -> [String] {
        let folder = "\(environment.directory)/runtime/toastkit"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasPrefix("handover-") }.map { "\(folder)/\($0)" }
    }

    private func agentOwner(_ server: FakeNotificationServer) async throws -> String? {
        try await server.connection.bus.nameOwner(of: AgentInterface.busName)
    }

    /// The process behind a connection (the agent talks to the server on a connection of its own, beside the one
    /// that owns its name).
    private func process(of name: String, _ server: FakeNotificationServer) async throws -> UInt32? {
        try await server.connection.call(.bus("GetConnectionUnixProcessID", [.string(name)])).arguments("u")[0]
            .uint32Value
    }

    /// Whether the agent's process sent `notification`.
    private func sentByTheAgent(
        _ notification: FakeNotificationServer.Notification, _ server: FakeNotificationServer
    ) async throws -> Bool {
        guard let agent = try await agentOwner(server) else { return false }
        // A sender that has left the bus (a `send` that has exited) is not the agent, which runs.
        guard let sender = try? await process(of: notification.sender, server) else { return false }
        return try await sender == process(of: agent, server)
    }

    /// `send`s a five-minute toast `id` with no agent started for it (`TOASTKIT_FAILPOINT_HANDOVER=no-start`): the
    /// notification it showed, and its hand-over file.
    private func handOverNobodyTakes(
        _ id: String, _ title: String, _ environment: BusOnlyEnvironment, _ server: FakeNotificationServer
    ) async throws -> (shown: FakeNotificationServer.Notification, file: String) {
        var noStart = environment.agentEnvironment
        noStart["TOASTKIT_FAILPOINT_HANDOVER"] = "no-start"
        let send = try await toastkit(["send", "--id", id, "-d", "300", title], environment: noStart)
        #expect(send.status == 0 && send.error.isEmpty, "\(send.error)")
        let shown = try await server.nextNotification()
        let file = try #require(handOverFiles(environment).first, "on disk before send returned")
        #expect(try await agentOwner(server) == nil)
        return (shown, file)
    }

    /// The next `CloseNotification` the server gets.
    private func nextClose(_ server: FakeNotificationServer) async -> UInt32? {
        for await event in server.events {
            if case .close(let id) = event { return id }
        }
        return nil
    }

    @Test func aColdSendShowsItsToastItselfAndTheAgentItStartsTakesItOver() async throws {
        try await withFakeServer { environment, server in
            let env = environment.agentEnvironment
            let send = try await toastkit(["send", "-p", "--id", "h", "-d", "300", "Primera"], environment: env)
            #expect(send.status == 0 && send.error.isEmpty, "\(send.error)")
            let shown = try await server.nextNotification()
            #expect(shown.summary == "Primera" && shown.replacesID == 0)
            #expect(send.output == "\(shown.id)\n", "-p prints the server's id")
            #expect(!(try await sentByTheAgent(shown, server)), "shown by send itself")
            // The agent's toast now: listed with its time, the hand-over file gone (answered after the adoption), the
            // notification taken as it is on screen: not sent again.
            let list = try await toastkit(["list"], environment: env)
            #expect(list.lines.first?.hasPrefix("h\tfront\t") == true, "\(list.output)")
            #expect(handOverFiles(environment).isEmpty, "\(handOverFiles(environment))")
            #expect(try await toastkit(["close", "--id", "h"], environment: env).status == 0)
            #expect(await nextClose(server) == shown.id)
            #expect(server.notifications.count == 1, "\(server.notifications.map(\.summary))")
        }
    }

    /// dunst sends a notification's signals only to the connection that called `Notify`: the agent sends the
    /// toast once more, in place, from its own connection, and so hears when the person closes it.
    @Test func onAServerThatSignalsOnlyTheSenderTheAgentShowsItAgainInPlace() async throws {
        try await withFakeServer(.init(name: "dunst")) { environment, server in
            let env = environment.agentEnvironment
            let send = try await toastkit(["send", "--id", "d", "-d", "300", "Primera"], environment: env)
            #expect(send.status == 0 && send.error.isEmpty, "\(send.error)")
            let shown = try await server.nextNotification()
            let adopted = try await server.nextNotification()
            #expect(adopted.id == shown.id && adopted.replacesID == shown.id && adopted.summary == "Primera")
            #expect(try await sentByTheAgent(adopted, server))
            #expect(!(try await sentByTheAgent(shown, server)))
            // Closed by the person: the server tells the agent (its last sender), and the toast is over.
            try server.emitClosed(id: shown.id, reason: 2)
            let wait = try await toastkit(["wait", "--id", "d"], environment: env)
            #expect(wait.status == 2, "dismissed: \(wait.error)")
        }
    }

    /// The agent keeps the toast's time: the second `send` gave it is counted from the moment `send` showed it.
    @Test func theAgentClosesAHandedOverToastAtItsTime() async throws {
        try await withFakeServer { environment, server in
            let started = ContinuousClock.now
            let send = try await toastkit(["send", "-d", "1", "Un segundo"], environment: environment.agentEnvironment)
            #expect(send.status == 0 && send.error.isEmpty, "\(send.error)")
            let shown = try await server.nextNotification()
            // The fake server never expires anything by itself: only the agent can close it.
            #expect(await nextClose(server) == shown.id)
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(950), "closed after \(elapsed), before its second")
        }
    }

    /// A hand-over that no agent took (the agent was never started, or failed to) is taken by the next agent of
    /// the bus; a toast of the same application sent meanwhile goes through that agent and queues behind it (one
    /// toast of an application at a time here, `max-visible = 1`, so the queue is there to be seen).
    @Test func aHandOverNoAgentTookIsTakenByTheNextOneAndAToastQueuesBehindIt() async throws {
        try await withFakeServer { environment, server in
            try configureAgent("max-visible = 1\n", environment: environment.agentEnvironment)
            let (shown, _) = try await handOverNobodyTakes("a", "Primero", environment, server)
            // The hand-over still waits: this toast is not shown beside it but goes through the agent it starts.
            let second = try await toastkit(
                ["send", "--id", "b", "-d", "5", "Segundo"], environment: environment.agentEnvironment)
            #expect(second.status == 0 && second.error.isEmpty, "\(second.error)")
            let list = try await toastkit(["list"], environment: environment.agentEnvironment)
            #expect(list.lines.first?.hasPrefix("a\tfront\t") == true, "\(list.output)")
            #expect(list.lines.dropFirst().first?.hasPrefix("b\twaiting\t") == true, "\(list.output)")
            #expect(handOverFiles(environment).isEmpty)
            #expect(server.notifications.map(\.summary) == ["Primero"], "Segundo waits behind Primero")
            // Primero is the agent's: it closes it, and shows Segundo.
            #expect(try await toastkit(["close", "--id", "a"], environment: environment.agentEnvironment).status == 0)
            #expect(await nextClose(server) == shown.id)
            #expect(try await server.nextNotification().summary == "Segundo")
        }
    }

    /// `send` returns before the agent it started owns its name: a `list` or `close` made at once must still find
    /// the toast. With no agent started at all (the fail point), the query starts the agent, since a toast waits for
    /// one: nothing hangs on the moment the agent takes its name.
    @Test func aQueryMadeBeforeTheAgentStartedStillFindsTheToast() async throws {
        try await withFakeServer { environment, server in
            let env = environment.agentEnvironment
            let (shown, _) = try await handOverNobodyTakes("q", "Pregunta", environment, server)
            let list = try await toastkit(["list"], environment: env)
            #expect(list.lines.first?.hasPrefix("q\tfront\t") == true, "\(list.output)")
            #expect(handOverFiles(environment).isEmpty)
            let bus = try await environment.bus.connect()
            defer { bus.close() }
            try await killAgent(try await bus.agentPID(), bus)
            // The killed agent's saved toast waits too: `close` starts the next agent, which closes it.
            let close = try await toastkit(["close", "--id", "q"], environment: env)
            #expect(close.status == 0 && close.error.isEmpty, "\(close.error)")
            #expect(await nextClose(server) == shown.id)
        }
    }

    /// A hand-over whose time ran out before any agent took it is closed by the next one, at once: its end is
    /// `expired`. The file is made an hour older rather than waiting for the time to pass.
    @Test func aHandOverWhoseTimeRanOutIsClosedByTheNextAgent() async throws {
        try await withFakeServer { environment, server in
            let (shown, file) = try await handOverNobodyTakes("old", "Caducado", environment, server)
            let aged = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { line in
                var object = try #require(
                    try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                if let at = object["at"] as? Double { object["at"] = at - 3600 }
                return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            }
            try (aged.joined(separator: "\n") + "\n").write(toFile: file, atomically: false, encoding: .utf8)
            let wait = try await toastkit(["wait", "--id", "old", "--json"], environment: environment.agentEnvironment)
            #expect(wait.status == 3, "\(wait.error)")
            #expect(await nextClose(server) == shown.id, "closed, not sent again first")
            #expect(server.notifications.count == 1)
        }
    }

    /// An agent that was already starting when `send` found no owner of the name (it had read the folder before the
    /// file was written) is told by `TakeHandOver`, and takes it then.
    @Test func aRunningAgentTakesAHandOverWhenToldTo() async throws {
        try await withFakeServer { environment, server in
            let (shown, file) = try await handOverNobodyTakes("late", "Tarde", environment, server)
            // The file stands aside while an agent starts and finds nothing; then it is back, as if written just
            // after that agent looked.
            #expect(rename(file, file + ".aside") == 0)
            let changes = try await server.connection.bus.nameOwnerChanges(of: AgentInterface.busName)
            let agent = try ToolProcess.start([Array("agent".utf8)], environment: environment.agentEnvironment)
            defer { agent.signal(SIGTERM) }
            _ = try await Deadline.run(within: .seconds(30), "the agent's name") {
                for try await change in changes where change.newOwner != nil { return true }
                return nil
            }
            let empty = try await toastkit(["list"], environment: environment.agentEnvironment)
            #expect(empty.status == 0 && empty.output.isEmpty, "\(empty.output)")
            #expect(rename(file + ".aside", file) == 0)
            // As `send` calls it: without waiting for an answer, from a connection that is gone a moment later —
            // before the agent could ask the bus who called.
            let events = try await server.connection.signals(
                matching: MatchRule(interface: AgentInterface.interface, member: "Event"))
            let (gone, _) = try BlockingDBusConnection.connect(to: .address(environment.bus.address))
            try gone.send(AgentInterface.call("TakeHandOver"))
            gone.close()
            for try await event in events {
                let values = try event.arguments("ssa{sv}")
                if values[0].stringValue == "late", values[1].stringValue == "presented" { break }
            }
            events.cancel()
            // Answered once every look at the file before it is done.
            _ = try await server.connection.call(AgentInterface.call("TakeHandOver"), timeout: .seconds(30))
            let list = try await toastkit(["list"], environment: environment.agentEnvironment)
            #expect(list.lines.first?.hasPrefix("late\tfront\t") == true, "\(list.output)")
            #expect(handOverFiles(environment).isEmpty)
            #expect(
                try await toastkit(["close", "--id", "late"], environment: environment.agentEnvironment).status == 0)
            #expect(await nextClose(server) == shown.id)
        }
    }

    /// What needs more than a time — a command on an action, someone waiting, no time at all — never goes by
    /// hand-over: the agent shows it, from its own connection.
    @Test(arguments: [
        ["--on-action", "ok=true", "-A", "ok=OK", "-d", "300"], ["-d", "indefinite", "--id", "i"],
    ])
    func whatNeedsMoreThanATimeGoesThroughTheAgent(_ options: [String]) async throws {
        try await withFakeServer { environment, server in
            let send = try await toastkit(["send"] + options + ["Agente"], environment: environment.agentEnvironment)
            #expect(send.status == 0 && send.error.isEmpty, "\(send.error)")
            let shown = try await server.nextNotification()
            #expect(try await sentByTheAgent(shown, server))
            #expect(handOverFiles(environment).isEmpty)
        }
    }
}
