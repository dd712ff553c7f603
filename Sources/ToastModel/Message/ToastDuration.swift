/// How long a toast stays in front.
///
/// Write a number for seconds (`duration: 6`), a `Swift.Duration` (`duration: .milliseconds(1500)`,
/// `ToastDuration(timeout)`), `.automatic` for the center's default (4 seconds unless ``ToastCenter`` was made
/// with another), or `.indefinite` when the person must respond.
/// Only the front toast's time runs; see ``ToastStack``.
///
/// A number of seconds is taken to the nanosecond: `.seconds(1.9)` is exactly `Duration.milliseconds(1900)`.
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

    /// Creates a duration from a `Swift.Duration`: `ToastDuration(.seconds(5))`. A negative one is kept, and
    /// reported as invalid when the toast is presented.
    public init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .seconds(Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// A duration of `milliseconds`: `duration: .milliseconds(1500)`.
    public static func milliseconds(_ milliseconds: Int) -> ToastDuration {
        ToastDuration(Duration.milliseconds(milliseconds))
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
            // To the nanosecond, so that 1.9 s is 1900 ms exactly (`Duration.seconds(1.9)` rounds to attoseconds,
            // just under or over), and the sum of two such durations is what it looks like.
            return .nanoseconds(Int64((seconds * 1e9).rounded()))
        }
    }
}
