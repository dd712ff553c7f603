import Synchronization
import ToastKit

/// Wraps the desktop presenter to see what the model does not report in its events.
///
/// - *Why* the server closed a toast: the model reports a close by another program (`NotificationClosed` reason 3,
///   e.g. `toastkit close`) as ``ToastOutcome/dismissed``, like a dismissal by the person; the tool gives them
///   different exit codes.
/// - When the center closes a toast on the presenter: an action's confirmation outlives the toast's terminal event,
///   and the command must not exit before the center has closed it.
final class ObservingPresenter: ToastPresenter {
    let desktop: DesktopNotificationPresenter

    private struct State {
        var closedByCall: Set<String> = []
        var closedByCenter: Set<String> = []
        var closeWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }
    private let state = Mutex(State())

    /// The presenter's wording for `NotificationClosed` reason 3.
    static let closedByCallReason = "closed by another program"

    init(_ desktop: DesktopNotificationPresenter) {
        self.desktop = desktop
    }

    /// Whether the server said another program closed toast `id`.
    func wasClosedByCall(_ id: String) -> Bool {
        state.withLock { $0.closedByCall.contains(id) }
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

    func connect(_ events: ToastPresenterEvents) {
        desktop.connect(
            ToastPresenterEvents { [weak self] report in
                if case .closed(let id, .other(let reason)) = report, reason == Self.closedByCallReason {
                    self?.state.withLock { _ = $0.closedByCall.insert(id) }
                }
                events.send(report)
            })
    }

    func disconnect() { desktop.disconnect() }
    func show(_ presentation: ToastPresentation) { desktop.show(presentation) }
    func update(_ presentation: ToastPresentation) { desktop.update(presentation) }

    func close(id: String, reason: ToastCloseReason) {
        desktop.close(id: id, reason: reason)
        closed(id)
    }
}
