/// Maps each ``ToastStatus`` to what a notification server can take: icon name, urgency, category, sound (M8).
///
/// On Linux the card is drawn by the server, so the visual tokens of the product page (``titleFont``,
/// ``tint``, ``cornerRadius``) are kept for source compatibility but have no effect on notification servers.
///
/// ```swift
/// var theme = ToastTheme.standard
/// theme[.notification] = ToastStatusDecoration(iconName: "mail-message-new", category: "email.arrived")
/// toasts.toastTheme(theme)
/// ```
public struct ToastTheme: Sendable {
    /// The title font (no effect on notification servers).
    public var titleFont: ToastFont
    /// The tint for each status (no effect on notification servers).
    public var tint: @Sendable (ToastStatus) -> ToastColor
    /// The card's corner radius in points (no effect on notification servers).
    public var cornerRadius: Double
    /// The decoration of each status. A missing status uses the standard decoration.
    public var decorations: [ToastStatus: ToastStatusDecoration]

    /// Creates a theme.
    public init(
        titleFont: ToastFont = .headline,
        tint: @escaping @Sendable (ToastStatus) -> ToastColor = ToastTheme.standardTint,
        cornerRadius: Double = 20,
        decorations: [ToastStatus: ToastStatusDecoration] = ToastTheme.standardDecorations
    ) {
        self.titleFont = titleFont
        self.tint = tint
        self.cornerRadius = cornerRadius
        self.decorations = decorations
    }

    /// The standard theme.
    public static var standard: ToastTheme { ToastTheme() }

    /// The decoration of `status`; setting it overrides one status.
    public subscript(_ status: ToastStatus) -> ToastStatusDecoration {
        get { decorations[status] ?? Self.standardDecorations[status]! }
        set { decorations[status] = newValue }
    }

    /// The standard tint of `status`.
    public static func standardTint(_ status: ToastStatus) -> ToastColor {
        switch status {
        case .normal: .gray
        case .success: .green
        case .warning: .orange
        case .error: .red
        case .notification: .blue
        }
    }

    /// The standard decorations: freedesktop icon names; `.error` is critical, the rest normal (low urgency
    /// would hide the banner on some servers). No categories or sounds, so nothing plays unless the app asks.
    public static let standardDecorations: [ToastStatus: ToastStatusDecoration] = [
        .normal: ToastStatusDecoration(iconName: "dialog-information"),
        .success: ToastStatusDecoration(iconName: "emblem-default"),
        .warning: ToastStatusDecoration(iconName: "dialog-warning"),
        .error: ToastStatusDecoration(iconName: "dialog-error", urgency: .critical),
        .notification: ToastStatusDecoration(iconName: "preferences-system-notifications"),
    ]
}

/// What a status contributes to the outgoing request.
public struct ToastStatusDecoration: Sendable, Hashable {
    /// The icon name used when the toast has no icon of its own.
    public var iconName: String?
    /// The urgency.
    public var urgency: ToastUrgency
    /// An optional freedesktop category.
    public var category: String?
    /// An optional freedesktop sound name.
    public var soundName: String?

    /// Creates a decoration.
    public init(
        iconName: String? = nil, urgency: ToastUrgency = .normal, category: String? = nil, soundName: String? = nil
    ) {
        self.iconName = iconName
        self.urgency = urgency
        self.category = category
        self.soundName = soundName
    }
}

/// A color value, kept for the product page's ``ToastTheme/tint`` (no effect on notification servers).
public struct ToastColor: Sendable, Hashable {
    /// Red, 0...1.
    public var red: Double
    /// Green, 0...1.
    public var green: Double
    /// Blue, 0...1.
    public var blue: Double
    /// Opacity, 0...1.
    public var opacity: Double

    /// Creates a color.
    public init(red: Double, green: Double, blue: Double, opacity: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.opacity = opacity
    }

    /// Gray.
    public static let gray = ToastColor(red: 0.56, green: 0.56, blue: 0.58)
    /// Green.
    public static let green = ToastColor(red: 0.20, green: 0.78, blue: 0.35)
    /// Orange.
    public static let orange = ToastColor(red: 1.00, green: 0.58, blue: 0.00)
    /// Red.
    public static let red = ToastColor(red: 1.00, green: 0.23, blue: 0.19)
    /// Blue.
    public static let blue = ToastColor(red: 0.00, green: 0.48, blue: 1.00)
    /// Pink.
    public static let pink = ToastColor(red: 1.00, green: 0.18, blue: 0.33)
}

/// A font token, kept for the product page's ``ToastTheme/titleFont`` (no effect on notification servers).
public enum ToastFont: String, Sendable, Hashable, CaseIterable {
    /// Headline.
    case headline
    /// Subheadline.
    case subheadline
    /// Body.
    case body
    /// Callout.
    case callout
    /// Footnote.
    case footnote
}
