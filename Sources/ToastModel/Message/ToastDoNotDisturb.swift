/// Do Not Disturb in the model: what a toast does while the desktop holds toasts back (its policy), the state a
/// presenter reports, and how a toast was held back (the ``ToastEvent/suppressed(id:suppression:)`` event).

/// What a toast does while the desktop's Do Not Disturb is on.
///
/// The presenter reads the state where the notification server lets it (``ToastPresenterEvents/doNotDisturbChanged(_:)``);
/// where it cannot, Do Not Disturb counts as off and every toast is shown.
/// A toast already live (on the presenter or waiting behind another) takes new content in place whatever its policy.
public enum ToastDoNotDisturbPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Wait in the center until Do Not Disturb ends, then show with the whole duration (the default). The toast
    /// reports ``ToastEvent/suppressed(id:suppression:)`` with ``ToastSuppression/Kind/held`` at once.
    case hold
    /// End at once with ``ToastOutcome/suppressed``: nothing reaches the server. For toasts that mean nothing later,
    /// such as "copied" or a progress step.
    case drop
    /// Hand it to the server now. The server decides: most keep it in their history without a popup, some let a
    /// critical toast through (``ToastDoNotDisturb/serverEffect`` says what this one does). The toast reports
    /// ``ToastSuppression/Kind/sentAnyway``.
    case show
}

/// The desktop's Do Not Disturb state as the presenter read it.
public struct ToastDoNotDisturb: Sendable, Hashable, Codable {
    /// Whether toasts are held back now.
    public var isOn: Bool
    /// Where the state was read, such as `dunst: org.dunstproject.cmd0.paused`.
    public var source: String
    /// What the server does with a toast it is handed meanwhile, such as "dunst holds toasts and shows them when it
    /// resumes"; nil when off or not known.
    public var serverEffect: String?

    /// Creates a state.
    public init(isOn: Bool, source: String, serverEffect: String? = nil) {
        self.isOn = isOn
        self.source = source
        self.serverEffect = serverEffect
    }

    /// Off, as far as anything said: the state of a center whose presenter never reported one.
    public static let off = ToastDoNotDisturb(isOn: false, source: "not reported")
}

/// How Do Not Disturb held a toast back, for ``ToastEvent/suppressed(id:suppression:)``.
public struct ToastSuppression: Sendable, Hashable, Codable {
    /// What happened to the toast.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// The center holds it and shows it when Do Not Disturb ends (``ToastDoNotDisturbPolicy/hold``).
        case held
        /// It ended with ``ToastOutcome/suppressed`` without being shown (``ToastDoNotDisturbPolicy/drop``).
        case dropped
        /// It was handed to the server during Do Not Disturb (``ToastDoNotDisturbPolicy/show``); the server
        /// decides whether it pops up.
        case sentAnyway
    }

    /// What happened to the toast.
    public var kind: Kind
    /// The Do Not Disturb state that held it back: where it was read, what the server does meanwhile.
    public var state: ToastDoNotDisturb

    /// Creates a value.
    public init(kind: Kind, state: ToastDoNotDisturb) {
        self.kind = kind
        self.state = state
    }

    /// Where the state was read (``ToastDoNotDisturb/source``).
    public var source: String { state.source }
    /// What the server does with a toast meanwhile (``ToastDoNotDisturb/serverEffect``).
    public var serverEffect: String? { state.serverEffect }
}
