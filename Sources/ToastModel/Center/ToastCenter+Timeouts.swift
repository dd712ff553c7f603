// The center's waits with a bound: a toast presented and awaited whose clock starts when it is on screen, and the race
// of a wait against the center's clock that every timed wait (flush, outcome, presentAndWait) runs.
import Synchronization

extension ToastCenter {
    /// ``presentAndWait(_:)``, giving up after `timeout` of the toast's time on screen, on the center's clock.
    ///
    /// ```swift
    /// let outcome = try await toasts.presentAndWait(question, timeout: .seconds(60))
    /// ```
    /// The timeout counts from the moment the toast is handed to the presenter: a toast that waits behind the front
    /// one (``maxVisible``), for a presenter to be attached, or while Do Not Disturb holds it, is not timed out before
    /// anyone could see it, however long it waits (cancel the waiting task to give up on it). When the toast ends
    /// in time, its end is carried to the server within what is left of `timeout` (a close that takes longer is left
    /// on its way, and the outcome is still returned). Cancelling the waiting task dismisses the toast and returns
    /// that outcome, as ``presentAndWait(_:)`` does.
    /// - Throws: ``ToastCenterError/timedOut(waitingFor:after:)`` when the toast has not ended by then; the toast is
    ///   then dismissed (``ToastOutcome/closedByApp``), so it does not turn up later with nobody waiting for it.
    public func presentAndWait(_ message: ToastMessage, timeout: Duration) async throws -> ToastOutcome {
        let id = message.id
        let onScreenSince = Mutex<Duration?>(nil)
        // Presented here, before the race starts, so a cancel or a timeout that comes at once finds the toast to
        // dismiss; the waiter is queued behind the presentation's own work, so a presentation it replaced is not
        // mistaken for it.
        present(message)
        let outcome: ToastOutcome
        do {
            outcome = try await withTimeout(
                timeout, waitingFor: "the end of toast \"\(id)\"",
                startingWhen: {
                    await self.onScreen(id)
                    onScreenSince.withLock { $0 = self.time.now() }
                }
            ) {
                try await self.waitForOutcome(of: id) {}
            }
        } catch let error as ToastCenterError {
            dismiss(id: id)
            throw error
        } catch {
            dismiss(id: id)
            return (try? await self.outcome(of: id)) ?? .closedByApp
        }
        let left = (onScreenSince.withLock { $0 } ?? time.now()) + timeout - time.now()
        if left > .zero {
            try? await withTimeout(left, waitingFor: "the presenter to close toast \"\(id)\"") {
                await self.flushPresenter()
            }
        }
        return outcome
    }

    /// Returns once toast `id` is on the presenter: at once when it is, else at its ``ToastEvent/shown(id:)``; or when
    /// the task is cancelled. Registered under the lock that tells whether it is on the presenter, so a `shown` that
    /// comes meanwhile is not missed.
    private func onScreen(_ id: String) async {
        await eventsDelivered()
        let key = state.withLock { state in
            state.nextShownWaiter &+= 1
            return state.nextShownWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.cancelledShownWaiters.remove(key) != nil || state.stack.isOnPresenter(id) { return true }
                    state.shownWaiters[id, default: []].append((key, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.shownWaiters[id]?.firstIndex(where: { $0.key == key }) else {
                    state.cancelledShownWaiters.insert(key)
                    return nil
                }
                let waiter = state.shownWaiters[id]?.remove(at: index).continuation
                if state.shownWaiters[id]?.isEmpty == true { state.shownWaiters[id] = nil }
                return waiter
            }
            waiter?.resume()
        }
    }

    /// Presents a simple toast and waits for its end, giving up after `timeout` (see
    /// ``presentAndWait(_:timeout:)``).
    public func presentAndWait(
        _ status: ToastStatus, title: String, message: String? = nil, icon: ToastIcon? = nil,
        duration: ToastDuration = .automatic, timeout: Duration
    ) async throws -> ToastOutcome {
        try await presentAndWait(
            ToastMessage(status: status, title: title, message: message, icon: icon, duration: duration),
            timeout: timeout)
    }

    /// Runs `operation` until it returns, or until `timeout` has passed on the center's clock, whichever comes
    /// first; then the other is cancelled. `operation` runs in a task of its own: one that ignores cancellation
    /// (a flush) is left to finish on its own.
    ///
    /// With `startingWhen`, the timeout counts from when that returns (a toast's first moment on screen).
    func withTimeout<T: Sendable>(
        _ timeout: Duration, waitingFor what: String, startingWhen start: (@Sendable () async -> Void)? = nil,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = TimeoutRace<T>()
        let time = self.time
        let now = start == nil ? time.now() : nil
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.start(
                    continuation,
                    work: Task {
                        do {
                            race.finish(.success(try await operation()))
                        } catch {
                            race.finish(.failure(error))
                        }
                    },
                    alarm: Task {
                        await start?()
                        let deadline = (now ?? time.now()) + timeout
                        do { try await time.sleep(deadline) } catch { return }
                        race.finish(.failure(ToastCenterError.timedOut(waitingFor: what, after: timeout)))
                    })
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }
}

/// Errors of ``ToastCenter``'s waiting calls.
public enum ToastCenterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No toast with this id is live, and none ended recently.
    case notPresented(id: String)
    /// A wait with a timeout (``ToastCenter/outcome(of:timeout:)``, ``ToastCenter/flush(timeout:)``,
    /// ``ToastCenter/presentAndWait(_:timeout:)``) gave up: `waitingFor` says what for, in words.
    case timedOut(waitingFor: String, after: Duration)

    /// The reason, in words.
    public var description: String {
        switch self {
        case .notPresented(let id): "no toast \"\(id)\" is live or ended recently"
        case .timedOut(let what, let timeout): "gave up after \(timeout) waiting for \(what)"
        }
    }
}

/// One wait against a deadline: whichever of the work and the alarm finishes first answers, once, and cancels the
/// other.
final class TimeoutRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var tasks: [Task<Void, Never>] = []
        /// The answer, when it came before the continuation was handed over (a cancelled caller).
        var early: Result<T, any Error>?
        var done = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>, work: Task<Void, Never>, alarm: Task<Void, Never>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if state.done { return state.early }
            state.continuation = continuation
            state.tasks = [work, alarm]
            return nil
        }
        if let early {
            work.cancel()
            alarm.cancel()
            continuation.resume(with: early)
        }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, tasks) = state.withLock {
            state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard !state.done else { return (nil, []) }
            state.done = true
            guard let continuation = state.continuation else {
                state.early = result
                return (nil, [])
            }
            defer {
                state.continuation = nil
                state.tasks = []
            }
            return (continuation, state.tasks)
        }
        for task in tasks { task.cancel() }
        continuation?.resume(with: result)
    }
}
