internal import CDBus

/// An error from D-Bus: a D-Bus error name and a human-readable message.
///
/// Every failure in this module is a `DBusError`: error replies from a remote peer carry the peer's error name;
/// errors detected locally use the standard `org.freedesktop.DBus.Error.*` names (``Name``) so callers match on one
/// field whatever the origin. Input errors name the offending argument or field in ``message``.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name, for example ``Name/serviceUnknown``.
    public var name: Name
    /// What went wrong, in words.
    public var message: String

    /// Creates an error with a D-Bus error name and a message.
    public init(name: Name, message: String) {
        self.name = name
        self.message = message
    }

    /// `name: message`.
    public var description: String { message.isEmpty ? name.rawValue : "\(name.rawValue): \(message)" }

    /// The message, or the name when there is no message: what to tell a person.
    public var reason: String { message.isEmpty ? name.rawValue : message }

    /// A D-Bus error name, such as `org.freedesktop.DBus.Error.NoReply`: the well-known ones are static members, and
    /// any other (a service's own) is made from its string.
    ///
    /// Match an error by name in a `catch` or a `switch`, as with swift-system's `Errno`:
    ///
    /// ```swift
    /// do {
    ///     _ = try await connection.call(call)
    /// } catch DBusError.Name.serviceUnknown {
    ///     // nobody owns the name
    /// } catch let error as DBusError where error.name == "org.example.Error.Busy" {
    ///     // a service's own error
    /// }
    /// ```
    ///
    /// Not validated: it is the name as received or given. Names sent on the bus are checked when the error reply
    /// is built (``ErrorName``).
    public struct Name: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name as a string.
        public var rawValue: String

        /// A name from its string.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A name from its string.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// A name from a string literal.
        public init(stringLiteral value: String) { rawValue = value }

        /// The name.
        public var description: String { rawValue }

        /// Whether `error` is a ``DBusError`` with this name (for `catch DBusError.Name.noReply`).
        public static func ~= (name: Name, error: any Error) -> Bool {
            (error as? DBusError)?.name == name
        }

        /// A generic failure.
        public static let failed: Name = "org.freedesktop.DBus.Error.Failed"
        /// No reply arrived within the call's timeout.
        public static let noReply: Name = "org.freedesktop.DBus.Error.NoReply"
        /// The connection is closed or the bus went away.
        public static let disconnected: Name = "org.freedesktop.DBus.Error.Disconnected"
        /// An argument is not valid: a NUL byte, invalid UTF-8, a bad name, a wrong signature.
        public static let invalidArgs: Name = "org.freedesktop.DBus.Error.InvalidArgs"
        /// A reply or argument list did not have the expected signature.
        public static let invalidSignature: Name = "org.freedesktop.DBus.Error.InvalidSignature"
        /// The bus address is malformed or names no bus.
        public static let badAddress: Name = "org.freedesktop.DBus.Error.BadAddress"
        /// The bus could not be reached.
        public static let noServer: Name = "org.freedesktop.DBus.Error.NoServer"
        /// A socket or file does not exist.
        public static let fileNotFound: Name = "org.freedesktop.DBus.Error.FileNotFound"
        /// The destination name has no owner and cannot be activated.
        public static let serviceUnknown: Name = "org.freedesktop.DBus.Error.ServiceUnknown"
        /// The name has no owner.
        public static let nameHasNoOwner: Name = "org.freedesktop.DBus.Error.NameHasNoOwner"
        /// The object has no such method.
        public static let unknownMethod: Name = "org.freedesktop.DBus.Error.UnknownMethod"
        /// No object at that path.
        public static let unknownObject: Name = "org.freedesktop.DBus.Error.UnknownObject"
        /// The message is larger than the bus accepts.
        public static let limitsExceeded: Name = "org.freedesktop.DBus.Error.LimitsExceeded"
        /// Out of memory inside libdbus.
        public static let noMemory: Name = "org.freedesktop.DBus.Error.NoMemory"
        /// The caller may not do this (the bus's or a service's policy).
        public static let accessDenied: Name = "org.freedesktop.DBus.Error.AccessDenied"
    }

    /// True when the error means the connection is gone.
    public var isDisconnected: Bool { name == Name.disconnected }
    /// True when the error means the call got no reply: it timed out, or its recipient left the bus (see
    /// ``isRecipientDisconnected``).
    public var isNoReply: Bool { name == Name.noReply }
    /// True when the call's recipient left the bus without replying (the bus said so); the call did not time out.
    /// The error's name is still `NoReply`, as the bus sends it.
    public var isRecipientDisconnected: Bool {
        name == Name.noReply && message == Self.recipientDisconnectedMessage
    }

    /// The message of the `NoReply` error the bus sends when a call's recipient disconnects before replying.
    static let recipientDisconnectedMessage = "the recipient left the bus without replying"

    static func invalidArgs(_ message: String) -> DBusError { DBusError(name: Name.invalidArgs, message: message) }
    static func disconnected(_ message: String = "the connection is closed") -> DBusError {
        DBusError(name: Name.disconnected, message: message)
    }
    static let noMemory = DBusError(name: Name.noMemory, message: "libdbus ran out of memory")

    /// Takes the contents of a set C `DBusError` (and frees it), or returns nil when it is not set.
    static func take(_ error: inout CDBus.DBusError) -> DBusError? {
        guard dbus_error_is_set(&error) != 0 else { return nil }
        defer { dbus_error_free(&error) }
        let name = error.name.map { Name(String(cString: $0)) } ?? Name.failed
        let message = error.message.map { String(cString: $0) } ?? ""
        return DBusError(name: name, message: message)
    }
}
