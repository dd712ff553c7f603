/// How a presented toast ended. Every presented toast ends exactly once (M9).
///
/// Outcomes compare with `==` (`outcome == .actionInvoked(actionID: "open")`, or `== .action("open")`) and are
/// `Codable`, each case as an object with one key: `{"actionInvoked":{"actionID":"open"}}`, `{"expired":{}}`,
/// `{"failed":{"failure":{"presenter":{"reason":"…"}}}}`.
public enum ToastOutcome: Sendable, Hashable, Codable {
    /// The person invoked the action with this id (its own id, also for a tap action).
    case actionInvoked(actionID: String)
    /// The person closed the toast, or the server closed it for a reason other than expiry.
    case dismissed
    /// Its time ran out while it was in front (or the server expired it).
    case expired
    /// The app closed it with ``ToastCenter/dismiss(id:)`` or ``ToastCenter/dismissAll()``.
    case closedByApp
    /// A newer presentation with the same id took its place (M2), or the overflow policy
    /// ``ToastOverflowPolicy/replaceOldest`` dropped it.
    case replaced
    /// The person chose ``ToastAction/later``; it is kept and comes back later (M6).
    case deferred
    /// Do Not Disturb was on and the toast's policy was ``ToastDoNotDisturbPolicy/drop``: it was never shown.
    case suppressed
    /// It could not be shown.
    case failed(ToastFailure)

    /// ``actionInvoked(actionID:)`` without the label: `if outcome == .action("open") { … }`.
    public static func action(_ actionID: String) -> ToastOutcome {
        .actionInvoked(actionID: actionID)
    }

    /// The invoked action's id, for ``actionInvoked(actionID:)``; `nil` for every other outcome.
    public var actionID: String? {
        if case .actionInvoked(let actionID) = self { return actionID }
        return nil
    }

    private enum FailedCodingKeys: String, CodingKey {
        case _0 = "failure"
    }
}

/// Why a toast failed.
///
/// `Codable` as `{"invalid":{"error":{"field":"title","reason":"…"}}}` or `{"presenter":{"reason":"…"}}`.
public enum ToastFailure: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The message was invalid; nothing was handed to the presenter.
    case invalid(ToastValidationError)
    /// The presenter could not show it and said it would not recover (for example, bad data the server refused).
    case presenter(reason: String)

    /// A human-readable description.
    public var description: String {
        switch self {
        case .invalid(let error): "invalid toast: \(error)"
        case .presenter(let reason): "presenter failed: \(reason)"
        }
    }

    private enum InvalidCodingKeys: String, CodingKey {
        case _0 = "error"
    }
}
