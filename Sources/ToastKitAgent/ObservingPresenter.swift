import Synchronization
package import ToastKit
import ToastModel

/// Wraps the desktop (or portal) presenter to see what the center does with it and what it reports to the center:
/// - when the center closes a toast (an action's confirmation outlives the toast's terminal event, and the command
///   must not exit before the center has closed it);
/// - the presenter's reports as they go to the center (the server leaving and coming back, screen-lock pauses),
///   for ``Waiter``'s own limits;
/// - a close the server did not explain (`NotificationClosed` reason 4 or an unknown one), which the model reports
///   as a dismissal.
package final class ObservingPresenter: ToastPresenter {
    package let desktop: any ToastPresenter
    /// The presenter's reports to the center, in order (one consumer).
    package let reports: AsyncStream<ToastPresenterReport>
    private let reportContinuation: AsyncStream<ToastPresenterReport>.Continuation

    private struct State {
        /// Bounded: the agent is long-lived, and only a recent close is ever awaited.
        var closedByCenter = Recents<Bool>(capacity: 4096)
        var closeWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
        var unexplainedCloses = Recents<String>(capacity: 4096)
    }
    private let state = Mutex(State())

    package init(_ desktop: DesktopNotificationPresenter) {
        self.desktop = desktop
        (reports, reportContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    package init(_ portal: PortalNotificationPresenter) {
        desktop = portal
        (reports, reportContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    deinit { reportContinuation.finish() }

    /// Waits until the center has closed `id` on the presenter, or `limit` has passed.
    package func waitForClose(of id: String, limit: Duration) async {
        let timeout = Task {
            try? await Task.sleep(for: limit)
            self.closed(id)
        }
        defer { timeout.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.closedByCenter[id] != nil { return true }
                state.closeWaiters[id, default: []].append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// What the server said when it last closed `id` for a reason it did not explain (reason 4, "undefined", or
    /// an unknown number), or nil when its last close was an explained one.
    package func unexplainedClose(of id: String) -> String? {
        state.withLock { $0.unexplainedCloses[id] }
    }

    private func closed(_ id: String) {
        let waiters = state.withLock { state in
            state.closedByCenter.remember(true, for: id)
            return state.closeWaiters.removeValue(forKey: id) ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Connects the wrapped presenter to the center through a sink that notes each report first.
    package func connect(_ events: ToastPresenterEvents) {
        let observed = ToastPresenterEvents { [weak self] report in
            if let self {
                if case .closed(let id, let reason) = report {
                    state.withLock { state in
                        if case .other(let text) = reason {
                            state.unexplainedCloses.remember(
                                text ?? "closed by the notification server for a reason it did not give", for: id)
                        } else {
                            state.unexplainedCloses.forget(id)
                        }
                    }
                }
                reportContinuation.yield(report)
            }
            events.send(report)
        }
        desktop.connect(observed)
    }

    package func disconnect() { desktop.disconnect() }
    package func show(_ presentation: ToastPresentation) { desktop.show(presentation) }
    package func update(_ presentation: ToastPresentation) { desktop.update(presentation) }
    package func timerChanged(id: String, remaining: Duration?, isRunning: Bool) {
        desktop.timerChanged(id: id, remaining: remaining, isRunning: isRunning)
    }
    /// Returns once everything the center handed over has reached the service, a close included, or failed — the
    /// command line's one toast is then on the server, or closed there, and exiting loses nothing. (The server's
    /// id alone is not that: a toast whose time ran out before it was sent is closed after `Notify` is answered.)
    package func flush() async { await desktop.flush() }
    package var reportsDoNotDisturb: Bool { desktop.reportsDoNotDisturb }

    package func close(id: String, reason: ToastCloseReason) {
        desktop.close(id: id, reason: reason)
        closed(id)
    }
}
