// Waiting on a center: for the presenter (flush), for a toast's end (outcome, presentAndWait), and where failures go
// that no listener heard (diagnostics). The bounded waits are ToastCenter+Timeouts.swift's.
import Glibc
import Synchronization

extension ToastCenter {
    // MARK: - Waiting for the presenter and for outcomes

    /// Returns once every toast presented so far has been handed to the presenter and the presenter has finished
    /// with it: on the desktop, the notification server has accepted it (or it failed, which is reported as an
    /// event). A short-lived program calls this before it exits, so its toasts are not lost with the process:
    ///
    /// ```swift
    /// let toasts = ToastCenter()
    /// toasts.present(.success, title: "Copia terminada")
    /// await toasts.flush()
    /// ```
    ///
    /// It also waits for the `async` action handlers still running (and for what they present), so their work is
    /// not cut short when the program exits — except the handler that calls it, and the handlers that started it:
    /// a handler may flush. It waits as long as that takes: with no notification server, or a handler that never
    /// returns, that is for ever. Use ``flush(timeout:)`` to bound it.
    public func flush() async {
        let own = RunningHandler.keys
        while true {
            await flushPresenter()
            let running = state.withLock { $0.runningHandlers.filter { !own.contains($0.key) } }
            if running.isEmpty || Task.isCancelled { return }
            for (key, handler) in running {
                await handler.value
                _ = state.withLock { $0.runningHandlers.removeValue(forKey: key) }
            }
        }
    }

    /// Returns once everything handed to the presenter so far is done there, and what it reported meanwhile
    /// (failures, degradations) has been delivered as events too. The handlers are not waited for.
    func flushPresenter() async {
        // A presenter that reports Do Not Disturb is handed nothing before its first report: once that came, what
        // it let through is flushed too.
        var awaitedDoNotDisturb = state.withLock { $0.stack.isAwaitingDoNotDisturb }
        while true {
            await drained()
            await presenter?.flush()
            await drained()
            let awaiting = state.withLock { $0.stack.isAwaitingDoNotDisturb }
            guard awaitedDoNotDisturb, !awaiting else { return }
            awaitedDoNotDisturb = false
        }
    }

    /// ``flush()``, giving up after `timeout` on the center's clock.
    ///
    /// ```swift
    /// toasts.present(.success, title: "Copia terminada")
    /// try await toasts.flush(timeout: .seconds(2))
    /// ```
    /// - Throws: ``ToastCenterError/timedOut(waitingFor:after:)`` when the presenter (or a handler) has not finished
    ///   by then: for example, no notification server answers. The toasts are not affected. `CancellationError`
    ///   when the waiting task is cancelled.
    public func flush(timeout: Duration) async throws {
        try await withTimeout(timeout, waitingFor: "the presenter to finish with the toasts") {
            await self.flush()
        }
    }

    /// Returns once the events of everything the center has been told so far — by the app and by the presenter's
    /// reports already handed over — have been delivered to ``onEvent`` and the subscribers (by whichever thread was
    /// delivering them). Unlike ``flush()`` it does not wait for the presenter.
    public func eventsDelivered() async {
        await drained()
    }

    /// Returns once the center's queued work has been carried out (by whichever thread was doing it).
    private func drained() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                guard state.isDraining || !state.outbox.isEmpty else { return true }
                state.drainWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Waits for the end of the current presentation of `id` and returns its outcome — the action invoked,
    /// dismissed, expired, closed by the app, replaced, deferred or failed.
    ///
    /// A toast that has already ended answers at once (the last 256 ids are remembered); if it is presented again
    /// meanwhile, the new presentation is the one awaited.
    ///
    /// - Throws: ``ToastCenterError/notPresented(id:)`` for an id that is neither live nor recently ended;
    ///   `CancellationError` when the waiting task is cancelled (the toast itself is not affected).
    public func outcome(of id: String) async throws -> ToastOutcome {
        try await waitForOutcome(of: id) {}
    }

    /// ``outcome(of:)``, giving up after `timeout` on the center's clock (a ``ToastKitTesting`` `ManualClock` in
    /// tests: the timeout passes when the test advances it).
    ///
    /// ```swift
    /// let outcome = try await toasts.outcome(of: "subida", timeout: .seconds(30))
    /// ```
    /// - Throws: ``ToastCenterError/timedOut(waitingFor:after:)`` when the toast has not ended by then (it stays as it
    ///   is: dismiss it if it should go); ``ToastCenterError/notPresented(id:)`` and `CancellationError` as
    ///   ``outcome(of:)`` does.
    public func outcome(of id: String, timeout: Duration) async throws -> ToastOutcome {
        try await withTimeout(timeout, waitingFor: "the end of toast \"\(id)\"") {
            try await self.waitForOutcome(of: id) {}
        }
    }

    /// Presents `message` and waits for its end: the library's `toastkit send --wait`.
    ///
    /// ```swift
    /// let save = ToastAction(id: "save", title: "Guardar")
    /// let outcome = await toasts.presentAndWait(ToastMessage(
    ///     title: "¿Guardar los cambios?", swipeActions: ToastSwipeActions(leading: save, trailing: .dismiss)))
    /// if case .actionInvoked("save") = outcome { document.save() }
    /// ```
    ///
    /// It returns once the toast's end has reached the presenter's server too (as ``flush()``: the close of an
    /// expired or acted-on notification is answered), so a program may exit right after it without leaving the
    /// notification on screen.
    ///
    /// Cancelling the waiting task dismisses the toast (``ToastOutcome/closedByApp``) and returns that outcome.
    public func presentAndWait(_ message: ToastMessage) async -> ToastOutcome {
        let outcome: ToastOutcome
        do {
            outcome = try await waitForOutcome(of: message.id) { self.present(message) }
        } catch {
            // Cancelled: the toast goes too, and its end is the answer.
            dismiss(id: message.id)
            outcome = (try? await self.outcome(of: message.id)) ?? .closedByApp
        }
        // The end was decided here; the close that carries it to the server may still be on its way.
        await flushPresenter()
        return outcome
    }

    /// Presents a simple toast and waits for its end (see ``presentAndWait(_:)``).
    public func presentAndWait(
        _ status: ToastStatus, title: String, message: String? = nil, icon: ToastIcon? = nil,
        duration: ToastDuration = .automatic
    ) async -> ToastOutcome {
        await presentAndWait(
            ToastMessage(status: status, title: title, message: message, icon: icon, duration: duration))
    }

    /// Runs `start` (a present, or nothing), then waits for the end of `id`'s presentation: the waiter goes into the
    /// center's work queue behind what `start` produced, so an earlier presentation it replaced is not mistaken for
    /// it.
    func waitForOutcome(of id: String, after start: @Sendable () -> Void) async throws -> ToastOutcome {
        let key = state.withLock { state in
            state.nextOutcomeWaiter &+= 1
            return state.nextOutcomeWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                start()
                mutateAndDrain { state, _ in
                    state.outbox.append(.awaitOutcome(id, key: key, continuation))
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<ToastOutcome, any Error>? in
                guard let index = state.outcomeWaiters[id]?.firstIndex(where: { $0.key == key }) else {
                    // Not registered yet (its work item is still queued): it answers "cancelled" when it is.
                    state.cancelledOutcomeWaiters.insert(key)
                    return nil
                }
                return state.outcomeWaiters[id]?.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    // MARK: - Diagnostics

    /// Where failures and degradations go when nobody reads the center's events (no ``onEvent`` and no
    /// ``events()`` stream): standard error by default, each kind once, so a failing toast is never silent.
    public var diagnostics: ToastDiagnostics {
        get { state.withLock { $0.diagnostics } }
        set { state.withLock { $0.diagnostics = newValue } }
    }

    /// Hands a failure or degradation nobody else heard to the diagnostics, once per kind.
    func diagnose(_ event: ToastEvent) {
        let line: String
        switch event {
        case .presenterFailed(_, let reason): line = "cannot show toasts: \(reason)"
        case .degraded(_, let reason): line = "toast degraded: \(reason)"
        case .laterStoreProblem(let problem): line = "later store: \(problem)"
        case .ended(let id, .failed(let failure)): line = "toast \"\(id)\" failed: \(failure)"
        default: return
        }
        report(line, kind: Self.kind(of: event, line: line))
    }

    /// Writes `line` through the diagnostics, once per `kind`.
    func report(_ line: String, kind: String) {
        let diagnostics = state.withLock { state -> ToastDiagnostics? in
            guard state.reportedDiagnostics.count < 1024, state.reportedDiagnostics.insert(kind).inserted else {
                return nil
            }
            return state.diagnostics
        }
        diagnostics?.write(line)
    }

    /// The "kind" a diagnostic is deduplicated by: the reason, without the toast's id.
    private static func kind(of event: ToastEvent, line: String) -> String {
        if case .ended(_, .failed(let failure)) = event { return "failed: \(failure)" }
        return line
    }
}

/// Where a ``ToastCenter`` sends failures and degradations that no event listener heard.
public enum ToastDiagnostics: Sendable {
    /// One line on standard error per kind, starting with `toastkit: ` (the default).
    case standardError
    /// Nothing: the app accepts that unheard failures are lost.
    case silent
    /// A closure of the app's (a logger), called once per kind with the line.
    case custom(@Sendable (String) -> Void)

    func write(_ line: String) {
        switch self {
        case .standardError:
            let text = "toastkit: \(line)\n"
            _ = text.utf8CString.withUnsafeBufferPointer { buffer in
                Glibc.write(2, buffer.baseAddress, buffer.count - 1)
            }
        case .silent:
            break
        case .custom(let handler):
            handler(line)
        }
    }
}

/// The `async` action handlers the current task runs in (their keys in ``ToastCenterState/runningHandlers``), so
/// that a handler's own ``ToastCenter/flush()`` does not wait for itself.
enum RunningHandler {
    @TaskLocal static var keys: Set<UInt64> = []
}
