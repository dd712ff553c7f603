/// How long a toast stays in front.
///
/// Write a number for seconds (`duration: 6`), `.automatic` for the center's default (4 seconds unless
/// ``ToastCenter`` was made with another), or `.indefinite` when the person must respond.
/// Only the front toast's time runs; see ``ToastStack``.
public enum ToastDuration: Sendable, Hashable, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    /// The center's default duration.
    case automatic
    /// A number of seconds; it must be finite and not negative.
    case seconds(Double)
    /// Stays until the person acts on it or the app closes it.
    case indefinite

    /// The standard default of a center: four seconds.
    public static let standardDefault: ToastDuration = .seconds(4)

    /// The largest accepted number of seconds (about 31 years); larger values are reported as invalid
    /// rather than overflowing `Duration`.
    public static let maximumSeconds: Double = 1_000_000_000

    /// Creates a duration of `value` seconds, so that `duration: 6` reads naturally.
    public init(integerLiteral value: Int) {
        self = .seconds(Double(value))
    }

    /// Creates a duration of `value` seconds, so that `duration: 2.5` reads naturally.
    public init(floatLiteral value: Double) {
        self = .seconds(value)
    }

    /// Resolves `.automatic` against `defaultDuration` and converts to a `Duration`; `nil` means indefinite.
    /// - Throws: ``ToastValidationError`` for a negative, NaN, infinite or too large number of seconds.
    public func resolved(default defaultDuration: ToastDuration, field: String = "duration")
        throws(ToastValidationError) -> Duration?
    {
        switch self {
        case .indefinite:
            return nil
        case .automatic:
            // A center whose default is itself `.automatic` falls back to the standard four seconds.
            let fallback = defaultDuration == .automatic ? ToastDuration.standardDefault : defaultDuration
            return try fallback.resolved(default: .indefinite, field: "defaultDuration")
        case .seconds(let seconds):
            guard seconds.isFinite else {
                throw ToastValidationError(field: field, reason: "duration must be a finite number, got \(seconds)")
            }
            guard seconds >= 0 else {
                throw ToastValidationError(field: field, reason: "duration must not be negative, got \(seconds)")
            }
            guard seconds <= ToastDuration.maximumSeconds else {
                throw ToastValidationError(
                    field: field,
                    reason: "duration must be at most \(Int(ToastDuration.maximumSeconds)) seconds, got \(seconds)")
            }
            return .seconds(seconds)
        }
    }
}
