internal import CDBus
import Glibc
import Synchronization

/// Appends Swift values to a libdbus message, checking everything libdbus would abort on first.
struct MessageEncoder {
    /// Bytes of string and array payload written so far (a lower bound of the message size).
    private(set) var payloadBytes = 0
    private var arrayDepth = 0
    private var structDepth = 0
    private var totalDepth = 0

    mutating func append(
        _ values: [DBusValue],
        to message: OpaquePointer,
        fieldPrefix: String = "argument"
    ) throws(DBusError) {
        let bodySignature = values.map(\.signature).joined()
        if !bodySignature.isEmpty { try Self.validateBody(signature: bodySignature) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        do {
            for (index, value) in values.enumerated() {
                try append(value, to: &iter) { "\(fieldPrefix) \(index)" }
            }
        } catch let error as DBusError {
            throw error
        } catch {
            throw DBusError(name: DBusError.Name.failed, message: "\(error)")
        }
    }

    private mutating func append(
        _ value: DBusValue,
        to iter: UnsafeMutablePointer<DBusMessageIter>,
        field: () -> String
    ) throws {
        var ok: dbus_bool_t = 1
        switch value {
        case .byte(var v): ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_BYTE, &v)
        case .boolean(let b):
            var v: dbus_bool_t = b ? 1 : 0
            ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_BOOLEAN, &v)
        case .int16(var v): ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_INT16, &v)
        case .uint16(var v): ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_UINT16, &v)
        case .int32(var v): ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_INT32, &v)
        case .uint32(var v): ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_UINT32, &v)
        case .int64(let x):
            var v = dbus_int64_t(x)
            ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_INT64, &v)
        case .uint64(let x):
            var v = dbus_uint64_t(x)
            ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_UINT64, &v)
        case .double(var v): ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_DOUBLE, &v)
        case .string(let s): ok = try appendString(s, type: CDBUS_TYPE_STRING, to: iter, field: field)
        case .objectPath(let p): ok = try appendString(p.rawValue, type: CDBUS_TYPE_OBJECT_PATH, to: iter, field: field)
        case .signature(let g): ok = try appendString(g.rawValue, type: CDBUS_TYPE_SIGNATURE, to: iter, field: field)
        case .unixFD(var fd):
            guard fd >= 0 else { throw DBusError.invalidArgs("\(field()): \(fd) is not a file descriptor") }
            ok = dbus_message_iter_append_basic(iter, CDBUS_TYPE_UNIX_FD, &fd)
            if ok == 0 {
                throw DBusError.invalidArgs("\(field()): file descriptor \(fd) cannot be sent (\(errnoText()))")
            }
        case .bytes(let bytes):
            try appendBytes(bytes, to: iter, field: field)
        case .array(let element, let elements):
            guard element.isSingleCompleteType else {
                throw DBusError.invalidArgs(
                    "\(field()): array element signature \"\(element)\" is not one complete type")
            }
            if element.rawValue == "y", let bytes = value.bytesValue, bytes.count == elements.count {
                try appendBytes(bytes, to: iter, field: field)
                return
            }
            try enterArray(field: field)
            defer { leave(array: true) }
            try container(CDBUS_TYPE_ARRAY, signature: element.rawValue, in: iter, field: field) { sub, encoder in
                for (i, e) in elements.enumerated() {
                    func elementField() -> String { "\(field())[\(i)]" }
                    guard e.signature == element.rawValue else {
                        throw DBusError.invalidArgs(
                            "\(elementField()) has type \"\(e.signature)\" but the array holds \"\(element)\"")
                    }
                    try encoder.append(e, to: sub, field: elementField)
                }
            }
        case .dictionary(let keyType, let valueType, let entries):
            guard Self.isBasic(keyType.rawValue) else {
                throw DBusError.invalidArgs("\(field()): dictionary key type \"\(keyType)\" is not a basic type")
            }
            guard valueType.isSingleCompleteType else {
                throw DBusError.invalidArgs(
                    "\(field()): dictionary value type \"\(valueType)\" is not one complete type")
            }
            try enterArray(field: field)
            defer { leave(array: true) }
            let entrySignature = "{" + keyType.rawValue + valueType.rawValue + "}"
            try container(CDBUS_TYPE_ARRAY, signature: entrySignature, in: iter, field: field) { sub, encoder in
                for entry in entries {
                    func entryField() -> String { "\(field())[\(entry.key.debugKey)]" }
                    guard entry.key.signature == keyType.rawValue, entry.value.signature == valueType.rawValue else {
                        throw DBusError.invalidArgs(
                            "\(entryField()) has types \"\(entry.key.signature)\" → \"\(entry.value.signature)\""
                                + " but the dictionary holds \"\(keyType)\" → \"\(valueType)\"")
                    }
                    try encoder.enterStruct(field: entryField)
                    defer { encoder.leave(array: false) }
                    try encoder.container(CDBUS_TYPE_DICT_ENTRY, signature: nil, in: sub, field: entryField) {
                        entryIter, inner in
                        try inner.append(entry.key, to: entryIter, field: { entryField() + ".key" })
                        try inner.append(entry.value, to: entryIter, field: entryField)
                    }
                }
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError.invalidArgs("\(field()): a struct needs at least one field") }
            try enterStruct(field: field)
            defer { leave(array: false) }
            try container(CDBUS_TYPE_STRUCT, signature: nil, in: iter, field: field) { sub, encoder in
                for (i, f) in fields.enumerated() { try encoder.append(f, to: sub) { "\(field()).\(i)" } }
            }
        case .variant(let inner):
            let innerSignature = inner.signature
            let single =
                Signature(unchecked: innerSignature).singleByteCode.map { $0 != 0 }
                ?? ((try? Signature(validating: innerSignature))?.isSingleCompleteType == true)
            guard single else {
                throw DBusError.invalidArgs(
                    "\(field()): variant content type \"\(innerSignature)\" is not a valid single type")
            }
            totalDepth += 1
            defer { totalDepth -= 1 }
            guard totalDepth <= Limits.maxTotalDepth else {
                throw DBusError.invalidArgs("\(field()): values nested more than \(Limits.maxTotalDepth) deep")
            }
            try container(CDBUS_TYPE_VARIANT, signature: innerSignature, in: iter, field: field) { sub, encoder in
                try encoder.append(inner, to: sub, field: field)
            }
        }
        if ok == 0 { throw DBusError.noMemory }
    }

    private static func isBasic(_ signature: String) -> Bool {
        signature.utf8.count == 1 && Signature.basicCodes.contains(signature.utf8.first!)
    }

    /// Body signatures libdbus has already found valid: a program sends a handful of distinct ones, over and over.
    private static let validBodySignatures = Mutex<Set<String>>([])

    private static func validateBody(signature: String) throws(DBusError) {
        if validBodySignatures.withLock({ $0.contains(signature) }) { return }
        _ = try Signature(validating: signature)
        validBodySignatures.withLock { known in
            if known.count >= 256 { known.removeAll() }
            known.insert(signature)
        }
    }

    private mutating func enterArray(field: () -> String) throws {
        arrayDepth += 1
        totalDepth += 1
        if arrayDepth > Limits.maxContainerDepth || totalDepth > Limits.maxTotalDepth {
            arrayDepth -= 1
            totalDepth -= 1
            throw DBusError.invalidArgs(
                "\(field()): containers nested too deep (D-Bus allows \(Limits.maxContainerDepth))")
        }
    }

    private mutating func enterStruct(field: () -> String) throws {
        structDepth += 1
        totalDepth += 1
        if structDepth > Limits.maxContainerDepth || totalDepth > Limits.maxTotalDepth {
            structDepth -= 1
            totalDepth -= 1
            throw DBusError.invalidArgs(
                "\(field()): containers nested too deep (D-Bus allows \(Limits.maxContainerDepth))")
        }
    }

    private mutating func leave(array: Bool) {
        if array { arrayDepth -= 1 } else { structDepth -= 1 }
        totalDepth -= 1
    }

    /// Opens a container, runs `body` on a sub-iterator with a stable address, and closes (or abandons) it.
    private mutating func container(
        _ type: Int32,
        signature: String?,
        in iter: UnsafeMutablePointer<DBusMessageIter>,
        field: () -> String,
        _ body: (UnsafeMutablePointer<DBusMessageIter>, inout MessageEncoder) throws -> Void
    ) throws {
        var sub = DBusMessageIter()
        try withUnsafeMutablePointer(to: &sub) { subp in
            let opened: dbus_bool_t =
                if let signature {
                    signature.withCString { dbus_message_iter_open_container(iter, type, $0, subp) }
                } else {
                    dbus_message_iter_open_container(iter, type, nil, subp)
                }
            guard opened != 0 else { throw DBusError.noMemory }
            do {
                try body(subp, &self)
            } catch {
                dbus_message_iter_abandon_container(iter, subp)
                throw error
            }
            guard dbus_message_iter_close_container(iter, subp) != 0 else { throw DBusError.noMemory }
        }
    }

    private mutating func appendString(
        _ string: String,
        type: Int32,
        to iter: UnsafeMutablePointer<DBusMessageIter>,
        field: () -> String
    ) throws -> dbus_bool_t {
        try checkNoNUL(string, what: field())
        payloadBytes += string.utf8.count + 5
        let result: Int32 = string.withCString { cString in
            // Swift strings are valid Unicode, but libdbus's UTF-8 rules are its own: ask it, never let it abort.
            if type == CDBUS_TYPE_STRING && dbus_validate_utf8(cString, nil) == 0 { return -1 }
            var pointer: UnsafePointer<CChar>? = cString
            return Int32(dbus_message_iter_append_basic(iter, type, &pointer))
        }
        if result < 0 { throw DBusError.invalidArgs("\(field()) is not a valid D-Bus UTF-8 string") }
        return dbus_bool_t(result)
    }

    private mutating func appendBytes(
        _ bytes: [UInt8],
        to iter: UnsafeMutablePointer<DBusMessageIter>,
        field: () -> String
    ) throws {
        payloadBytes += bytes.count + 4
        try container(CDBUS_TYPE_ARRAY, signature: "y", in: iter, field: field) { sub, _ in
            let ok = bytes.withUnsafeBufferPointer { buffer in
                var base = buffer.baseAddress
                return withUnsafeMutablePointer(to: &base) { pointer in
                    dbus_message_iter_append_fixed_array(sub, CDBUS_TYPE_BYTE, pointer, Int32(buffer.count))
                }
            }
            guard ok != 0 else { throw DBusError.noMemory }
        }
    }
}

extension DBusValue {
    fileprivate var debugKey: String {
        if let s = stringValue { return "\"\(s.debugEscaped)\"" }
        return "\(self)"
    }
}
