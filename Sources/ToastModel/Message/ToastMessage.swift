public import FoundationEssentials

/// A toast: content, semantic status, duration and optional tap and swipe actions (M1).
///
/// ```swift
/// let message = ToastMessage(
///     status: .notification,
///     title: "Fotos nuevas",
///     message: "12 fotos de hoy",
///     icon: .system("photo.on.rectangle"),
///     duration: 6
/// )
/// toasts.present(message)
/// ```
/// Creating a message never throws; ``ToastCenter/present(_:)`` checks it (see ``validate()``).
///
/// Messages compare with `==` and hash by their content: id, texts, status, icon, duration and actions (the
/// actions' handlers are not compared: closures cannot be). They are `Codable` the same way, without the handlers:
/// a decoded message's actions do nothing until given handlers again (`ToastAction.withHandler(_:)`).
public struct ToastMessage: Sendable, Hashable, Identifiable {
    /// Identifies the toast. Presenting a message whose id is live updates that toast in place (M2).
    /// A UUID string is generated when none is given.
    public var id: String
    /// The semantic status.
    public var status: ToastStatus
    /// The title; required unless there is a message.
    public var title: String
    /// An optional second line.
    public var message: String?
    /// An optional icon; when `nil` the theme's icon for the status is used.
    public var icon: ToastIcon?
    /// How long the toast stays in front.
    public var duration: ToastDuration
    /// What tapping the toast does.
    public var tapAction: ToastAction?
    /// The swipe actions (two buttons on the desktop).
    public var swipeActions: ToastSwipeActions?
    /// How far the task it tells of has come (a bar where the server draws one); nil for none.
    public var progress: ToastProgress?
    /// What the toast does while the desktop's Do Not Disturb is on: wait until it ends (the default), drop, or go
    /// to the server anyway.
    public var doNotDisturb: ToastDoNotDisturbPolicy
    /// The sound to play when the toast first appears; nil leaves it to the style (the theme's sound for the status,
    /// none by default).
    public var sound: ToastSound?

    /// Creates a message. Only the title is required.
    public init(
        id: String = UUID().uuidString,
        status: ToastStatus = .normal,
        title: String,
        message: String? = nil,
        icon: ToastIcon? = nil,
        duration: ToastDuration = .automatic,
        tapAction: ToastAction? = nil,
        swipeActions: ToastSwipeActions? = nil,
        progress: ToastProgress? = nil,
        doNotDisturb: ToastDoNotDisturbPolicy = .hold,
        sound: ToastSound? = nil
    ) {
        self.id = id
        self.status = status
        self.title = title
        self.message = message
        self.icon = icon
        self.duration = duration
        self.tapAction = tapAction
        self.swipeActions = swipeActions
        self.progress = progress
        self.doNotDisturb = doNotDisturb
        self.sound = sound
    }

    /// The actions with their role, in the order the desktop shows them: tap, leading, trailing.
    public var actions: [(role: ToastActionRole, action: ToastAction)] {
        var result: [(role: ToastActionRole, action: ToastAction)] = []
        if let tapAction { result.append((.tap, tapAction)) }
        if let leading = swipeActions?.leading { result.append((.leading, leading)) }
        if let trailing = swipeActions?.trailing { result.append((.trailing, trailing)) }
        return result
    }

    /// Checks the message as ``ToastCenter/present(_:)`` does.
    ///
    /// A message is invalid when the title is empty and there is no message text, when a text or id contains
    /// a NUL character, when the duration is negative, NaN, infinite or too large, when two actions share an
    /// id (or a swipe action uses the reserved id `"default"`), when an action has an empty title, or when an
    /// image icon's byte count does not match its size. An empty icon name, path or image (``ToastImage/isEmpty``)
    /// is not an error: the toast is shown without an icon.
    /// - Throws: ``ToastValidationError`` naming the first offending field.
    public func validate() throws(ToastValidationError) {
        try validate(defaultDuration: ToastDuration.standardDefault)
    }

    /// Checks the message, resolving `.automatic` against `defaultDuration`.
    public func validate(defaultDuration: ToastDuration) throws(ToastValidationError) {
        try Self.checkText(id, field: "id")
        guard !id.isEmpty else { throw ToastValidationError(field: "id", reason: "id must not be empty") }
        try Self.checkText(title, field: "title")
        if let message { try Self.checkText(message, field: "message") }
        let hasMessage = !(message ?? "").isEmpty
        guard !title.isEmpty || hasMessage else {
            throw ToastValidationError(field: "title", reason: "a toast needs a title or a message; both are empty")
        }
        _ = try duration.resolved(default: defaultDuration)
        if let icon { try Self.checkIcon(icon, field: "icon") }
        var seen: Set<String> = []
        for (role, action) in actions {
            let field = "actions.\(role.rawValue)"
            try Self.checkText(action.id, field: "\(field).id")
            guard !action.id.isEmpty else {
                throw ToastValidationError(field: "\(field).id", reason: "action id must not be empty")
            }
            if role != .tap, action.id == ToastActionRole.tapKey {
                throw ToastValidationError(
                    field: "\(field).id",
                    reason: "\"\(ToastActionRole.tapKey)\" is reserved for the tap action at the presenter level")
            }
            guard seen.insert(action.id).inserted else {
                throw ToastValidationError(
                    field: "actions", reason: "more than one action has the id \"\(action.id)\"")
            }
            try Self.checkText(action.title, field: "\(field).title")
            guard !action.title.isEmpty || action.builtInLabel != nil else {
                throw ToastValidationError(field: "\(field).title", reason: "action title must not be empty")
            }
            if let confirmation = action.confirmation {
                try Self.checkText(confirmation, field: "\(field).confirmation")
            }
            if let icon = action.icon { try Self.checkIcon(icon, field: "\(field).icon") }
        }
    }

    private static func checkText(_ text: String, field: String) throws(ToastValidationError) {
        if text.utf8.contains(0) {
            throw ToastValidationError(field: field, reason: "text must not contain a NUL character")
        }
    }

    private static func checkIcon(_ icon: ToastIcon, field: String) throws(ToastValidationError) {
        switch icon {
        case .system(let name):
            // An empty name is no icon: the toast is shown without one (a cosmetic problem never costs it).
            try checkText(name, field: field)
        case .file(let path):
            try checkText(path, field: field)
        case .image(let image) where image.isEmpty:
            break  // No pixels at all: no icon, as an empty name or path.
        case .image(let image):
            try image.validate(field: field)
        }
    }
}

/// Where an action sits on a toast.
public enum ToastActionRole: String, Sendable, Hashable, Codable {
    /// Tapping the toast itself; sent to the presenter under the key ``tapKey``.
    case tap
    /// The leading swipe action; the first button on the desktop.
    case leading
    /// The trailing swipe action; the second button on the desktop.
    case trailing

    /// The presenter-level key of the tap action: `"default"`, as the freedesktop specification names the
    /// action invoked by clicking the notification itself.
    public static let tapKey = "default"
}
