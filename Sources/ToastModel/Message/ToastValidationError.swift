/// Why a toast cannot be presented, naming the offending field.
///
/// Building a ``ToastMessage`` never throws, so the product page's `ToastMessage(title: "Copiado", duration: 2)`
/// stays a plain expression. ``ToastCenter/present(_:)`` validates and, for a bad message, ends the toast at once
/// with ``ToastOutcome/failed(_:)`` carrying ``ToastFailure/invalid(_:)``. Call ``ToastMessage/validate()`` to
/// check up front.
public struct ToastValidationError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The field at fault, such as `"title"`, `"duration"`, `"icon"` or `"actions"`.
    public var field: String
    /// A precise, human-readable reason.
    public var reason: String

    /// Creates a validation error.
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    /// `"<field>: <reason>"`.
    public var description: String { "\(field): \(reason)" }
}
