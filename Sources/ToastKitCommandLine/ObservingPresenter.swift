import Synchronization
import ToastKit

/// Wraps the desktop (or portal) presenter to see when the center closes a toast on it: an action's confirmation
/// outlives the toast's terminal event, and the command must not exit before the center has closed it.
final class ObservingPresenter: ToastPresenter {
    let desktop: any ToastPresenter
    /// Returns once what the center handed over for a toast has reached the service (a close included).
    let settle: @Sendable (String) async -> Void

    private struct State {
        var closedByCenter: Set<String> = []
        var closeWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }
    private let state = Mutex(State())

    init(_ desktop: DesktopNotificationPresenter) {
        self.desktop = desktop
        settle = { id in _ = try? await desktop.accepted(id) }
    }

    init(_ portal: PortalNotificationPresenter) {
        desktop = portal
        settle = { _ in await portal.flush() }
    }

    /// Waits until the center has closed `id` on the presenter, or `limit` has passed.
    func waitForClose(of id: String, limit: Duration) async {
        let timeout = Task {
            try? await Task.sleep(for: limit)
            self.closed(id)
        }
        defer { timeout.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.closedByCenter.contains(id) { return true }
                state.closeWaiters[id, default: []].append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func closed(_ id: String) {
        let waiters = state.withLock { state in
            state.closedByCenter.insert(id)
            return state.closeWaiters.removeValue(forKey: id) ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    func connect(_ events: ToastPresenterEvents) { desktop.connect(events) }

    func disconnect() { desktop.disconnect() }
    func show(_ presentation: ToastPresentation) { desktop.show(presentation) }
    func update(_ presentation: ToastPresentation) { desktop.update(presentation) }
    func timerChanged(id: String, remaining: Duration?, isRunning: Bool) {
        desktop.timerChanged(id: id, remaining: remaining, isRunning: isRunning)
    }

    func close(id: String, reason: ToastCloseReason) {
        desktop.close(id: id, reason: reason)
        closed(id)
    }
}
