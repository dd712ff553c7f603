import Foundation
import Glibc
import TestSupport
import Testing

/// `toastkit later --show` (issue 39 §4): a re-shown toast's buttons do what they did before it was kept — print the
/// chosen action, or run the toast's `--on-action` command through the agent — Later again closes it and keeps it,
/// and a shell user never reads the library's advice.
@Suite(.timeLimit(.minutes(3))) struct LaterShowTests {
    /// The ids in the command line's Later store, as `toastkit later --json` lists them, with their actions.
    private func kept(_ environment: [String: String]) async throws -> [String: [String]] {
        let list = try await toastkit(["later", "--json"], environment: environment)
        #expect(list.status == 0, "\(list.error)")
        var kept: [String: [String]] = [:]
        for object in events(list.output) {
            guard let id = object["id"] as? String else { continue }
            kept[id] = object["actions"] as? [String] ?? []
        }
        return kept
    }

    /// The next `CloseNotification` of `id` the server received (within 30 s).
    private func nextClose(of id: UInt32, on server: FakeNotificationServer) async throws {
        let events = server.events
        _ = try await Deadline.run(within: .seconds(30), "CloseNotification of \(id)") { () -> Bool? in
            for await event in events where event == .close(id) { return true }
            return nil
        }
    }

    /// The next notification the server received (within 30 s).
    private func nextNotification(on server: FakeNotificationServer, _ what: String) async throws
        -> FakeNotificationServer.Notification
    {
        try await Deadline.run(within: .seconds(30), what) { try await server.nextNotification() }
    }

    /// `send -A archive=Archivar -A later` on the direct path, answered with Later: kept, exit 5.
    private func keepMail(_ environment: [String: String], server: FakeNotificationServer) async throws {
        let send = try ToolProcess.start(
            ["send", "--id", "mail", "-A", "archive=Archivar", "-A", "later", "Correo"].map { Array($0.utf8) },
            environment: environment)
        let shown = try await nextNotification(on: server, "the sent toast")
        try server.emitActionInvoked(id: shown.id, key: "later")
        let result = await send.finish()
        #expect(result.status == 5, "deferred: \(result.error)")
        #expect(try await kept(environment) == ["mail": ["archive", "later"]])
    }

    @Test func aReShownToastsButtonPrintsItsActionAndTheToastCloses() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            try await keepMail(env, server: server)
            let show = try ToolProcess.start(["later", "--show"].map { Array($0.utf8) }, environment: env)
            let again = try await nextNotification(on: server, "the re-shown toast")
            #expect(again.summary == "Correo")
            #expect(again.actions.map(\.key) == ["archive", "later"])
            #expect(await show.nextLine() == "mail\t\(again.id)\tCorreo")
            try server.emitActionInvoked(id: again.id, key: "archive")
            let result = await show.finish()
            #expect(result.status == 0, "\(result.error)")
            #expect(result.output == "mail\tarchive\n", "the chosen action, as send printed it")
            #expect(result.error.isEmpty, "nothing for a shell user to make sense of: \(result.error)")
            #expect(try await kept(env).isEmpty, "answered: no longer kept")
            try await nextClose(of: again.id, on: server)
            #expect(!server.liveIDs.contains(again.id), "the toast left the screen")
        }
    }

    @Test func laterAgainClosesTheReShownToastAndKeepsIt() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            try await keepMail(env, server: server)
            let show = try ToolProcess.start(["later", "--show", "--json"].map { Array($0.utf8) }, environment: env)
            let again = try await nextNotification(on: server, "the re-shown toast")
            let presented = await show.nextLine()
            #expect(presented == #"{"event":"presented","id":"mail","server_id":\#(again.id)}"#)
            try server.emitActionInvoked(id: again.id, key: "later")
            let result = await show.finish()
            #expect(result.status == 0, "\(result.error)")
            #expect(result.error.isEmpty, "\(result.error)")
            #expect(events(result.output).compactMap { $0["event"] as? String } == ["action", "deferred"])
            #expect(try await kept(env) == ["mail": ["archive", "later"]], "kept again, with its buttons")
            try await nextClose(of: again.id, on: server)
            #expect(!server.liveIDs.contains(again.id), "off the screen")

            // And it comes back once more, its buttons still working.
            let third = try ToolProcess.start(["later", "--show"].map { Array($0.utf8) }, environment: env)
            let once = try await nextNotification(on: server, "the toast shown a third time")
            _ = await third.nextLine()
            try server.emitActionInvoked(id: once.id, key: "archive")
            let last = await third.finish()
            #expect(last.status == 0 && last.output == "mail\tarchive\n", "\(last.output) \(last.error)")
        }
    }

    @Test func anInterruptedShowClosesItsToastsAndKeepsThemWithALineForTheShell() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            try await keepMail(env, server: server)
            let show = try ToolProcess.start(["later", "--show"].map { Array($0.utf8) }, environment: env)
            let again = try await nextNotification(on: server, "the re-shown toast")
            _ = await show.nextLine()
            show.signal(SIGINT)
            let result = await show.finish()
            #expect(result.status == 130, "\(result.error)")
            #expect(!result.error.contains("dismissAll") && !result.error.contains("ToastCenter"), "\(result.error)")
            #expect(
                result.error
                    == "toastkit: interrupted: 1 toast closed and kept for later again (`toastkit later --show` "
                    + "shows it)\n")
            #expect(try await kept(env) == ["mail": ["archive", "later"]], "nothing lost")
            try await nextClose(of: again.id, on: server)
        }
    }

    @Test func aReShownToastsOnActionButtonRunsItsCommand() async throws {
        try await withFakeServer { environment, server in
            let env = environment.agentEnvironment
            // The command shows a toast of its own: what it ran is seen on the server, awaited as any Notify.
            let command = "\(ToolProcess.binary) send --no-agent \"hecho $TOASTKIT_ACTION $TOASTKIT_ID\""
            let send = try await toastkit(
                [
                    "send", "--id", "mail", "-A", "archive=Archivar", "-A", "later", "-d", "indefinite", "--shell",
                    "--on-action", "archive=\(command)", "Correo",
                ], environment: env)
            #expect(send.status == 0, "--on-action does not wait: \(send.error)")
            let first = try await nextNotification(on: server, "the sent toast")
            try server.emitActionInvoked(id: first.id, key: "later")
            let deferred = try await toastkit(["wait", "--id", "mail"], environment: env)
            #expect(deferred.status == 5, "\(deferred.output) \(deferred.error)")
            #expect(try await kept(env) == ["mail": ["archive", "later"]])

            // Where the agent may not be used, its commands could not run: it stays kept, said in one line.
            let direct = try await toastkit(["later", "--show"], environment: environment.environment)
            #expect(direct.status == 69)
            #expect(direct.output.isEmpty)
            #expect(
                direct.error
                    == "toastkit: the toast \"mail\" stays kept: its --on-action commands need the toast agent, which "
                    + "cannot be used: TOASTKIT_NO_AGENT is set\n")
            #expect(try await kept(env) == ["mail": ["archive", "later"]])

            // Shown again: the agent holds it, so `later --show` returns, and its button runs the command.
            for round in 1...2 {
                let show = try await toastkit(["later", "--show"], environment: env)
                #expect(show.status == 0 && show.error.isEmpty, "round \(round): \(show.error)")
                let again = try await nextNotification(on: server, "the re-shown toast (round \(round))")
                #expect(again.summary == "Correo")
                #expect(show.output == "mail\t\(again.id)\tCorreo\n")
                #expect(try await kept(env).isEmpty)
                if round == 1 {
                    // Later again: closed, and kept with its command.
                    try server.emitActionInvoked(id: again.id, key: "later")
                    try await nextClose(of: again.id, on: server)
                    let waited = try await toastkit(["wait", "--id", "mail"], environment: env)
                    #expect(waited.status == 5, "\(waited.error)")
                    #expect(try await kept(env) == ["mail": ["archive", "later"]])
                } else {
                    try server.emitActionInvoked(id: again.id, key: "archive")
                    let ran = try await nextNotification(on: server, "the toast of the --on-action command")
                    #expect(ran.summary == "hecho archive mail")
                }
            }
        }
    }
}
