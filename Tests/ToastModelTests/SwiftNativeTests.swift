import Foundation
import Synchronization
import Testing
import ToastKitTesting
import ToastModel

/// Issue 23's second pass for app developers: waits with timeouts, Swift-native value types (durations from
/// `Swift.Duration`, `async` handlers, `Codable` and `==`), and a testing presenter whose wrong expectation fails the
/// test instead of hanging it. The first test is the issue's list of forms that did not compile, written as a new
/// user wrote them.
@Suite("Swift-native API and timeouts", .timeLimit(.minutes(2)))
struct SwiftNativeTests {
    @Test("the forms a new user wrote compile and do what they say")
    func theFormsANewUserWrote() async throws {
        let h = Harness()
        let retried = Trace()
        let retry = ToastAction(id: "retry", title: "Reintentar") { _ in
            try? await Task.sleep(for: .milliseconds(1))
            retried.append("retried")
        }
        let message = ToastMessage(
            id: "x", title: "Subida fallida", duration: .milliseconds(1500), tapAction: retry)
        let json = try JSONEncoder().encode(message)
        #expect(try JSONDecoder().decode(ToastMessage.self, from: json) == message)
        h.center.present(message)
        try h.presenter.invokeAction("retry", on: "x")
        let outcome = try await h.center.outcome(of: "x", timeout: .seconds(5))
        #expect(outcome == .actionInvoked(actionID: "retry"))
        #expect(outcome == .action("retry"))
        #expect(h.log.events.last == .ended(id: "x", outcome: .action("retry")))
        await h.center.flush()
        #expect(retried.all == ["retried"], "flush waits for the async handler")
    }

    // MARK: - Timeouts

    @Test("outcome(of:timeout:) gives up on the center's clock and leaves the toast as it is")
    func outcomeTimesOut() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "q", title: "¿Seguro?", duration: .indefinite))
        let waiting = Task { try await h.center.outcome(of: "q", timeout: .seconds(5)) }
        try await h.clock.sleepers(count: 1)  // the timeout's alarm: an indefinite toast has no timer
        h.clock.advance(by: .seconds(5))
        await #expect(throws: ToastCenterError.timedOut(waitingFor: "the end of toast \"q\"", after: .seconds(5))) {
            try await waiting.value
        }
        #expect(h.center.liveToastIDs == ["q"])
        #expect(
            ToastCenterError.timedOut(waitingFor: "the end of toast \"q\"", after: .seconds(5)).description
                == "gave up after 5.0 seconds waiting for the end of toast \"q\"")
    }

    @Test("outcome(of:timeout:) answers with the end when it comes first, and the alarm goes")
    func outcomeBeforeTheTimeout() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "a", title: "A", duration: 2))
        let waiting = Task { try await h.center.outcome(of: "a", timeout: .seconds(60)) }
        try await h.clock.sleepers(count: 2)  // the toast's timer and the alarm
        h.clock.advance(by: .seconds(2))
        #expect(try await waiting.value == .expired)
        try await h.clock.sleepers(atMost: 0)
        await #expect(throws: ToastCenterError.notPresented(id: "nope")) {
            try await h.center.outcome(of: "nope", timeout: .seconds(1))
        }
    }

    @Test("presentAndWait(_:timeout:) dismisses the toast it gave up on")
    func presentAndWaitTimesOut() async throws {
        let h = Harness()
        let waiting = Task {
            try await h.center.presentAndWait(
                ToastMessage(id: "q", title: "¿Guardar?", duration: .indefinite), timeout: .seconds(3))
        }
        try await h.clock.sleepers(count: 1)
        try await h.presenter.commands(count: 1)
        h.clock.advance(by: .seconds(3))
        await #expect(throws: ToastCenterError.self) { try await waiting.value }
        await h.log.waitFor(.ended(id: "q", outcome: .closedByApp))
        #expect(h.center.liveToastIDs.isEmpty)
        #expect(h.presenter.commandSummaries == ["show q", "close q closedByApp"])
    }

    @Test("presentAndWait(_:timeout:) returns the end when it comes in time")
    func presentAndWaitInTime() async throws {
        let h = Harness()
        let waiting = Task {
            try await h.center.presentAndWait(.normal, title: "Hecho", duration: 1, timeout: .seconds(10))
        }
        try await h.clock.sleepers(count: 2)
        h.clock.advance(by: .seconds(1))
        #expect(try await waiting.value == .expired)
    }

    @Test("presentAndWait(_:timeout:) counts only the time its toast is on screen (issue 43)")
    func presentAndWaitCountsFromTheToastOnScreen() async throws {
        let h = Harness()
        // A timed toast in front: the question waits behind it (maxVisible 1), longer than its timeout.
        h.center.present(ToastMessage(id: "synced", title: "Sincronizado", duration: 10))
        let waiting = Task {
            try await h.center.presentAndWait(
                ToastMessage(id: "q", title: "¿Guardar?", duration: .indefinite), timeout: .seconds(3))
        }
        await h.log.waitFor(.presented(id: "q"))
        try await h.clock.sleepers(count: 1)  // the front toast's timer; no alarm while the question waits unseen
        h.clock.advance(by: .seconds(5))
        #expect(h.center.liveToastIDs == ["synced", "q"], "not timed out unseen")
        h.clock.advance(by: .seconds(5))
        await h.log.waitFor(.shown(id: "q"))
        try await h.clock.sleepers(count: 1)  // now the alarm: the question is on screen
        h.clock.advance(by: .seconds(2))
        #expect(h.center.liveToastIDs == ["q"])
        h.clock.advance(by: .seconds(1))
        await #expect(throws: ToastCenterError.timedOut(waitingFor: "the end of toast \"q\"", after: .seconds(3))) {
            try await waiting.value
        }
        await h.log.waitFor(.ended(id: "q", outcome: .closedByApp))
    }

    @Test("flush(timeout:) gives up on a presenter that never finishes, and on a handler that never returns")
    func flushTimesOut() async throws {
        let stuck = StuckPresenter()
        let clock = ManualClock()
        let center = ToastCenter(presenter: stuck, clock: clock)
        center.present(ToastMessage(id: "a", title: "A", duration: .indefinite))
        let flushing = Task { try await center.flush(timeout: .milliseconds(500)) }
        try await clock.sleepers(count: 1)
        clock.advance(by: .milliseconds(500))
        await #expect(
            throws: ToastCenterError.timedOut(
                waitingFor: "the presenter to finish with the toasts", after: .milliseconds(500))
        ) {
            try await flushing.value
        }
        stuck.release()

        let h = Harness()
        let gate = Gate()
        let slow = ToastAction(id: "slow", title: "Lento") { _ in await gate.wait() }
        h.center.present(ToastMessage(id: "s", title: "S", tapAction: slow))
        try h.presenter.invokeAction("slow", on: "s")
        await h.log.waitFor(.ended(id: "s", outcome: .action("slow")))  // the end did not wait for the handler
        let waiting = Task { try await h.center.flush(timeout: .seconds(1)) }
        try await h.clock.sleepers(count: 1)
        h.clock.advance(by: .seconds(1))
        await #expect(throws: ToastCenterError.self) { try await waiting.value }
        gate.open()
        await h.center.flush()
    }

    @Test("a cancelled wait with a timeout throws CancellationError at once")
    func cancelledTimeout() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "a", title: "A", duration: .indefinite))
        let waiting = Task { try await h.center.outcome(of: "a", timeout: .seconds(100)) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(h.center.liveToastIDs == ["a"])
    }

    // MARK: - Durations

    @Test("ToastDuration from Swift.Duration, to the nanosecond")
    func durations() throws {
        #expect(ToastDuration(.milliseconds(1500)) == .seconds(1.5))
        #expect(ToastDuration.milliseconds(250) == .seconds(0.25))
        #expect(try ToastDuration.seconds(1.9).resolved(default: 4) == .milliseconds(1900))
        #expect(try ToastDuration.seconds(0.1).resolved(default: 4) == .milliseconds(100))
        #expect(try ToastDuration(.seconds(2) + .nanoseconds(1)).resolved(default: 4) == .nanoseconds(2_000_000_001))
        #expect(throws: ToastValidationError.self) { try ToastDuration(.seconds(-1)).resolved(default: 4) }
    }

    @Test("a 1.9 s toast has ended after 1900 ms of manual time (the old attosecond pitfall)")
    func nanosecondDurationsAddUp() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "a", title: "A", duration: 1.9))
        try await h.clock.sleepers(count: 1)
        h.clock.advance(by: .milliseconds(1800) + .milliseconds(100))
        await h.log.waitFor(.ended(id: "a", outcome: .expired))
    }

    // MARK: - Async handlers

    @Test("an async handler is started before the observer and the effect, which do not wait for it")
    func asyncHandlerOrder() async throws {
        let h = Harness()
        let trace = Trace()
        let gate = Gate()
        let action = ToastAction.withContext(id: "go", title: "Ir") { context in
            trace.append("started \(context.actionID)")
            await gate.wait()
            trace.append("finished")
        }
        h.center.onToastAction = { _ in trace.append("observer") }
        h.center.present(ToastMessage(id: "g", title: "G", swipeActions: ToastSwipeActions(leading: action)))
        try h.presenter.invokeAction("go", on: "g")
        await h.log.waitFor(.ended(id: "g", outcome: .action("go")))
        #expect(trace.all.contains("observer"))
        #expect(!trace.all.contains("finished"))
        gate.open()
        await h.center.flush()
        #expect(trace.all.last == "finished")
        #expect(Set(trace.all) == ["started go", "observer", "finished"])
    }

    @Test("an async handler may flush and may present and wait: neither waits for the handler itself")
    func handlersThatWaitOnTheCenter() async throws {
        let h = Harness()
        let trace = Trace()
        let center = h.center
        let flushing = ToastAction(id: "flush", title: "F") { _ in
            await center.flush()
            trace.append("flushed")
        }
        let asking = ToastAction(id: "ask", title: "A") { _ in
            let outcome = await center.presentAndWait(
                ToastMessage(id: "follow", title: "¿Seguro?", duration: .indefinite))
            trace.append("follow-up \(outcome)")
        }
        h.center.present(ToastMessage(id: "a", title: "A", tapAction: flushing))
        try h.presenter.invokeAction("flush", on: "a")
        h.center.present(ToastMessage(id: "b", title: "B", tapAction: asking))
        try h.presenter.invokeAction("ask", on: "b")
        await h.log.waitFor(.shown(id: "follow"))
        h.presenter.dismissByUser("follow")
        try await h.center.flush(timeout: .seconds(60))
        #expect(Set(trace.all) == ["flushed", "follow-up dismissed"])
    }

    @Test("a presentAndWait(_:timeout:) cancelled at once still dismisses its toast")
    func cancelledAtOnceDismisses() async throws {
        let h = Harness()
        for index in 0..<50 {
            let waiting = Task {
                try await h.center.presentAndWait(
                    ToastMessage(id: "q\(index)", title: "Q", duration: .indefinite), timeout: .seconds(100))
            }
            waiting.cancel()
            #expect(try await waiting.value == .closedByApp)
        }
        #expect(h.center.liveToastIDs.isEmpty)
    }

    @Test("runHandler hands back the task of an async handler, and nil for a plain one")
    func runHandlerTask() async {
        let trace = Trace()
        let message = ToastMessage(title: "T")
        let plain = ToastAction(title: "P") { _ in trace.append("plain") }
        let later = plain.withHandler { (_: ToastActionContext) async in trace.append("async") }
        #expect(plain.runHandler(ToastActionContext(toast: message, actionID: "P")) == nil)
        await later.runHandler(ToastActionContext(toast: message, actionID: "P"))?.value
        #expect(trace.all == ["plain", "async"])
        #expect(plain == later, "actions compare by what they show and do, not by their handler")
    }

    // MARK: - Codable and ==

    @Test("a message, its actions, outcomes and events have documented JSON forms")
    func jsonForms() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func json(_ value: some Encodable) throws -> String {
            String(decoding: try encoder.encode(value), as: UTF8.self)
        }

        let message = ToastMessage(
            id: "m", status: .success, title: "Listo", message: "3 fotos", icon: .system("photo"), duration: 6,
            tapAction: ToastAction(id: "open", title: "Abrir"),
            swipeActions: ToastSwipeActions(
                leading: ToastAction(id: "archive", title: "Archivar", confirmation: "Archivado"), trailing: .later))
        #expect(
            try json(message)
                == #"{"duration":6,"icon":{"system":"photo"},"id":"m","message":"3 fotos","status":"success","#
                + #""swipeActions":{"leading":{"confirmation":"Archivado","effect":"dismiss","id":"archive","#
                + #""title":"Archivar"},"trailing":{"builtInLabel":"later","effect":"later","id":"later","title":"Later"}},"#
                + #""tapAction":{"effect":"dismiss","id":"open","title":"Abrir"},"title":"Listo"}"#)
        let decoded = try JSONDecoder().decode(ToastMessage.self, from: try encoder.encode(message))
        #expect(decoded == message)
        #expect(decoded.hashValue == message.hashValue)
        #expect(decoded.swipeActions?.trailing?.effect == .later)

        let snooze = ToastAction.later(after: .seconds(600))
        #expect(
            try json(snooze)
                == #"{"builtInLabel":"later","effect":"later","id":"later","snoozeSeconds":600,"title":"Later"}"#)
        #expect(try JSONDecoder().decode(ToastAction.self, from: try encoder.encode(snooze)) == snooze)
        #expect(snooze != .later, "the snooze is part of what the action does")

        let copying = ToastMessage(id: "c", title: "Copiando", progress: .fraction(0.4))
        #expect(try json(copying).contains(#""progress":0.4"#))
        #expect(try JSONDecoder().decode(ToastMessage.self, from: try encoder.encode(copying)) == copying)
        let under = ToastMessage(id: "u", title: "Buscando", progress: .indeterminate)
        #expect(try JSONDecoder().decode(ToastMessage.self, from: try encoder.encode(under)).progress == .indeterminate)

        let minimal = try JSONDecoder().decode(ToastMessage.self, from: Data(#"{"title":"Hola"}"#.utf8))
        #expect(minimal.status == .normal && minimal.duration == .automatic && !minimal.id.isEmpty)

        #expect(try json(ToastOutcome.actionInvoked(actionID: "open")) == #"{"actionInvoked":{"actionID":"open"}}"#)
        #expect(try json(ToastOutcome.expired) == #"{"expired":{}}"#)
        #expect(
            try json(ToastOutcome.failed(.invalid(ToastValidationError(field: "title", reason: "empty"))))
                == #"{"failed":{"failure":{"invalid":{"error":{"field":"title","reason":"empty"}}}}}"#)
        #expect(
            try json(ToastEvent.ended(id: "A", outcome: .dismissed))
                == #"{"ended":{"id":"A","outcome":{"dismissed":{}}}}"#)
        let events: [ToastEvent] = [
            .presented(id: "A"), .shown(id: "A"), .updated(id: "A"),
            .actionInvoked(id: "A", actionID: "open", activationToken: nil),
            .degraded(id: nil, reason: "no actions"), .presenterFailed(id: "A", reason: "gone"),
            .laterStoreProblem(LaterStoreProblem(kind: .corrupt, location: URL(fileURLWithPath: "/x"), detail: "bad")),
            .ended(id: "A", outcome: .failed(.presenter(reason: "refused"))),
        ]
        #expect(try JSONDecoder().decode([ToastEvent].self, from: try encoder.encode(events)) == events)
        let durations: [ToastDuration] = [.automatic, .indefinite, 2.5]
        #expect(try JSONDecoder().decode([ToastDuration].self, from: try encoder.encode(durations)) == durations)
        let icons: [ToastIcon] = [.system("a"), .file("/b.png"), .image(width: 1, height: 1, rgba: [1, 2, 3, 4])]
        #expect(try JSONDecoder().decode([ToastIcon].self, from: try encoder.encode(icons)) == icons)
    }

    // MARK: - The testing presenter

    @Test("invokeAction takes the action's own id or its key, and names what is on offer when neither matches")
    func invokeActionChecks() async throws {
        let h = Harness()
        let tap = ToastAction(id: "open", title: "Abrir")
        let message = ToastMessage(
            id: "p", title: "Foto", tapAction: tap,
            swipeActions: ToastSwipeActions(leading: ToastAction(title: "Borrar")))
        h.center.present(message)
        do {
            try h.presenter.invokeAction("share", on: "p")
            Issue.record("an action the toast does not offer was invoked")
        } catch {
            #expect(
                error.description
                    == #"RecordingPresenter: toast "p" has no action "share"; on offer: "default" (id "open"), "Borrar""#
            )
        }
        #expect(throws: ToastTestingMismatch.self) { try h.presenter.invokeAction("open", on: "other") }
        try h.presenter.invokeAction("open", on: "p")
        #expect(try await h.center.outcome(of: "p", timeout: .seconds(1)) == .action("open"))
        h.center.present(message)
        try h.presenter.invokeAction(ToastActionRole.tapKey, on: "p")
        #expect(try await h.center.outcome(of: "p", timeout: .seconds(1)) == .action("open"))
    }
}

/// A presenter whose flush does not return until released: a notification server that never answers.
private final class StuckPresenter: ToastPresenter {
    private let gate = Gate()
    func connect(_ events: ToastPresenterEvents) {}
    func show(_ presentation: ToastPresentation) {}
    func update(_ presentation: ToastPresentation) {}
    func close(id: String, reason: ToastCloseReason) {}
    func flush() async { await gate.wait() }
    func release() { gate.open() }
}

/// Waiters that go on once it is open.
private final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
