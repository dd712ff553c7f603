internal import CDBus
import Glibc

/// Reads a libdbus message body into Swift values.
enum MessageDecoder {
    static func decodeBody(of message: OpaquePointer) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            values.append(decode(&iter))
        } while dbus_message_iter_next(&iter) != 0
        return values
    }

    private static func basic(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> DBusBasicValue {
        var value = DBusBasicValue()
        dbus_message_iter_get_basic(iter, &value)
        return value
    }

    /// Decodes the value under `iter`. libdbus validated the whole message on receipt, so types are trustworthy.
    static func decode(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(iter)
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(basic(iter).byt)
        case CDBUS_TYPE_BOOLEAN: return .boolean(basic(iter).bool_val != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(iter).i16)
        case CDBUS_TYPE_UINT16: return .uint16(basic(iter).u16)
        case CDBUS_TYPE_INT32: return .int32(basic(iter).i32)
        case CDBUS_TYPE_UINT32: return .uint32(basic(iter).u32)
        case CDBUS_TYPE_INT64: return .int64(Int64(basic(iter).i64))
        case CDBUS_TYPE_UINT64: return .uint64(UInt64(basic(iter).u64))
        case CDBUS_TYPE_DOUBLE: return .double(basic(iter).dbl)
        case CDBUS_TYPE_STRING: return .string(String(cString: basic(iter).str))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(ObjectPath(trusted: String(cString: basic(iter).str)))
        case CDBUS_TYPE_SIGNATURE: return .signature(Signature(unchecked: String(cString: basic(iter).str)))
        case CDBUS_TYPE_UNIX_FD: return .unixFD(basic(iter).fd)
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(iter, &sub)
            return .variant(decode(&sub))
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(iter, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                fields.append(decode(&sub))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case CDBUS_TYPE_ARRAY:
            return decodeArray(iter)
        default:
            // Only reachable if libdbus adds a type this module does not know.
            return .string("<unsupported D-Bus type \(type)>")
        }
    }

    private static func decodeArray(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> DBusValue {
        let elementType = dbus_message_iter_get_element_type(iter)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(iter, &sub)
        if elementType == CDBUS_TYPE_BYTE {
            var pointer: UnsafeMutableRawPointer?
            var count: Int32 = 0
            withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&sub, $0, &count) }
            guard let pointer, count > 0 else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
        }
        let full = signature(of: iter)
        let element = String(full.dropFirst())
        if elementType == CDBUS_TYPE_DICT_ENTRY {
            let inner = element.dropFirst().dropLast()
            let key = String(inner.prefix(1))
            let value = String(inner.dropFirst())
            var entries: [DBusDictEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                var entryIter = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entryIter)
                let k = decode(&entryIter)
                dbus_message_iter_next(&entryIter)
                let v = decode(&entryIter)
                entries.append(DBusDictEntry(k, v))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: Signature(unchecked: key), value: Signature(unchecked: value), entries)
        }
        var elements: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
            elements.append(decode(&sub))
            dbus_message_iter_next(&sub)
        }
        return .array(Signature(unchecked: element), elements)
    }

    /// The size of `message`'s body on the wire, in bytes, without decoding it: an array counts its length field
    /// and its marshalled bytes (read in one step), a string its length, bytes and NUL; alignment padding is left
    /// out. Linear in the body's strings outside arrays (`strlen`) and in its top-level structure, which its
    /// signature bounds: a 128 MiB string costs one `strlen`, an `a{sv}` of a million entries one read.
    static func bodySize(of message: OpaquePointer) -> Int {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return 0 }
        var total = 0
        repeat {
            total += size(&iter)
        } while dbus_message_iter_next(&iter) != 0
        return total
    }

    private static func size(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> Int {
        switch dbus_message_iter_get_arg_type(iter) {
        case CDBUS_TYPE_BYTE: return 1
        case CDBUS_TYPE_INT16, CDBUS_TYPE_UINT16: return 2
        case CDBUS_TYPE_BOOLEAN, CDBUS_TYPE_INT32, CDBUS_TYPE_UINT32, CDBUS_TYPE_UNIX_FD: return 4
        case CDBUS_TYPE_INT64, CDBUS_TYPE_UINT64, CDBUS_TYPE_DOUBLE: return 8
        case CDBUS_TYPE_STRING, CDBUS_TYPE_OBJECT_PATH: return 4 + strlen(basic(iter).str) + 1
        case CDBUS_TYPE_SIGNATURE: return 1 + strlen(basic(iter).str) + 1
        case CDBUS_TYPE_ARRAY:
            // The length is the array reader's: read it inside the array.
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(iter, &sub)
            return 4 + Int(cdbus_iter_array_bytes(&sub))
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(iter, &sub)
            return 1 + signature(of: &sub).utf8.count + 1 + size(&sub)
        case CDBUS_TYPE_STRUCT, CDBUS_TYPE_DICT_ENTRY:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(iter, &sub)
            var total = 0
            while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                total += size(&sub)
                dbus_message_iter_next(&sub)
            }
            return total
        default: return 0
        }
    }

    private static func signature(of iter: UnsafeMutablePointer<DBusMessageIter>) -> String {
        guard let raw = dbus_message_iter_get_signature(iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }
}
