internal import CDBus

/// An error from D-Bus: a D-Bus error name and a human-readable message.
///
/// Every failure in this module is a `DBusError`: error replies from a remote peer carry the peer's error name;
/// errors detected locally use the standard `org.freedesktop.DBus.Error.*` names (``Name``) so callers match on one
/// field whatever the origin. Input errors name the offending argument or field in ``message``.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name, for example `org.freedesktop.DBus.Error.ServiceUnknown`.
    public var name: String
    /// What went wrong, in words.
    public var message: String

    /// Creates an error with a D-Bus error name and a message.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// `name: message`.
    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// Well-known D-Bus error names used by this module.
    public enum Name {
        /// A generic failure.
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        /// No reply arrived within the call's timeout.
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        /// The connection is closed or the bus went away.
        public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
        /// An argument is not valid: a NUL byte, invalid UTF-8, a bad name, a wrong signature.
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        /// A reply or argument list did not have the expected signature.
        public static let invalidSignature = "org.freedesktop.DBus.Error.InvalidSignature"
        /// The bus address is malformed or names no bus.
        public static let badAddress = "org.freedesktop.DBus.Error.BadAddress"
        /// The bus could not be reached.
        public static let noServer = "org.freedesktop.DBus.Error.NoServer"
        /// A socket or file does not exist.
        public static let fileNotFound = "org.freedesktop.DBus.Error.FileNotFound"
        /// The destination name has no owner and cannot be activated.
        public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
        /// The name has no owner.
        public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        /// The object has no such method.
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        /// No object at that path.
        public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        /// The message is larger than the bus accepts.
        public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
        /// Out of memory inside libdbus.
        public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
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
        let name = error.name.map { String(cString: $0) } ?? Name.failed
        let message = error.message.map { String(cString: $0) } ?? ""
        return DBusError(name: name, message: message)
    }
}
