/// The outgoing request for one toast, as a ``ToastStyle`` produces it and the desktop presenter sends it
/// (one field per `Notify` argument or hint).
///
/// Timing is not the style's: the presenter takes the server's timeout from the toast's timer
/// (``PresentedToast/remaining`` while ``PresentedToast/isTimerRunning``), so a style can never make the server
/// contradict the center.
///
/// The presenter maps ``urgency``, ``category`` and ``isTransient`` to the standard hints (`urgency`, `category`,
/// `transient`), and ``sound`` to the `sound-name`, `sound-file` or `suppress-sound` hint where the server plays
/// sounds (it plays the sound itself elsewhere); entries in ``hints`` are added as they are and win over those on a
/// clash.
public struct ToastRequest: Sendable, Hashable {
    /// One action button.
    public struct Action: Sendable, Hashable {
        /// The key reported back when invoked (`"default"` for the tap action).
        public var key: String
        /// The label.
        public var label: String
        /// An optional icon (sent as an icon name where the server has `action-icons`).
        public var icon: ToastIcon?
        /// What the button is for, as version 2 of the notification portal names it (`"call.accept"`,
        /// `"im.reply-with-text"`, or an `x-` vendor purpose), so the desktop can draw or place it to fit. Only the
        /// portal presenter sends it, and only to a portal that knows it; the notification server has no such field.
        public var purpose: String?
        /// For a reply action, its text field: drawn in the toast where the service can (Plasma's `inline-reply`),
        /// else the button asks the presenter to prompt for the text.
        public var reply: ToastReplyField?

        /// Creates an action button.
        public init(
            key: String, label: String, icon: ToastIcon? = nil, purpose: String? = nil, reply: ToastReplyField? = nil
        ) {
            self.key = key
            self.label = label
            self.icon = icon
            self.purpose = purpose
            self.reply = reply
        }
    }

    /// The summary line (the toast's title).
    public var summary: String
    /// The body (the toast's message).
    public var body: String?
    /// The icon to send, if any.
    public var icon: ToastIcon?
    /// The urgency.
    public var urgency: ToastUrgency
    /// An optional freedesktop category, such as `"im.received"`.
    public var category: String?
    /// The sound to play when the toast first appears, if any.
    public var sound: ToastSound?
    /// The freedesktop sound name of ``sound``, such as `"message-new-instant"`; setting it asks for that sound.
    public var soundName: String? {
        get {
            if case .named(let name)? = sound { return name }
            return nil
        }
        set { sound = newValue.map(ToastSound.named) }
    }
    /// The action buttons, in order.
    public var actions: [Action]
    /// Extra hints, sent as they are.
    public var hints: [String: ToastHintValue]
    /// Whether the server should not keep the toast in its history (confirmations).
    public var isTransient: Bool
    /// The application name to show for this toast, instead of the presenter's (`app_name`): for a service that
    /// shows toasts on behalf of several programs (the `toastkit agent`).
    public var appName: String?
    /// The application icon for this toast, instead of the presenter's (`app_icon`).
    public var appIcon: String?
    /// Whether the body is markup (`true`) or plain text to show as typed (`false`); nil leaves it to the
    /// presenter's configuration.
    public var bodyIsMarkup: Bool?
    /// Whether the server's own settings decide how long the notification stays (`expire_timeout` -1, as
    /// notify-send sends without `-t`). Use it for a toast whose duration is `.indefinite` in the model: the
    /// center then never closes it, the server does.
    public var leavesTimeoutToServer = false

    /// Creates a request; `sound`, when given, wins over `soundName`.
    public init(
        summary: String,
        body: String? = nil,
        icon: ToastIcon? = nil,
        urgency: ToastUrgency = .normal,
        category: String? = nil,
        soundName: String? = nil,
        sound: ToastSound? = nil,
        actions: [Action] = [],
        hints: [String: ToastHintValue] = [:],
        isTransient: Bool = false,
        appName: String? = nil,
        appIcon: String? = nil
    ) {
        self.summary = summary
        self.body = body
        self.icon = icon
        self.urgency = urgency
        self.category = category
        self.sound = sound ?? soundName.map(ToastSound.named)
        self.actions = actions
        self.hints = hints
        self.isTransient = isTransient
        self.appName = appName
        self.appIcon = appIcon
    }
}

/// The urgency of a toast, as the freedesktop specification defines it.
public enum ToastUrgency: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// Low urgency (some servers show no banner at all).
    case low = 0
    /// Normal urgency.
    case normal = 1
    /// Critical urgency (some servers keep it until closed; the center still closes it on time).
    case critical = 2
}

/// A typed hint value. The cases are the D-Bus types the freedesktop hints use.
public enum ToastHintValue: Sendable, Hashable, Codable {
    /// A byte (`y`).
    case byte(UInt8)
    /// A boolean (`b`).
    case bool(Bool)
    /// A signed 32-bit integer (`i`).
    case int32(Int32)
    /// An unsigned 32-bit integer (`u`).
    case uint32(UInt32)
    /// A 64-bit integer (`x`), as libnotify sends `sender-pid`.
    case int64(Int64)
    /// A double (`d`).
    case double(Double)
    /// A string (`s`).
    case string(String)
}
