import Foundation
import TestSupport
import Testing
import ToastKitAgent

/// Questions from scripts (issue 19 §3): a toast with actions and no duration stays until it is answered, and
/// `--default ID` gives the answer for a dismissal or an expiry, so `answer=$(toastkit send -A …)` never ends a
/// `set -e` script. On a recording server, through the agent and on the direct path.
@Suite(.timeLimit(.minutes(2)))
struct QuestionTests {
    @Test(arguments: [false, true])
    func aDismissedQuestionGivesItsDefaultAnswer(throughAgent: Bool) async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        var options = FakeNotificationServer.Options()
        options.reportsAfterReply = true
        let server = try await FakeNotificationServer.start(on: environment.bus, options: options)
        defer { server.stop() }
        let env = throughAgent ? environment.agentEnvironment : environment.environment
        let question = try ToolProcess.start(
            ["send", "-A", "si=Sí", "-A", "no=No", "--default", "no", "¿Borrar?"].map { Array($0.utf8) },
            environment: env)
        let notification = try await server.nextNotification()
        #expect(notification.expireTimeout == 0, "a question stays until it is answered")
        #expect(notification.actions.map(\.key) == ["si", "no"])
        try server.emitClosed(id: notification.id, reason: 2)
        let answered = await question.finish()
        #expect(answered.status == 0, "dismissed, with a default: \(answered.error)")
        #expect(answered.output == "no\n")

        // Without --default, a dismissal is exit 2 (and `set -e` ends the script, as the README shows).
        let plain = try ToolProcess.start(
            ["send", "-A", "si=Sí", "¿Seguro?"].map { Array($0.utf8) }, environment: env)
        let second = try await server.nextNotification()
        try server.emitClosed(id: second.id, reason: 2)
        let dismissed = await plain.finish()
        #expect(dismissed.status == 2 && dismissed.output.isEmpty, "\(dismissed.status) \(dismissed.error)")
    }

    /// A question has no time of its own on either path: answered after the standard four seconds, it still gets
    /// its answer. (Through the agent the waiting `send` once timed it with `-d`'s default, 4 s, closed it at 4.1 s
    /// and exited 3; a loaded CI run dismissed one too late and saw it.) This waits five seconds of wall clock: what
    /// it shows is that nothing ends the question meanwhile.
    @Test(arguments: [false, true])
    func aQuestionAnsweredAfterFourSecondsGetsItsAnswer(throughAgent: Bool) async throws {
        try await withFakeServer { environment, server in
            let env = throughAgent ? environment.agentEnvironment : environment.environment
            let question = try ToolProcess.start(
                ["send", "-A", "si=Sí", "-A", "no=No", "¿Borrar?"].map { Array($0.utf8) }, environment: env)
            let notification = try await server.nextNotification()
            try await Task.sleep(for: .seconds(5))
            #expect(server.liveIDs.contains(notification.id), "nothing closed the question")
            try server.emitActionInvoked(id: notification.id, key: "si")
            let answered = await question.finish()
            #expect(answered.status == 0, "\(answered.error)")
            #expect(answered.output == "si\n")
        }
    }

    @Test func theDefaultMustBeOneOfTheActions() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let run = try await toastkit(
            ["send", "-A", "si=Sí", "--default", "quizá", "¿Borrar?"], environment: environment.environment)
        #expect(run.status == 64)
        #expect(run.error == "toastkit: --default quizá: no -A/--action or --tap has the id \"quizá\"\n")
    }
}
