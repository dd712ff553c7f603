// Inline reply in the model: a reply action's text from the service's own field or from a prompt, its events, the
// toast's time while the person types, a cancel, no prompt at all, and how a reply action is stored.
import Foundation
import Synchronization
import Testing
import ToastKitTesting
import ToastModel

/// Holds a prompt's answer until the test gives it: the person is still typing.
private final class PendingAnswer: Sendable {
    private struct State {
        var result: ToastReplyPromptResult?
        var answerWaiter: CheckedContinuation<ToastReplyPromptResult, Never>?
        var isAsked = false
        var askedWaiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    /// The presenter's side: returns once the test gives the answer.
    func wait() async -> ToastReplyPromptResult {
        await withCheckedContinuation { continuation in
            let (ready, asked) = state.withLock {
                state -> (ToastReplyPromptResult?, CheckedContinuation<Void, Never>?) in
                state.isAsked = true
                defer { state.askedWaiter = nil }
                if let result = state.result { return (result, state.askedWaiter) }
                state.answerWaiter = continuation
                return (nil, state.askedWaiter)
            }
            asked?.resume()
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Returns once the presenter has been asked.
    func asked() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.isAsked { return true }
                state.askedWaiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }

    func give(_ result: ToastReplyPromptResult) {
        let waiter = state.withLock { state -> CheckedContinuation<ToastReplyPromptResult, Never>? in
            state.result = result
            defer { state.answerWaiter = nil }
            return state.answerWaiter
        }
        waiter?.resume(returning: result)
    }
}

@Suite("Inline reply")
struct ToastReplyTests {
    private func message(_ trace: Trace) -> ToastMessage {
        let answer = ToastAction.reply(title: "Responder", placeholder: "Escribe…", submitTitle: "Enviar") { context in
            trace.append("\(context.actionID): \(context.reply ?? "nil")")
        }
        return ToastMessage(
            id: "M", title: "Ana", message: "¿Comemos?", duration: 4, swipeActions: ToastSwipeActions(leading: answer))
    }

    @Test("the presenter sees the reply field on the action and in the request")
    func theFieldReachesThePresenter() throws {
        let h = Harness()
        h.center.present(message(Trace()))
        let shown = try #require(h.presenter.presentation(of: "M"))
        let field = ToastReplyField(placeholder: "Escribe…", submitTitle: "Enviar")
        #expect(shown.toast.actions.first?.reply == field)
        #expect(shown.request.actions.first?.reply == field)
        #expect(shown.request.actions.first?.key == "reply")
    }

    @Test("text from the service's own field: handler with the text, replied, then the action, then the end")
    func textFromTheServiceField() async throws {
        let h = Harness()
        let trace = Trace()
        h.center.present(message(trace))
        h.presenter.reply("Vale, a las dos", to: "reply", on: "M", activationToken: "token-1")
        await h.log.waitFor(.ended(id: "M", outcome: .actionInvoked(actionID: "reply")))
        #expect(trace.all == ["reply: Vale, a las dos"])
        #expect(h.presenter.prompts.isEmpty, "no prompt: the service drew the field")
        let events = h.log.events.filter { $0.toastID == "M" }
        #expect(
            Array(events.suffix(3)) == [
                .replied(id: "M", actionID: "reply", text: "Vale, a las dos"),
                .actionInvoked(id: "M", actionID: "reply", activationToken: "token-1"),
                .ended(id: "M", outcome: .actionInvoked(actionID: "reply")),
            ])
    }

    @Test("a button on a service without a field: the presenter is asked, and the toast has a minute for the text")
    func thePromptGivesTheAllowance() async throws {
        let h = Harness()
        let trace = Trace()
        let pending = PendingAnswer()
        h.presenter.answerReplies { _ in await pending.wait() }
        h.center.present(message(trace))
        try h.presenter.invokeAction("reply", on: "M", activationToken: "token-2")
        await h.log.waitFor(.replyAsked(id: "M", actionID: "reply"))
        await pending.asked()
        let prompt = try #require(h.presenter.prompts.first)
        #expect(
            prompt
                == ToastReplyPrompt(
                    toastID: "M", title: "Ana", message: "¿Comemos?", actionTitle: "Responder",
                    field: ToastReplyField(placeholder: "Escribe…", submitTitle: "Enviar"), activationToken: "token-2"))
        // Long past its four seconds: still there while the person types, with the minute the prompt gives running.
        await h.advance(to: 30)
        #expect(h.log.terminal.isEmpty)
        #expect(h.center.entryState(of: "M")?.isRunning == true)
        #expect(h.center.entryState(of: "M")?.remaining == .seconds(30))

        pending.give(.text("Voy"))
        await h.log.waitFor(.ended(id: "M", outcome: .actionInvoked(actionID: "reply")))
        #expect(trace.all == ["reply: Voy"])
        #expect(h.log.events.contains(.replied(id: "M", actionID: "reply", text: "Voy")))
        #expect(h.presenter.onScreen.isEmpty)
    }

    /// Issue 39: a prompt that never returns held `send --wait -d 3 --reply …` for ever. Every wait ends: when the
    /// allowance is up, the prompt is closed and the toast expires.
    @Test("a prompt that never returns: at the end of its minute the prompt is closed and the toast expires")
    func aPromptThatNeverReturnsEndsWithTheToastsTime() async throws {
        let h = Harness()
        let pending = PendingAnswer()
        h.presenter.answerReplies { _ in await pending.wait() }
        h.center.present(message(Trace()))
        await h.advance(to: 1)
        try h.presenter.invokeAction("reply", on: "M")
        await pending.asked()
        await h.advance(to: 60.5)
        #expect(h.log.terminal.isEmpty, "within the minute")
        await h.advance(to: 61)
        await h.log.waitFor(.ended(id: "M", outcome: .expired))
        #expect(h.log.events.contains(.replyCancelled(id: "M", actionID: "reply")))
        #expect(h.presenter.closedPrompts == ["M"])
        pending.give(.text("tarde"))
        await h.center.flush()
        #expect(!h.log.events.contains { if case .replied = $0 { true } else { false } }, "too late: no answer")
    }

    @Test("a cancelled prompt: the toast stays, its time runs again from where it stopped, a second try works")
    func aCancelGivesTheTimeBack() async throws {
        let h = Harness()
        let trace = Trace()
        let answers = Mutex<[ToastReplyPromptResult]>([.cancelled, .text("Luego")])
        h.presenter.answerReplies { _ in answers.withLock { $0.removeFirst() } }
        h.center.present(message(trace))
        await h.advance(to: 1)
        try h.presenter.invokeAction("reply", on: "M")
        await h.log.waitFor(.replyCancelled(id: "M", actionID: "reply"))
        #expect(h.log.terminal.isEmpty)
        #expect(trace.all.isEmpty, "no handler without a text")
        #expect(h.center.entryState(of: "M")?.isRunning == true)
        #expect(h.center.entryState(of: "M")?.remaining == .seconds(3))

        try h.presenter.invokeAction("reply", on: "M")
        await h.log.waitFor(.ended(id: "M", outcome: .actionInvoked(actionID: "reply")))
        #expect(trace.all == ["reply: Luego"])
        #expect(h.presenter.prompts.count == 2)
    }

    @Test("no prompt can be shown: said in a degraded event, and the toast stays as after a cancel")
    func noPromptIsSaid() async throws {
        let h = Harness()
        h.presenter.answerReplies { _ in .unavailable(reason: "no prompt program: install zenity") }
        h.center.present(message(Trace()))
        try h.presenter.invokeAction("reply", on: "M")
        await h.log.waitFor(.replyCancelled(id: "M", actionID: "reply"))
        #expect(
            h.log.events.contains(
                .degraded(id: "M", reason: "the reply could not be asked for: no prompt program: install zenity")))
        #expect(h.log.terminal.isEmpty)
        #expect(h.presenter.onScreen.map(\.id) == ["M"])
    }

    @Test("a server that closes the toast as the button is chosen: after a cancel it is shown again")
    func closedWhileAskingComesBack() async throws {
        let h = Harness()
        let pending = PendingAnswer()
        h.presenter.answerReplies { _ in await pending.wait() }
        h.center.present(message(Trace()))
        try h.presenter.invokeAction("reply", on: "M")
        await h.log.waitFor(.replyAsked(id: "M", actionID: "reply"))
        h.presenter.dismissByUser("M")
        #expect(h.log.terminal.isEmpty, "the action is under way: not a dismissal")
        pending.give(.cancelled)
        await h.log.waitFor(.replyCancelled(id: "M", actionID: "reply"))
        #expect(h.presenter.onScreen.map(\.id) == ["M"])
    }

    /// A prompt the person leaves open until the center closes it; the text it then gives comes too late.
    private func promptLeftOpen(_ h: Harness) {
        h.presenter.answerReplies { _ in
            try? await Task.sleep(for: .seconds(3600))
            return .text("demasiado tarde")
        }
    }

    @Test("the app closes the toast while the person types: it ends closed by the app, and the prompt closes")
    func dismissedWhileAsking() async throws {
        let h = Harness()
        let trace = Trace()
        promptLeftOpen(h)
        h.center.present(message(trace))
        try h.presenter.invokeAction("reply", on: "M")
        await h.log.waitFor(.replyAsked(id: "M", actionID: "reply"))
        h.center.dismiss(id: "M")
        await h.log.waitFor(.ended(id: "M", outcome: .closedByApp))
        // Returns: the prompt's task was cancelled, not left to the person.
        await h.center.flush()
        #expect(h.presenter.closedPrompts == ["M"])
        #expect(trace.all.isEmpty, "the late text runs nothing")
        #expect(
            h.log.events.filter { $0.toastID == "M" }
                == [
                    .presented(id: "M"), .shown(id: "M"), .replyAsked(id: "M", actionID: "reply"),
                    .replyCancelled(id: "M", actionID: "reply"), .ended(id: "M", outcome: .closedByApp),
                ])
    }

    @Test("the toast is replaced while the person types: replaced, not answered, and the new one is shown")
    func replacedWhileAsking() async throws {
        let h = Harness()
        let trace = Trace()
        promptLeftOpen(h)
        h.center.present(message(trace))
        try h.presenter.invokeAction("reply", on: "M")
        await h.log.waitFor(.replyAsked(id: "M", actionID: "reply"))
        h.center.present(ToastMessage(id: "M", title: "Ana", message: "Da igual, ya comí"))
        await h.log.waitFor(.ended(id: "M", outcome: .replaced))
        await h.center.flush()
        #expect(h.presenter.closedPrompts == ["M"])
        #expect(trace.all.isEmpty)
        #expect(h.log.events.contains(.replyCancelled(id: "M", actionID: "reply")))
        #expect(h.presenter.onScreen.map(\.toast.message) == ["Da igual, ya comí"])
        await h.advance(to: 4)
        await h.log.waitFor(.ended(id: "M", outcome: .expired))
    }

    @Test("another button while the dialog is open: that choice wins and the dialog closes; Reply again does nothing")
    func anotherButtonWhileAsking() async throws {
        let h = Harness()
        let trace = Trace()
        promptLeftOpen(h)
        var question = message(trace)
        question.swipeActions?.trailing = .withContext(id: "open", title: "Abrir") { context in
            trace.append("\(context.actionID)")
        }
        h.center.present(question)
        try h.presenter.invokeAction("reply", on: "M")
        await h.log.waitFor(.replyAsked(id: "M", actionID: "reply"))
        try h.presenter.invokeAction("reply", on: "M")
        try h.presenter.invokeAction("open", on: "M")
        await h.log.waitFor(.ended(id: "M", outcome: .actionInvoked(actionID: "open")))
        await h.center.flush()
        #expect(h.presenter.prompts.count == 1, "a second Reply opened no second dialog")
        #expect(h.presenter.closedPrompts == ["M"])
        #expect(trace.all == ["open"])
        #expect(h.log.events.contains(.replyCancelled(id: "M", actionID: "reply")))
    }

    @Test("the presenter is detached while the person types: the prompt closes, the toast waits with its time")
    func detachedWhileAsking() async throws {
        let h = Harness()
        promptLeftOpen(h)
        h.center.present(message(Trace()))
        await h.advance(to: 1)
        try h.presenter.invokeAction("reply", on: "M")
        await h.log.waitFor(.replyAsked(id: "M", actionID: "reply"))
        h.center.detach()
        await h.log.waitFor(.replyCancelled(id: "M", actionID: "reply"))
        await h.center.flush()
        #expect(h.presenter.closedPrompts == ["M"])
        #expect(h.log.terminal.isEmpty)
        #expect(h.center.entryState(of: "M")?.remaining == .seconds(3))
    }

    @Test("a reply action is stored with its field: JSON, and a toast kept for Later")
    func storedWithItsField() throws {
        let action = ToastAction.reply(id: "answer", title: "Responder", placeholder: "Escribe…")
        let decoded = try JSONDecoder().decode(ToastAction.self, from: JSONEncoder().encode(action))
        #expect(decoded == action)
        #expect(decoded.reply == ToastReplyField(placeholder: "Escribe…"))
        let plain = try JSONDecoder().decode(ToastAction.self, from: Data(#"{"title":"Abrir"}"#.utf8))
        #expect(plain.reply == nil)
        #expect(action != ToastAction.withContext(id: "answer", title: "Responder") { _ in })
        let record = ToastLaterRecord(
            message: ToastMessage(id: "M", title: "Ana", swipeActions: ToastSwipeActions(leading: action)))
        #expect(record.makeMessage().swipeActions?.leading?.reply == ToastReplyField(placeholder: "Escribe…"))
    }
}
