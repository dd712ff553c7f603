internal import CDBus
import Glibc

// What every message check shares: the specification's limits, the UTF-8 check libdbus would abort on, errno text.

/// The limits of the D-Bus specification that libdbus enforces by aborting or by dropping the connection.
enum Limits {
    /// Nesting of arrays, and separately of structs (dict entries count as structs).
    static let maxContainerDepth = 32
    /// Total nesting, variants included.
    static let maxTotalDepth = 64
    /// dbus-daemon's default `max_message_size`: a larger message makes the bus drop the whole connection.
    static let maxMessageSize = 32 * 1024 * 1024
    /// How many bytes of received messages a connection holds before it stops reading its socket until they are
    /// handled (`dbus_connection_set_max_received_size`): one message larger than this is still read whole.
    static let maxReadAhead = 4 * 1024 * 1024
}

/// Checks bytes with `dbus_validate_utf8` (the same check that aborts inside `append_basic`) and for NULs.
func validatedString(utf8 bytes: some Collection<UInt8>, field: String) throws(DBusError) -> String {
    var array = Array(bytes)
    if let nul = array.firstIndex(of: 0) {
        throw .invalidArgs("\(field) contains a NUL byte at offset \(nul)")
    }
    array.append(0)
    let valid = array.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { dbus_validate_utf8($0.baseAddress!, nil) }
    }
    guard valid != 0 else {
        let bad = firstInvalidUTF8Offset(array.dropLast()) ?? 0
        throw .invalidArgs("\(field) is not valid UTF-8 (bad byte at offset \(bad))")
    }
    return String(decoding: array.dropLast(), as: UTF8.self)
}

private func firstInvalidUTF8Offset(_ bytes: ArraySlice<UInt8>) -> Int? {
    var decoder = UTF8()
    var iterator = bytes.makeIterator()
    var offset = 0
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue(let scalar): offset += UTF8.width(scalar)
        case .emptyInput: return nil
        case .error: return offset
        }
    }
}

/// The text of the current `errno`, for error messages.
func errnoText() -> String { String(cString: strerror(errno)) }
