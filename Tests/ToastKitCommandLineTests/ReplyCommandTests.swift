import Foundation
import Glibc
import TestSupport
import Testing

/// `send --reply` (issue 21 §4) on a server without a reply field of its own: the action is a button, choosing it
/// runs the prompt program (here TOASTKIT_REPLY_PROMPT, a shell command), and what the person typed is what the
/// script reads — on the direct path and through the agent, whose `--on-action` command gets it in TOASTKIT_REPLY.
@Suite(.timeLimit(.minutes(2))) struct ReplyCommandTests {
    private func run(
        _ arguments: [String], _ environment: BusOnlyEnvironment, _ path: SendPath, prompt: String
    ) throws -> ToolProcess {
        var variables = path.environment(environment)
        variables["TOASTKIT_REPLY_PROMPT"] = prompt
        return try ToolProcess.start(arguments.map { Array($0.utf8) }, environment: variables)
    }

    @Test(arguments: SendPath.allCases)
    func theTypedTextIsWhatTheScriptReads(_ path: SendPath) async throws {
        try await withFakeServer { environment, server in
            // The prompt sees the toast and the placeholder, as a dialog would show them.
            let prompt = #"printf '%s\n' "Voy ($TOASTKIT_REPLY_TITLE, $TOASTKIT_REPLY_PLACEHOLDER)""#
            let json = try run(
                [
                    "send", "--json", "--reply", "answer=Responder", "--reply-placeholder", "Escribe…", "Ana",
                    "¿Comemos?",
                ], environment, path, prompt: prompt)
            let notification = try await server.nextNotification()
            #expect(notification.actions.map(\.key) == ["answer"])
            #expect(notification.actions.map(\.label) == ["Responder"])
            #expect(notification.expireTimeout == 0, "a question stays until it is answered")
            try server.emitActionInvoked(id: notification.id, key: "answer")
            let result = await json.finish()
            #expect(result.status == 0, "\(result.error)")
            let action = try #require(events(result.output).first { $0["event"] as? String == "action" })
            #expect(action["action"] as? String == "answer")
            #expect(action["reply"] as? String == "Voy (Ana, Escribe…)")

            // Without --json: the text alone, on a line, in place of the action's id.
            let plain = try run(["send", "--reply", "Responder", "Ana"], environment, path, prompt: "echo 'A las dos'")
            let second = try await server.nextNotification()
            #expect(second.actions.map(\.key) == ["reply"])
            try server.emitActionInvoked(id: second.id, key: "reply")
            let answered = await plain.finish()
            #expect(answered.status == 0, "\(answered.error)")
            #expect(answered.output == "A las dos\n")
        }
    }

    /// A closed prompt is no answer: the script is told (`reply_cancelled`), the toast stays, and the wait goes on to
    /// the toast's real end — here the person dismisses it (exit 2).
    @Test(arguments: SendPath.allCases)
    func aCancelledPromptLeavesTheToastAndTheWaitGoesOn(_ path: SendPath) async throws {
        try await withFakeServer { environment, server in
            let process = try run(
                ["send", "--json", "--reply", "Responder", "Ana"], environment, path, prompt: "exit 1")
            let notification = try await server.nextNotification()
            try server.emitActionInvoked(id: notification.id, key: "reply")
            var lines: [String] = []
            while true {
                let line = await process.nextLine()
                lines.append(line)
                if line.isEmpty || line.contains(#""event":"reply_cancelled""#) { break }
            }
            #expect(lines.last?.contains(#""action":"reply""#) == true, "\(lines)")
            #expect(server.liveIDs.contains(notification.id), "the toast is still there")
            try server.emitClosed(id: notification.id, reason: 2)
            let result = await process.finish()
            #expect(result.status == 2, "\(result.error)")
            #expect(events(result.output).last?["reason"] as? String == "dismissed")
        }
    }

    /// Ctrl-C while the person types: the toast closes, and so does the dialog (it runs in a session of its own, so
    /// the terminal's Ctrl-C never reaches it: toastkit closes it), on both paths.
    @Test(arguments: SendPath.allCases)
    func anInterruptedWaitClosesTheOpenPrompt(_ path: SendPath) async throws {
        try await withFakeServer { environment, server in
            let fifo = "\(environment.directory)/prompt.fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let lines = FIFOLines(fifo)
            let process = try run(
                ["send", "--json", "--reply", "Responder", "Ana"], environment, path,
                prompt: "echo $$ > \(fifo); exec sleep 3600")
            let notification = try await server.nextNotification()
            try server.emitActionInvoked(id: notification.id, key: "reply")
            let prompt = try #require(Int32(try await lines.next(within: 30)))
            process.signal(SIGINT)
            let result = await process.finish()
            #expect(result.status == 130, "\(result.error)")
            let closed = try #require(events(result.output).last, "\(result.error)")
            #expect(closed["event"] as? String == "closed")
            #expect(closed["reason"] as? String == "interrupted")
            #expect(try await processEnds(prompt, within: 30), "the prompt \(prompt) is still open")
        }
    }

    /// Issue 39: a prompt that never returns held `send --wait -d 3 --reply …` for ever. The toast's time runs on with
    /// a minute to type (``ToastReplyPrompt/allowance``); then the prompt is closed and the wait ends, expired.
    @Test(arguments: SendPath.allCases)
    func aPromptThatNeverReturnsEndsWithTheToastsTime(_ path: SendPath) async throws {
        try await withFakeServer { environment, server in
            let fifo = "\(environment.directory)/prompt.fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let lines = FIFOLines(fifo)
            let process = try run(
                ["send", "--json", "-d", "3", "--reply", "Responder", "Ana"], environment, path,
                prompt: "echo $$ > \(fifo); exec sleep 3600")
            let notification = try await server.nextNotification()
            try server.emitActionInvoked(id: notification.id, key: "reply")
            let prompt = try #require(Int32(try await lines.next(within: 30)))
            let result = await process.finish()
            #expect(result.status == 3, "expired: \(result.error)")
            let said = events(result.output).compactMap { $0["event"] as? String }
            #expect(said.suffix(2) == ["reply_cancelled", "closed"], "\(result.output)")
            #expect(events(result.output).last?["reason"] as? String == "expired")
            #expect(try await processEnds(prompt, within: 30), "the prompt \(prompt) is still open")
        }
    }

    /// Through the agent, after `send` has gone: the `--on-action` command of the reply action gets the text in
    /// TOASTKIT_REPLY, and the prompt ran with the sender's environment (TOASTKIT_REPLY_PROMPT was never the
    /// agent's own).
    @Test func theAgentsCommandGetsTheText() async throws {
        try await withFakeServer { environment, server in
            let fifo = "\(environment.directory)/reply.fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let lines = FIFOLines(fifo)
            // An agent started without the prompt in its own environment.
            let starter = try await toastkit(["send", "-d", "1", "Hola"], environment: environment.agentEnvironment)
            #expect(starter.status == 0, "\(starter.error)")
            _ = try await server.nextNotification()
            let send = try run(
                [
                    "send", "--reply", "Responder", "--shell", "--on-action",
                    "reply=printf '%s\\n' \"$TOASTKIT_REPLY\" > \(fifo)",
                    "Ana",
                ], environment, .agent, prompt: "echo 'Voy'")
            #expect(await send.finish().status == 0)
            let notification = try await server.nextNotification()
            try server.emitActionInvoked(id: notification.id, key: "reply")
            #expect(try await lines.next(within: 10) == "Voy")
        }
    }
}
