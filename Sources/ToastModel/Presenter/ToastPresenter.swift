/// Shows toasts somewhere: the desktop's notification server, a recording for tests, a custom surface.
///
/// The center calls these methods one at a time, in order, never while holding its lock, from whichever thread
/// is draining the center's work at that moment. They must not block: queue the work and return. A presenter
/// may report back through the ``ToastPresenterEvents`` it receives in ``connect(_:)`` at any time, from any
/// thread, even from inside one of these calls.
///
/// The center owns all timing. It calls ``close(id:reason:)`` with ``ToastCloseReason/expired`` when the front
/// toast's time is up. A presenter whose surface can expire toasts by itself (a notification server's
/// `expire_timeout`) may use that as a safety net only while the toast's timer runs
/// (``PresentedToast/isTimerRunning``, then ``timerChanged(id:remaining:isRunning:)``): a covered, waiting or paused
/// toast must never run out on the presenter's side.
public protocol ToastPresenter: AnyObject, Sendable {
    /// Called when the presenter is attached to a center, before any other call. Keep `events` to report back.
    func connect(_ events: ToastPresenterEvents)
    /// Called when the presenter is detached (after closing its toasts with ``ToastCloseReason/detached``).
    /// Reports made after this are ignored.
    func disconnect()
    /// Shows a toast that is not on screen (first time, back from being covered, or again after a restart).
    func show(_ presentation: ToastPresentation)
    /// Updates a toast that is on screen, in place (same id): replace by id, or the confirmation text.
    func update(_ presentation: ToastPresentation)
    /// Closes a toast that is on screen, saying why.
    func close(id: String, reason: ToastCloseReason)
    /// The timer of a toast on screen started (it reached the front, the center resumed) or stopped (another toast
    /// moved in front of it, the center paused, the screen locked). `remaining` is its time left (`nil`:
    /// indefinite). Not called for a toast just shown or updated: its ``PresentedToast/isTimerRunning`` says it.
    func timerChanged(id: String, remaining: Duration?, isRunning: Bool)
    /// Returns once everything handed over so far is done on the presenter's side (a notification server has
    /// answered every call), or has failed. ``ToastCenter/flush()`` awaits it.
    func flush() async
    /// Whether the presenter reports the desktop's Do Not Disturb (``ToastPresenterEvents/doNotDisturbChanged(_:)``)
    /// soon after ``connect(_:)``, whatever happens (when it cannot read it, it reports it off). Until that first
    /// report the center hands it no toast, so none slips past Do Not Disturb. False by default.
    var reportsDoNotDisturb: Bool { get }
    /// Asks the person for a reply's text: the person chose a reply action (``ToastAction/reply``) on a service
    /// that draws no text field of its own. The toast's time runs on meanwhile, with at least
    /// ``ToastReplyPrompt/allowance`` left; when it is up, the task is cancelled (close the prompt then). The default
    /// says no prompt can be shown.
    func promptReply(_ prompt: ToastReplyPrompt) async -> ToastReplyPromptResult
}

extension ToastPresenter {
    /// Does nothing by default.
    public func disconnect() {}

    /// False by default: the center never waits for a Do Not Disturb report.
    public var reportsDoNotDisturb: Bool { false }

    /// Does nothing by default: a presenter that never expires toasts by itself needs no timer changes.
    public func timerChanged(id: String, remaining: Duration?, isRunning: Bool) {}

    /// Returns at once by default: a presenter that works synchronously has nothing in flight.
    public func flush() async {}

    /// Says by default that this presenter cannot ask for a reply.
    public func promptReply(_ prompt: ToastReplyPrompt) async -> ToastReplyPromptResult {
        .unavailable(reason: "this presenter cannot ask for a reply")
    }
}
