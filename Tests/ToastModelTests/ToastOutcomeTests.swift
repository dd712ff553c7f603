import Synchronization
import Testing
import ToastKitTesting
import ToastModel

/// Awaiting a toast's end from the library (issue 15): `outcome(of:)`, `presentAndWait`, `flush()`, and failures
/// that nobody listens to reaching the diagnostics.
@Suite("Awaiting outcomes", .timeLimit(.minutes(1)))
struct ToastOutcomeTests {
    @Test("outcome(of:) waits for the current presentation's end; an ended id answers at once")
    func outcomeOfALiveToast() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "copied", title: "Copiado", duration: 2))
        async let outcome = h.center.outcome(of: "copied")
        try await h.clock.sleepers(count: 1)
        h.clock.advance(by: .seconds(2))
        #expect(try await outcome == .expired)
        #expect(try await h.center.outcome(of: "copied") == .expired, "remembered after the end")
        await #expect(throws: ToastCenterError.notPresented(id: "never")) { try await h.center.outcome(of: "never") }
    }

    @Test("a waiter on a toast that is replaced gets .replaced; presentAndWait of the new content gets its own end")
    func replacedAndItsReplacement() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "sync", title: "Sincronizando…", duration: .indefinite))
        // Started at once, so its wait is queued before the replacement below (with `async let` the replacement could
        // come first; this wait then belonged to the new content, which ends only when the clock moves: a hang).
        let first = Task.immediate { try await h.center.outcome(of: "sync") }
        async let second = h.center.presentAndWait(ToastMessage(id: "sync", status: .success, title: "Sincronizado"))
        #expect(try await first.value == .replaced)
        try await h.clock.sleepers(count: 1)
        h.clock.advance(by: .seconds(4))
        #expect(await second == .expired)
    }

    @Test("presentAndWait returns the invoked action, and an invalid message's failure at once")
    func presentAndWaitReturnsTheAction() async throws {
        let h = Harness()
        let save = ToastAction(id: "save", title: "Guardar")
        let waiting = Task {
            await h.center.presentAndWait(
                ToastMessage(id: "ask", title: "¿Guardar?", swipeActions: ToastSwipeActions(leading: save)))
        }
        try await h.presenter.commands(count: 1)
        try h.presenter.invokeAction("save", on: "ask")
        #expect(await waiting.value == .actionInvoked(actionID: "save"))
        let invalid = await h.center.presentAndWait(ToastMessage(id: "bad", title: ""))
        guard case .failed(.invalid) = invalid else {
            Issue.record("expected .failed(.invalid), got \(invalid)")
            return
        }
    }

    @Test("cancelling presentAndWait dismisses the toast and returns .closedByApp")
    func cancellingDismisses() async throws {
        let h = Harness()
        let waiting = Task { await h.center.presentAndWait(.normal, title: "Esperando", duration: .indefinite) }
        try await h.presenter.commands(count: 1)
        waiting.cancel()
        #expect(await waiting.value == .closedByApp)
        #expect(h.center.liveToastIDs.isEmpty)
        #expect(h.presenter.commandSummaries.last?.hasPrefix("close") == true)
    }

    @Test("a cancelled outcome(of:) throws CancellationError and leaves the toast alone")
    func cancellingOutcomeOf() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "a", title: "A", duration: .indefinite))
        let waiting = Task { try await h.center.outcome(of: "a") }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(h.center.liveToastIDs == ["a"])
    }

    @Test("flush returns once the presenter has everything (the recording presenter has nothing in flight)")
    func flushReturns() async {
        let h = Harness()
        h.center.present(ToastMessage(id: "a", title: "A"))
        await h.center.flush()
        #expect(h.presenter.commandSummaries == ["show a"])
    }

    @Test("failures nobody listens to go to the diagnostics, once per kind; a listener silences them")
    func unheardFailuresReachTheDiagnostics() async {
        let lines = Mutex<[String]>([])
        let presenter = RecordingPresenter()
        let center = ToastCenter(presenter: presenter, laterStore: nil)
        center.diagnostics = .custom { line in lines.withLock { $0.append(line) } }
        center.present(ToastMessage(id: "a", title: "A"))
        center.present(ToastMessage(id: "b", title: "B"))
        presenter.fail(nil, reason: "no notification server is running", recoverable: true)
        presenter.fail(nil, reason: "no notification server is running", recoverable: true)
        presenter.degrade("a", reason: "the server does not support actions: 1 dropped (archive)")
        center.present(ToastMessage(id: "c", title: ""))
        center.present(ToastMessage(id: "d", title: ""))
        #expect(
            lines.withLock { $0 } == [
                "cannot show toasts: no notification server is running",
                "toast degraded: the server does not support actions: 1 dropped (archive)",
                "toast \"c\" failed: invalid toast: title: a toast needs a title or a message; both are empty",
            ])

        let heard = Mutex<[String]>([])
        let listened = ToastCenter(presenter: RecordingPresenter(), laterStore: nil)
        listened.diagnostics = .custom { line in heard.withLock { $0.append(line) } }
        listened.onEvent = { _ in }
        listened.present(ToastMessage(id: "c", title: ""))
        #expect(heard.withLock { $0 }.isEmpty)
    }

    @Test("releasing a center with live toasts that have actions says so through the diagnostics")
    func releasingACenterWithActionsWarns() {
        let lines = Mutex<[String]>([])
        let presenter = RecordingPresenter()
        do {
            let center = ToastCenter(presenter: presenter, laterStore: nil)
            center.diagnostics = .custom { line in lines.withLock { $0.append(line) } }
            center.present(ToastMessage(id: "plain", title: "Sin acciones"))
            center.present(
                ToastMessage(
                    id: "mail", title: "Mensaje de Ana", tapAction: ToastAction(id: "open", title: "Abrir")))
        }
        #expect(
            lines.withLock { $0 } == [
                "a ToastCenter was released with 1 live toast(s) with actions (\"mail\"): they stay on screen until "
                    + "their server timeout or until closed, and their actions do nothing; keep the center alive, or "
                    + "call dismissAll() first"
            ])
    }
}
