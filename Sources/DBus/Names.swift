internal import CDBus

/// Checks a string that is about to become a C string: no embedded NUL (libdbus would silently truncate at it).
func checkNoNUL(_ string: String, what: @autoclosure () -> String) throws(DBusError) {
    if let offset = string.utf8.firstIndex(of: 0) {
        let position = string.utf8.distance(from: string.utf8.startIndex, to: offset)
        throw .invalidArgs("\(what()) contains a NUL byte at UTF-8 offset \(position)")
    }
}

/// Runs one of libdbus's `dbus_validate_*` functions, turning its verdict into a thrown error that names the field.
private func validate(
    _ string: String,
    kind: String,
    _ validator: (UnsafePointer<CChar>, UnsafeMutablePointer<CDBus.DBusError>) -> dbus_bool_t
) throws(DBusError) {
    try checkNoNUL(string, what: "\(kind) \"\(string.debugEscaped)\"")
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    let valid = string.withCString { validator($0, &error) }
    if valid == 0 {
        let reason = DBusError.take(&error)?.message ?? "not valid"
        throw .invalidArgs("invalid \(kind) \"\(string.debugEscaped)\": \(reason)")
    }
    dbus_error_free(&error)
}

extension String {
    /// The string with control characters escaped, for error messages.
    var debugEscaped: String {
        var out = ""
        for scalar in unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += scalar.escaped(asASCII: true)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// A name that was checked by libdbus's validator when it was made, so it can never make libdbus abort.
public protocol ValidatedName: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The checked text.
    var rawValue: String { get }
    /// Checks `string` and wraps it, or throws a `DBusError` naming what is wrong.
    ///
    /// (Named `validating:` because `ObjectPath("…")` with a literal argument is the literal initializer, which
    /// traps on an invalid literal; dynamic text always goes through this throwing one.)
    init(validating string: String) throws(DBusError)
}

extension ValidatedName {
    /// The checked text.
    public var description: String { rawValue }

    /// Creates a name from a literal. An invalid literal is a programming error and traps with the reason.
    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure(error.description) }
    }
}

/// An object path such as `/org/freedesktop/Notifications`.
///
/// The corresponding C function is `dbus_validate_path`.
public struct ObjectPath: ValidatedName {
    /// The checked path.
    public let rawValue: String
    /// Checks `string` with `dbus_validate_path`.
    public init(validating string: String) throws(DBusError) {
        try validate(string, kind: "object path", dbus_validate_path)
        rawValue = string
    }
    /// Wraps a path libdbus already validated (it arrived in a message).
    init(trusted string: String) { rawValue = string }
}

/// A bus name: a unique name (`:1.42`) or a well-known name (`org.freedesktop.Notifications`).
///
/// The corresponding C function is `dbus_validate_bus_name`.
public struct BusName: ValidatedName {
    /// The checked name.
    public let rawValue: String
    /// Checks `string` with `dbus_validate_bus_name`.
    public init(validating string: String) throws(DBusError) {
        try validate(string, kind: "bus name", dbus_validate_bus_name)
        rawValue = string
    }
    /// True for a unique connection name (it starts with `:`).
    public var isUnique: Bool { rawValue.hasPrefix(":") }

    /// A well-known name other than the bus's own: a rule naming it as sender makes the connection follow its owner.
    var isFollowedOwner: Bool { !isUnique && rawValue != "org.freedesktop.DBus" }
}

/// An interface name such as `org.freedesktop.Notifications`.
///
/// The corresponding C function is `dbus_validate_interface`.
public struct InterfaceName: ValidatedName {
    /// The checked name.
    public let rawValue: String
    /// Checks `string` with `dbus_validate_interface`.
    public init(validating string: String) throws(DBusError) {
        try validate(string, kind: "interface name", dbus_validate_interface)
        rawValue = string
    }
}

/// A method or signal name such as `Notify`.
///
/// The corresponding C function is `dbus_validate_member`.
public struct MemberName: ValidatedName {
    /// The checked name.
    public let rawValue: String
    /// Checks `string` with `dbus_validate_member`.
    public init(validating string: String) throws(DBusError) {
        try validate(string, kind: "member name", dbus_validate_member)
        rawValue = string
    }
}

/// An error name such as `org.freedesktop.DBus.Error.Failed`.
///
/// The corresponding C function is `dbus_validate_error_name`.
public struct ErrorName: ValidatedName {
    /// The checked name.
    public let rawValue: String
    /// Checks `string` with `dbus_validate_error_name`.
    public init(validating string: String) throws(DBusError) {
        try validate(string, kind: "error name", dbus_validate_error_name)
        rawValue = string
    }
}

/// A type signature such as `susssasa{sv}i` (any number of complete types, at most 255 bytes).
///
/// The corresponding C function is `dbus_signature_validate`.
public struct Signature: ValidatedName {
    /// The checked signature.
    public let rawValue: String
    /// Checks `string` with `dbus_signature_validate`.
    public init(validating string: String) throws(DBusError) {
        try validate(string, kind: "signature") { dbus_signature_validate($0, $1) }
        rawValue = string
    }
    /// Wraps a signature this module built itself and already checked.
    init(unchecked string: String) { rawValue = string }

    /// True when the signature is exactly one complete type (what an array element or a variant holds).
    public var isSingleCompleteType: Bool {
        if let code = singleByteCode { return code != 0 }
        return rawValue.withCString { dbus_signature_validate_single($0, nil) } != 0
    }

    /// For a one-byte signature: its type code when that is a complete type by itself (a basic type or `v`), else
    /// 0 — the same verdict as libdbus's, without the call (encoding checks `s`, `v` and such per value). Nil for
    /// longer signatures.
    var singleByteCode: UInt8? {
        let utf8 = rawValue.utf8
        guard utf8.count == 1, let code = utf8.first else { return nil }
        return Self.basicCodes.contains(code) || code == UInt8(ascii: "v") ? code : 0
    }

    /// The type codes of D-Bus's basic types.
    static let basicCodes: Set<UInt8> = Set("ybnqiuxtdsogh".utf8)
}
