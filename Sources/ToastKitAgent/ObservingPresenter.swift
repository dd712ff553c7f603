import Synchronization
package import ToastKit
import ToastModel

/// Wraps the desktop (or portal) presenter to see what the center does with it and what it reports to the center:
/// - when an action's confirmation leaves the presenter (it outlives the toast's terminal event, and the command
///   must not exit before the center has closed it, or the server has);
/// - the presenter's reports as they go to the center (the server leaving and coming back, screen-lock pauses),
///   for ``Waiter``'s own limits;
/// - a close the server did not explain (`NotificationClosed` reason 4 or an unknown one), which the model reports
///   as a dismissal.
package final class ObservingPresenter: ToastPresenter {
    package let desktop: any ToastPresenter
    /// The presenter's reports to the center, in order (one consumer).
    package let reports: AsyncStream<ToastPresenterReport>
    private let reportContinuation: AsyncStream<ToastPresenterReport>.Continuation

    /// Where an id's confirmation is: put on the presenter, then ended there.
    private enum Confirmation {
        case shown
        case ended
    }

    private struct State {
        /// Bounded: the agent is long-lived, and only a recent confirmation is ever awaited.
        var confirmations = Recents<Confirmation>(capacity: 4096)
        var closeWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
        var unexplainedCloses = Recents<String>(capacity: 4096)
    }
    private let state = Mutex(State())

    /// The environment to ask for a toast's reply in (nil: the process's own).
    private let promptEnvironment: (@Sendable (String) -> [String: String]?)?
    /// The wrapped presenter's way of asking for a reply, used with ``promptEnvironment``'s environment.
    private let replyPrompter: ReplyPrompter

    package init(
        _ desktop: DesktopNotificationPresenter, promptEnvironment: (@Sendable (String) -> [String: String]?)? = nil
    ) {
        self.desktop = desktop
        self.promptEnvironment = promptEnvironment
        replyPrompter = desktop.configuration.replyPrompter
        (reports, reportContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    package init(_ portal: PortalNotificationPresenter) {
        desktop = portal
        promptEnvironment = nil
        replyPrompter = portal.configuration.replyPrompter
        (reports, reportContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    deinit { reportContinuation.finish() }

    /// Waits until the confirmation that replaced toast `id` after an action has left the presenter — the center
    /// closed it when its time ran out, or the server closed it first (dunst, say, expires it on its own timer, and
    /// the center then has nothing to close) — or until `limit` has passed (the confirmation was never shown, the
    /// server being gone). A close of the toast itself (a server that closes a notification once its action is
    /// invoked) is not the confirmation's.
    package func waitForClose(of id: String, limit: Duration) async {
        let timeout = Task {
            try? await Task.sleep(for: limit)
            self.confirmationEnded(id, byCenter: true)
        }
        defer { timeout.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if case .ended? = state.confirmations[id] { return true }
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

    /// Notes that what the presenter holds for `id` was closed: by the center (any close counts, a confirmation's
    /// or the toast's, which then has no confirmation to wait for), or by the server (counts only once a
    /// confirmation is shown). Wakes whoever waits when it counts.
    private func confirmationEnded(_ id: String, byCenter: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard byCenter || state.confirmations[id] == .shown else { return [] }
            state.confirmations.remember(.ended, for: id)
            return state.closeWaiters.removeValue(forKey: id) ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// A confirmation put on the presenter is waited for anew; a toast put there under a reused id (the agent)
    /// forgets the id's earlier confirmation.
    private func putOnPresenter(_ presentation: ToastPresentation) {
        state.withLock { state in
            if presentation.toast.isConfirmation {
                state.confirmations.remember(.shown, for: presentation.toast.id)
            } else {
                state.confirmations.forget(presentation.toast.id)
            }
        }
    }

    /// Connects the wrapped presenter to the center through a sink that notes each report first.
    package func connect(_ events: ToastPresenterEvents) {
        let observed = ToastPresenterEvents { [weak self] report in
            if let self {
                if case .closed(let id, let reason) = report {
                    confirmationEnded(id, byCenter: false)
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
    package func show(_ presentation: ToastPresentation) {
        putOnPresenter(presentation)
        desktop.show(presentation)
    }
    package func update(_ presentation: ToastPresentation) {
        putOnPresenter(presentation)
        desktop.update(presentation)
    }
    package func timerChanged(id: String, remaining: Duration?, isRunning: Bool) {
        desktop.timerChanged(id: id, remaining: remaining, isRunning: isRunning)
    }
    /// Returns once everything the center handed over has reached the service, a close included, or failed — the
    /// command line's one toast is then on the server, or closed there, and exiting loses nothing. (The server's
    /// id alone is not that: a toast whose time ran out before it was sent is closed after `Notify` is answered.)
    package func flush() async { await desktop.flush() }
    package var reportsDoNotDisturb: Bool { desktop.reportsDoNotDisturb }
    /// Asks for a reply's text in the environment ``promptEnvironment`` gives for the toast (the agent's: its
    /// sender's, so the prompt opens on the sender's display), else as the wrapped presenter does.
    package func promptReply(_ prompt: ToastReplyPrompt) async -> ToastReplyPromptResult {
        if let environment = promptEnvironment?(prompt.toastID) {
            return await replyPrompter.prompt(prompt, environment: environment)
        }
        return await desktop.promptReply(prompt)
    }

    package func close(id: String, reason: ToastCloseReason) {
        desktop.close(id: id, reason: reason)
        confirmationEnded(id, byCenter: true)
    }
}
