public import FoundationEssentials

/// What is stored for a toast kept with ``ToastAction/later``: enough to present it again.
///
/// Closures cannot be stored, so a toast restored in a *new process* comes back with actions that have no
/// handlers (their ids, titles, icons, confirmations and effects are kept, and the center's
/// ``ToastCenter/onToastAction`` observer still sees them). To give them their handlers back, set
/// ``ToastCenter/laterRestorer``. Within the same process the center keeps the original message and restores
/// it with its handlers.
public struct ToastLaterRecord: Sendable, Hashable, Codable {
    /// One stored action.
    public struct StoredAction: Sendable, Hashable, Codable {
        /// Where the action sat.
        public var role: ToastActionRole
        /// The action's id.
        public var id: String
        /// The action's title.
        public var title: String
        /// The action's icon.
        public var icon: ToastIcon?
        /// The action's confirmation text.
        public var confirmation: String?
        /// The action's effect.
        public var effect: ToastAction.Effect
        /// The built-in label, for built-in actions.
        public var builtInLabel: ToastLabel?
        /// For a Later action with a time (``ToastAction/later(after:)``): the snooze, in seconds.
        public var snoozeSeconds: Double?
        /// For a reply action, its text field.
        public var reply: ToastReplyField?

        /// Creates a stored action.
        public init(role: ToastActionRole, action: ToastAction) {
            self.role = role
            self.id = action.id
            self.title = action.title
            self.icon = action.icon
            self.confirmation = action.confirmation
            self.effect = action.effect
            self.builtInLabel = action.builtInLabel
            self.snoozeSeconds = action.snooze?.seconds
            self.reply = action.reply
        }

        /// The action without a handler.
        public func makeAction() -> ToastAction {
            var action = ToastAction(
                id: id, title: title, icon: icon, confirmation: confirmation, effect: effect,
                builtInLabel: builtInLabel, handler: .sync { _ in })
            if let snoozeSeconds, snoozeSeconds.isFinite, snoozeSeconds >= 0 {
                action.snooze = .milliseconds(
                    Int64((min(snoozeSeconds, ToastDuration.maximumSeconds) * 1000).rounded()))
            }
            action.reply = reply
            return action
        }
    }

    /// The toast's id.
    public var id: String
    /// The status.
    public var status: ToastStatus
    /// The title.
    public var title: String
    /// The message.
    public var message: String?
    /// The icon (image pixels are stored as base64).
    public var icon: ToastIcon?
    /// The duration it will have when it comes back.
    public var duration: ToastDuration
    /// The actions.
    public var actions: [StoredAction]
    /// When the person chose "Later".
    public var deferredAt: Date
    /// When it comes back by itself (a snooze, ``ToastAction/later(after:)``); nil: when the host is active again.
    public var comesBackAt: Date?

    /// Creates a record of `message`.
    public init(message: ToastMessage, deferredAt: Date = Date()) {
        self.id = message.id
        self.status = message.status
        self.title = message.title
        self.message = message.message
        self.icon = message.icon
        self.duration = message.duration
        self.actions = message.actions.map { StoredAction(role: $0.role, action: $0.action) }
        self.deferredAt = deferredAt
        if let snooze = message.actions.lazy.compactMap({ $0.action.effect == .later ? $0.action.snooze : nil }).first {
            comesBackAt = deferredAt.addingTimeInterval(snooze.seconds)
        }
    }

    /// The message to present again; its actions have no handlers.
    public func makeMessage() -> ToastMessage {
        var swipe = ToastSwipeActions()
        var tap: ToastAction?
        for stored in actions {
            switch stored.role {
            case .tap: tap = stored.makeAction()
            case .leading: swipe.leading = stored.makeAction()
            case .trailing: swipe.trailing = stored.makeAction()
            }
        }
        let hasSwipe = swipe.leading != nil || swipe.trailing != nil
        return ToastMessage(
            id: id, status: status, title: title, message: message, icon: icon, duration: duration,
            tapAction: tap, swipeActions: hasSwipe ? swipe : nil)
    }
}
