/// The sink through which a presenter reports to its center. A center gives one to each presenter it attaches.
///
/// It is a small value wrapping one `@Sendable` function, so it is cheap to copy into callbacks. Reports from
/// a presenter that has since been detached are ignored. Reports about ids the center does not have on the
/// presenter are ignored too ("only the real server may speak").
public struct ToastPresenterEvents: Sendable {
    private let deliver: @Sendable (ToastPresenterReport) -> Void

    /// Creates a sink that hands each report to `deliver`. Centers make their own; use this to test a presenter.
    public init(_ deliver: @escaping @Sendable (ToastPresenterReport) -> Void) {
        self.deliver = deliver
    }

    /// Sends a report.
    public func send(_ report: ToastPresenterReport) {
        deliver(report)
    }

    /// The person invoked the action with presenter key `key` (``ToastActionRole/tapKey`` for the tap action).
    public func actionInvoked(toastID: String, key: String, activationToken: String? = nil) {
        send(.actionInvoked(toastID: toastID, key: key, activationToken: activationToken))
    }

    /// The person typed `text` in the reply field the service drew for the reply action with presenter key `key`
    /// (Plasma's `inline-reply`).
    public func replied(toastID: String, key: String, text: String, activationToken: String? = nil) {
        send(.replied(toastID: toastID, key: key, text: text, activationToken: activationToken))
    }

    /// The toast left the screen without the center asking.
    public func closed(toastID: String, reason: ToastPresenterCloseReason) {
        send(.closed(toastID: toastID, reason: reason))
    }

    /// Showing failed. With `recoverable` the center keeps the toast (its time stops) until
    /// ``reshowAll()``; otherwise the toast ends with ``ToastFailure/presenter(reason:)``.
    /// A `nil` id means every toast on the presenter.
    public func failed(toastID: String?, reason: String, recoverable: Bool) {
        send(.failed(toastID: toastID, reason: reason, recoverable: recoverable))
    }

    /// Something was left out (informational).
    public func degraded(toastID: String?, reason: String) {
        send(.degraded(toastID: toastID, reason: reason))
    }

    /// Asks the center to show every toast on screen again, with its remaining time (the server restarted).
    public func reshowAll() {
        send(.reshowRequested)
    }

    /// Asks the center to stop the clock, for example while the screen is locked.
    public func pause() {
        send(.pauseRequested)
    }

    /// Lets the clock run again after ``pause()``.
    public func resume() {
        send(.resumeRequested)
    }

    /// The toast the center gave this presenter did not reach the screen, and the presenter forgot it: before it went
    /// out, the presenter learned that Do Not Disturb is on (a server that never announces the change is read again
    /// when a toast comes). Report the new state first. The center takes the toast back — its time stops — and
    /// holds or drops it as its ``ToastMessage/doNotDisturb`` says, or shows it again (``ToastDoNotDisturbPolicy/show``).
    public func withheld(toastID: String) {
        send(.withheld(toastID: toastID))
    }

    /// Tells the center the desktop's Do Not Disturb state, when first read and on every change: while it is on,
    /// the center holds, drops or sends new toasts as each one's ``ToastMessage/doNotDisturb`` says.
    public func doNotDisturbChanged(_ state: ToastDoNotDisturb) {
        send(.doNotDisturbChanged(state))
    }
}

/// One report from a presenter to its center.
public enum ToastPresenterReport: Sendable, Hashable {
    /// The person invoked an action; `key` is the presenter-level key (`"default"` for the tap action).
    case actionInvoked(toastID: String, key: String, activationToken: String?)
    /// The person sent `text` from the service's own reply field; see ``ToastPresenterEvents/replied(toastID:key:text:activationToken:)``.
    case replied(toastID: String, key: String, text: String, activationToken: String?)
    /// The toast left the screen without the center asking.
    case closed(toastID: String, reason: ToastPresenterCloseReason)
    /// Showing failed; see ``ToastPresenterEvents/failed(toastID:reason:recoverable:)``.
    case failed(toastID: String?, reason: String, recoverable: Bool)
    /// Something was left out (informational).
    case degraded(toastID: String?, reason: String)
    /// Show every on-screen toast again with its remaining time.
    case reshowRequested
    /// Stop the clock (screen locked).
    case pauseRequested
    /// Let the clock run again.
    case resumeRequested
    /// The desktop's Do Not Disturb state; see ``ToastPresenterEvents/doNotDisturbChanged(_:)``.
    case doNotDisturbChanged(ToastDoNotDisturb)
    /// The presenter put a toast it was given off before it reached the screen, and forgot it; see
    /// ``ToastPresenterEvents/withheld(toastID:)``.
    case withheld(toastID: String)
}

/// Why a toast left the screen without the center asking, as the presenter saw it.
public enum ToastPresenterCloseReason: Sendable, Hashable {
    /// The person closed it. Reported as ``ToastOutcome/dismissed``.
    case dismissedByUser
    /// The server expired it (its safety-net timeout). Reported as ``ToastOutcome/expired``.
    case expired
    /// Another program closed it with a call (`CloseNotification` from elsewhere, e.g. `toastkit close`).
    /// Reported as ``ToastOutcome/closedByApp``.
    case closedByCall
    /// Closed for another reason (undefined). Reported as ``ToastOutcome/dismissed``.
    case other(String?)
}
