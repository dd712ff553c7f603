/// A value snapshot of a toast as the presenter should show it. It carries no closures: the center keeps the
/// handlers and runs them when the presenter reports an action.
public struct PresentedToast: Sendable, Hashable {
    /// The toast's id (the app's string id; the presenter maps it to its own ids).
    public var id: String
    /// The semantic status.
    public var status: ToastStatus
    /// The title (the desktop's summary).
    public var title: String
    /// The optional second line (the desktop's body).
    public var message: String?
    /// The toast's own icon; `nil` lets the style use the theme's icon for the status.
    public var icon: ToastIcon?
    /// The actions to show, tap first, then leading and trailing, with built-in labels already localized.
    public var actions: [PresentedAction]
    /// The time the toast still has in front; `nil` for indefinite.
    public var remaining: Duration?
    /// Whether the center's timer for this toast runs now: it is the front toast, shown, and nothing paused the
    /// center. Only then may the presenter let it run out on its own (the server's `expire_timeout`); a covered,
    /// waiting or paused toast must stay until the center says otherwise
    /// (``ToastPresenter/timerChanged(id:remaining:isRunning:)``). The center closes the toast itself when its
    /// time is up either way.
    public var isTimerRunning: Bool
    /// Whether this is the short confirmation that replaces a toast after an action (transient, no actions).
    public var isConfirmation: Bool
    /// How far the toast's task has come, if it tells.
    public var progress: ToastProgress?
    /// The sound the toast asks for, if any (played once, when it first appears).
    public var sound: ToastSound?
    /// Whether the presenter was handed this toast before with the same sound, and the toast comes back (it was
    /// covered by another, or is shown again after the presenter asked): its sound has played, and is not played
    /// again.
    public var soundHasPlayed: Bool

    /// Creates a snapshot.
    public init(
        id: String,
        status: ToastStatus,
        title: String,
        message: String? = nil,
        icon: ToastIcon? = nil,
        actions: [PresentedAction] = [],
        remaining: Duration? = nil,
        isTimerRunning: Bool = false,
        isConfirmation: Bool = false,
        progress: ToastProgress? = nil,
        sound: ToastSound? = nil,
        soundHasPlayed: Bool = false
    ) {
        self.id = id
        self.status = status
        self.title = title
        self.message = message
        self.icon = icon
        self.actions = actions
        self.remaining = remaining
        self.isTimerRunning = isTimerRunning
        self.isConfirmation = isConfirmation
        self.progress = progress
        self.sound = sound
        self.soundHasPlayed = soundHasPlayed
    }
}

/// An action as the presenter shows it.
public struct PresentedAction: Sendable, Hashable {
    /// The key the presenter uses and reports back: ``ToastActionRole/tapKey`` (`"default"`) for the tap
    /// action, the action's id otherwise.
    public var key: String
    /// The action's own id, as events report it.
    public var actionID: String
    /// The label to show, already localized for built-in actions.
    public var title: String
    /// An optional icon.
    public var icon: ToastIcon?
    /// Where the action sits.
    public var role: ToastActionRole
    /// For a reply action, its text field.
    public var reply: ToastReplyField?

    /// Creates a presented action.
    public init(
        key: String, actionID: String, title: String, icon: ToastIcon? = nil, role: ToastActionRole,
        reply: ToastReplyField? = nil
    ) {
        self.key = key
        self.actionID = actionID
        self.title = title
        self.icon = icon
        self.role = role
        self.reply = reply
    }
}

/// What the center hands to the presenter: the snapshot and the request the style made from it.
public struct ToastPresentation: Sendable, Hashable {
    /// The toast snapshot.
    public var toast: PresentedToast
    /// The outgoing request made by the center's ``ToastStyle``; the desktop presenter maps it 1:1 to
    /// `Notify`.
    public var request: ToastRequest

    /// Creates a presentation.
    public init(toast: PresentedToast, request: ToastRequest) {
        self.toast = toast
        self.request = request
    }

    /// The toast's id.
    public var id: String { toast.id }
}

/// Why the center closes a toast on the presenter.
///
/// Only ``covered`` and ``detached`` leave the toast alive in the center (it will be shown again); the others
/// follow the toast's end. A presenter should not report a close back for a toast the center closed.
public enum ToastCloseReason: String, Sendable, Hashable {
    /// Its time ran out; the center reports ``ToastOutcome/expired``.
    case expired
    /// The app dismissed it.
    case closedByApp
    /// An action ran and its effect ends the toast (or its confirmation's time ran out).
    case actionCompleted
    /// The person chose ``ToastAction/later``.
    case deferred
    /// Another toast took its place (overflow policy ``ToastOverflowPolicy/replaceOldest``).
    case replaced
    /// The presenter failed to show it for good.
    case failed
    /// Another toast moved in front of it and only ``ToastCenter/maxVisible`` fit; it waits and comes back.
    case covered
    /// The presenter is being detached from the center; the toast stays in the center.
    case detached
}
