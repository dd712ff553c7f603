// ToastStack+Types: what the stack takes and gives (its settings, the outputs the caller carries out, the read-only
// entry states) and what it keeps for each toast (`Entry`).

extension ToastStack {
    /// The settings of a stack.
    public struct Configuration: Sendable, Hashable {
        /// The duration of `.automatic` toasts.
        public var defaultDuration: ToastDuration
        /// How many toasts are handed to the presenter at most (at least 1), besides questions in rooms of their own
        /// (a question never waits for a room).
        public var maxVisible: Int
        /// What happens to toasts beyond ``maxVisible``.
        public var overflow: ToastOverflowPolicy
        /// How long a confirmation text replaces a toast after an action.
        public var confirmationDuration: Duration
        /// The built-in labels.
        public var labels: ToastLabels
        /// The least time a timed toast has left once a reply prompt opens for it (``ToastReplyPrompt/allowance``):
        /// its time runs on, and when it is up the prompt is closed and the toast expires.
        public var replyAllowance: Duration

        /// How many toasts of one center are on screen at once unless the app says otherwise: three, stacked as
        /// the desktop draws them, the newest in front.
        public static let standardMaxVisible = 3

        /// Creates a configuration. `maxVisible` below 1 is taken as 1.
        public init(
            defaultDuration: ToastDuration = ToastDuration.standardDefault,
            maxVisible: Int = Configuration.standardMaxVisible,
            overflow: ToastOverflowPolicy = .queue,
            confirmationDuration: Duration = .milliseconds(1500),
            labels: ToastLabels = ToastLabels(language: .english),
            replyAllowance: Duration = ToastReplyPrompt.allowance
        ) {
            self.defaultDuration = defaultDuration
            self.maxVisible = max(1, maxVisible)
            self.overflow = overflow
            self.confirmationDuration = confirmationDuration
            self.labels = labels
            self.replyAllowance = replyAllowance
        }
    }

    /// Something the caller must do, in order.
    public enum Output: Sendable {
        /// Call ``ToastPresenter/show(_:)``.
        case show(PresentedToast)
        /// Call ``ToastPresenter/update(_:)``.
        case update(PresentedToast)
        /// Call ``ToastPresenter/close(id:reason:)``.
        case close(id: String, reason: ToastCloseReason)
        /// Call ``ToastPresenter/timerChanged(id:remaining:isRunning:)``: the timer of a toast on the presenter
        /// started or stopped.
        case timer(id: String, remaining: Duration?, isRunning: Bool)
        /// Deliver an event.
        case event(ToastEvent)
        /// Run the action's handler, then the observer, then call ``ToastStack/completeAction(_:now:)``.
        case runAction(ActionInvocation)
        /// Ask the presenter for the reply's text (``ToastPresenter/promptReply(_:)``), then call
        /// ``ToastStack/replyPrompted(_:result:now:)``: the person chose a reply action on a service without a
        /// field of its own. The toast's time stays stopped meanwhile.
        case promptReply(ActionInvocation, ToastReplyPrompt)
        /// Close the prompt asked for with ``promptReply(_:_:)`` for this presentation
        /// (``ActionInvocation/presentation``), if it is still open: the toast ended or was replaced, or the presenter
        /// was detached. Its result, if one still comes, is ignored, and ``ToastEvent/replyCancelled(id:actionID:)``
        /// was already reported.
        case cancelReplyPrompt(presentation: UInt64)
        /// Store the message for ``ToastAction/later``.
        case keepForLater(ToastMessage)
    }

    /// An invoked action whose handler and observer must run before its effect.
    public struct ActionInvocation: Sendable {
        /// The handler's and observer's argument.
        public var context: ToastActionContext
        /// The invoked action.
        public var action: ToastAction
        /// Identifies the presentation, so the effect applies only if it is still the same one.
        public var presentation: UInt64
    }

    /// A read-only view of one entry, for tests and diagnostics.
    public struct EntryState: Sendable, Hashable {
        /// The toast's id.
        public var id: String
        /// Whether this is a confirmation rather than a toast.
        public var isConfirmation: Bool
        /// The remaining time; `nil` for indefinite.
        public var remaining: Duration?
        /// Whether its timer is running.
        public var isRunning: Bool
        /// Whether it is on the presenter.
        public var isOnPresenter: Bool
        /// Whether it has a room of its own beyond ``Configuration/maxVisible``: a question that came when every room
        /// was taken.
        public var hasRoomOfItsOwn = false
    }

    enum Content: Sendable {
        case toast(ToastMessage)
        case confirmation(String)
    }

    enum PresenterState: Sendable, Hashable {
        /// Not handed to the presenter.
        case off
        /// Handed to the presenter.
        case shown
        /// The presenter failed to show it and will tell us when to try again.
        case failed
        /// The presenter closed it while its action was in flight.
        case gone
    }

    struct Entry: Sendable {
        var id: String
        var serial: UInt64
        var content: Content
        var remaining: Duration?
        var runningSince: Duration?
        var presenter: PresenterState = .off
        var pendingAction: String?
        /// Whether ``pendingAction`` is a reply action whose text is being asked for (``Output/promptReply(_:_:)``):
        /// nothing is decided yet, so whatever ends the toast meanwhile reports its own outcome and closes the prompt.
        var isPrompting = false
        /// The time it had left when its reply prompt opened: a prompt closed without a text leaves it no more.
        var remainingBeforePrompt: Duration?
        /// Whether the presenter was last told that this entry's timer runs (see ``reconcile(now:into:)``).
        var toldRunning = false
        /// Whether it was reported as sent to the presenter during Do Not Disturb.
        var toldSentAnyway = false
        /// The sound of the content the presenter was last handed (shown or updated), once it was: a toast that comes
        /// back with the same sound does not play it again.
        var handedSound: ToastSound?? = nil
        /// Whether it is on screen in a room of its own beyond ``Configuration/maxVisible``: a question that came when
        /// there was none (``ToastStack/questionRooms``).
        var hasExtraRoom = false

        /// Whether it asks something of the person (a tap or buttons): it never waits for a room.
        var isQuestion: Bool {
            if case .toast(let message) = content { return !message.actions.isEmpty }
            return false
        }

        var isToast: Bool {
            if case .toast = content { return true }
            return false
        }

        /// The sound of its content (none for a confirmation).
        var sound: ToastSound? {
            if case .toast(let message) = content { return message.sound }
            return nil
        }

        func state(at now: Duration) -> EntryState {
            EntryState(
                id: id, isConfirmation: !isToast, remaining: remaining(at: now), isRunning: runningSince != nil,
                isOnPresenter: presenter == .shown, hasRoomOfItsOwn: hasExtraRoom)
        }

        func remaining(at now: Duration) -> Duration? {
            guard let remaining else { return nil }
            guard let runningSince else { return remaining }
            return max(.zero, remaining - (now - runningSince))
        }
    }
}

extension ToastStack.Entry {
    /// Once an action is invoked, whatever ends the presentation reports that action.
    /// A reply action still asking for its text is not invoked yet.
    var fixedOutcome: ToastOutcome? {
        isPrompting ? nil : pendingAction.map { .actionInvoked(actionID: $0) }
    }
}
