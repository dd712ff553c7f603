/// Turns a toast snapshot into the outgoing request (M8). The center still owns timing and actions.
///
/// Choose ``plain`` to send no status decoration, ``themed(_:)`` for a theme, or implement the protocol to
/// rewrite the whole request, hints included:
///
/// ```swift
/// struct LoudStyle: ToastStyle {
///     func makeRequest(for toast: PresentedToast) -> ToastRequest {
///         var request = ThemedToastStyle.standard.makeRequest(for: toast)
///         request.hints["x-loud"] = .bool(true)
///         return request
///     }
/// }
/// toasts.toastStyle(LoudStyle())
/// ```
public protocol ToastStyle: Sendable {
    /// Makes the request for `toast`. Called by the center, never while it holds its lock.
    func makeRequest(for toast: PresentedToast) -> ToastRequest
}

/// The standard style: decorates each status with a ``ToastTheme``.
public struct ThemedToastStyle: ToastStyle {
    /// The theme.
    public var theme: ToastTheme

    /// Creates a themed style.
    public init(theme: ToastTheme) {
        self.theme = theme
    }

    /// Uses the toast's own icon and sound, or the theme's for the status, plus urgency and category.
    public func makeRequest(for toast: PresentedToast) -> ToastRequest {
        let decoration = theme[toast.status]
        var request = PlainToastStyle().makeRequest(for: toast)
        request.icon = toast.icon ?? decoration.iconName.map(ToastIcon.system)
        request.urgency = decoration.urgency
        request.category = decoration.category
        request.sound = toast.sound ?? decoration.soundName.map(ToastSound.named)
        return request
    }
}

/// A style without status decoration: only the toast's own text, icon and actions, normal urgency.
public struct PlainToastStyle: ToastStyle {
    /// Creates the plain style.
    public init() {}

    /// Maps the snapshot field by field (with the toast's own sound, if it asks for one).
    public func makeRequest(for toast: PresentedToast) -> ToastRequest {
        ToastRequest(
            summary: toast.title,
            body: toast.message,
            icon: toast.icon,
            sound: toast.sound,
            actions: toast.actions.map {
                ToastRequest.Action(key: $0.key, label: $0.title, icon: $0.icon, reply: $0.reply)
            },
            isTransient: toast.isConfirmation)
    }
}

extension ToastStyle where Self == PlainToastStyle {
    /// No status decoration (`toasts.toastStyle(.plain)`).
    public static var plain: PlainToastStyle { PlainToastStyle() }
}

extension ToastStyle where Self == ThemedToastStyle {
    /// The standard style: ``ThemedToastStyle`` with ``ToastTheme/standard``.
    public static var standard: ThemedToastStyle { ThemedToastStyle(theme: .standard) }

    /// The style for `theme`.
    public static func themed(_ theme: ToastTheme) -> ThemedToastStyle {
        ThemedToastStyle(theme: theme)
    }
}
