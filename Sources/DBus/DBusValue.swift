/// One D-Bus value of any type, as sent in a message body.
///
/// Basic types map to Swift scalars; containers carry their element signature so that empty arrays and
/// dictionaries keep their type. Decoding an `ay` always yields ``bytes(_:)`` (the fast path); encoding accepts both
/// ``bytes(_:)`` and `.array("y", [.byte…])`.
public indirect enum DBusValue: Sendable, Hashable {
    /// `y`: an unsigned byte.
    case byte(UInt8)
    /// `b`: a boolean (sent as a 4-byte 0 or 1).
    case boolean(Bool)
    /// `n`: a signed 16-bit integer.
    case int16(Int16)
    /// `q`: an unsigned 16-bit integer.
    case uint16(UInt16)
    /// `i`: a signed 32-bit integer.
    case int32(Int32)
    /// `u`: an unsigned 32-bit integer.
    case uint32(UInt32)
    /// `x`: a signed 64-bit integer.
    case int64(Int64)
    /// `t`: an unsigned 64-bit integer.
    case uint64(UInt64)
    /// `d`: an IEEE 754 double.
    case double(Double)
    /// `s`: a UTF-8 string without NUL bytes.
    case string(String)
    /// `o`: an object path.
    case objectPath(ObjectPath)
    /// `g`: a type signature.
    case signature(Signature)
    /// `h`: a Unix file descriptor. Encoding duplicates it; a decoded descriptor is a new one the receiver owns.
    case unixFD(Int32)
    /// `ay`: an array of bytes, marshalled in one block.
    case bytes([UInt8])
    /// `a…`: an array whose elements all have the given single complete type.
    case array(Signature, [DBusValue])
    /// `a{kv}`: a dictionary with a basic key type, in the order given.
    case dictionary(key: Signature, value: Signature, [DBusDictEntry])
    /// `(…)`: a struct with at least one field.
    case structure([DBusValue])
    /// `v`: a value of any single type, with its signature on the wire.
    case variant(DBusValue)

    /// The type signature of this value (one complete type).
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let element, _): "a" + element.rawValue
        case .dictionary(let key, let value, _): "a{" + key.rawValue + value.rawValue + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }
}

/// One entry of a D-Bus dictionary (`{kv}`).
public struct DBusDictEntry: Sendable, Hashable {
    /// The key; its type must be basic (not a container or variant).
    public var key: DBusValue
    /// The value.
    public var value: DBusValue
    /// Creates an entry.
    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// `as`: an array of strings.
    public static func strings(_ values: [String]) -> DBusValue { .array("s", values.map(DBusValue.string)) }

    /// `a{sv}`: the common "properties" or "hints" dictionary, in the order given.
    public static func variantDictionary(_ entries: KeyValuePairs<String, DBusValue>) -> DBusValue {
        .dictionary(key: "s", value: "v", entries.map { DBusDictEntry(.string($0.key), .variant($0.value)) })
    }

    /// `a{sv}` from an array of pairs, in the order given.
    public static func variantDictionary(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(key: "s", value: "v", entries.map { DBusDictEntry(.string($0.0), .variant($0.1)) })
    }

    /// A string from raw bytes that must be valid UTF-8 without NUL bytes, or a thrown error naming `field`.
    ///
    /// Swift strings are always valid Unicode; bytes from C, files or the command line may not be. libdbus aborts
    /// the process on invalid UTF-8, so such bytes must pass through here. The check is libdbus's own
    /// (`dbus_validate_utf8`).
    public static func string(utf8 bytes: some Collection<UInt8>, field: String) throws(DBusError) -> DBusValue {
        .string(try validatedString(utf8: bytes, field: field))
    }
}

extension DBusValue {
    /// The value of a `y`, or nil for another type.
    public var byteValue: UInt8? { if case .byte(let v) = self { v } else { nil } }
    /// The value of a `b`, or nil for another type.
    public var boolValue: Bool? { if case .boolean(let v) = self { v } else { nil } }
    /// The value of an `i`, or nil for another type.
    public var int32Value: Int32? { if case .int32(let v) = self { v } else { nil } }
    /// The value of a `u`, or nil for another type.
    public var uint32Value: UInt32? { if case .uint32(let v) = self { v } else { nil } }
    /// The value of an `x`, or nil for another type.
    public var int64Value: Int64? { if case .int64(let v) = self { v } else { nil } }
    /// The value of a `t`, or nil for another type.
    public var uint64Value: UInt64? { if case .uint64(let v) = self { v } else { nil } }
    /// The value of a `d`, or nil for another type.
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    /// The value of an `s` (or the text of an `o` or `g`), or nil for another type.
    public var stringValue: String? {
        switch self {
        case .string(let v): v
        case .objectPath(let v): v.rawValue
        case .signature(let v): v.rawValue
        default: nil
        }
    }
    /// The elements of an array (an `ay` gives `.byte` elements), or nil for another type.
    public var arrayValue: [DBusValue]? {
        switch self {
        case .array(_, let v): v
        case .bytes(let v): v.map(DBusValue.byte)
        default: nil
        }
    }
    /// The bytes of an `ay`, or nil for another type.
    public var bytesValue: [UInt8]? {
        switch self {
        case .bytes(let v): v
        case .array(let s, let v) where s.rawValue == "y": v.compactMap(\.byteValue)
        default: nil
        }
    }
    /// The strings of an `as`, or nil for another type.
    public var stringsValue: [String]? {
        guard case .array(let s, let v) = self, s.rawValue == "s" else { return nil }
        return v.compactMap(\.stringValue)
    }
    /// The entries of a dictionary, or nil for another type.
    public var dictionaryValue: [DBusDictEntry]? {
        if case .dictionary(_, _, let v) = self { v } else { nil }
    }
    /// The fields of a struct, or nil for another type.
    public var structValue: [DBusValue]? { if case .structure(let v) = self { v } else { nil } }
    /// The content of a variant, or nil for another type.
    public var variantValue: DBusValue? { if case .variant(let v) = self { v } else { nil } }

    /// An `a{sv}` as a Swift dictionary of the variants' contents (the last entry wins for a repeated key).
    public var variantDictionaryValue: [String: DBusValue]? {
        guard case .dictionary(let k, let v, let entries) = self, k.rawValue == "s", v.rawValue == "v" else {
            return nil
        }
        var out: [String: DBusValue] = [:]
        for entry in entries {
            if let key = entry.key.stringValue, let value = entry.value.variantValue { out[key] = value }
        }
        return out
    }
}
