// libFuzzer target for the D-Bus value layer (built by scripts/fuzz.sh together with Sources/DBus as one module,
// so it reaches the internal encoder and decoder).
//
// Two ways in, chosen by the first byte:
//   - raw wire bytes: `dbus_message_demarshal` decides what is a valid message; whatever it accepts must decode
//     into values that encode again and read back equal;
//   - a value tree built from the bytes: the encoder must either refuse it with a DBusError or produce a message
//     that decodes back to the same tree, also after going through the wire format.
// A crash, an abort inside libdbus (which is what unchecked input does) or a mismatch is a finding.
internal import CDBus
import Glibc

private struct ByteReader {
    var bytes: [UInt8]
    var offset = 0
    /// Values left to build: repeated array elements would otherwise grow a tree exponentially.
    var budget = 600
    var isAtEnd: Bool { offset >= bytes.count }
    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return offset < bytes.count ? bytes[offset] : 0
    }
    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T {
        var value: T = 0
        for _ in 0..<MemoryLayout<T>.size { value = (value << 8) | T(truncatingIfNeeded: byte()) }
        return value
    }
    mutating func chunk(_ limit: Int) -> [UInt8] {
        let wanted = Int(byte()) % (limit + 1)
        let start = min(offset, bytes.count)
        let count = min(wanted, bytes.count - start)
        offset = start + count
        return Array(bytes[start..<start + count])
    }
}

private let basicSignatures = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g"]

private func nodeCount(_ value: DBusValue) -> Int {
    switch value {
    case .array(_, let values), .structure(let values): 1 + values.reduce(0) { $0 + nodeCount($1) }
    case .dictionary(_, _, let entries): 1 + entries.reduce(0) { $0 + nodeCount($1.key) + nodeCount($1.value) }
    case .variant(let inner): 1 + nodeCount(inner)
    default: 1
    }
}

private func makeValue(_ reader: inout ByteReader, depth: Int) -> DBusValue {
    reader.budget -= 1
    guard reader.budget > 0 else { return .byte(0) }
    let kind = reader.byte() % (depth > 40 ? 13 : 19)
    switch kind {
    case 0: return .byte(reader.byte())
    case 1: return .boolean(reader.byte() & 1 == 1)
    case 2: return .int16(reader.integer(Int16.self))
    case 3: return .uint16(reader.integer(UInt16.self))
    case 4: return .int32(reader.integer(Int32.self))
    case 5: return .uint32(reader.integer(UInt32.self))
    case 6: return .int64(reader.integer(Int64.self))
    case 7: return .uint64(reader.integer(UInt64.self))
    case 8: return .double(Double(bitPattern: reader.integer(UInt64.self)))
    case 9, 10:
        // Arbitrary bytes, repaired into a Swift string (it may still hold NULs, which must be refused).
        return .string(String(decoding: reader.chunk(40), as: UTF8.self))
    case 11:
        let path = String(decoding: reader.chunk(20), as: UTF8.self)
        return (try? ObjectPath(validating: path)).map(DBusValue.objectPath) ?? .objectPath("/x")
    case 12:
        let text = String(decoding: reader.chunk(12), as: UTF8.self)
        return (try? Signature(validating: text)).map(DBusValue.signature) ?? .signature("a{sv}")
    case 13: return .bytes(reader.chunk(64))
    case 14:
        let element = makeValue(&reader, depth: depth + 1)
        var elements = [element]
        let extra = Int(reader.byte() % 4)
        let size = nodeCount(element)
        for _ in 0..<extra where reader.budget > size {
            // Mostly the same type (valid), sometimes another (must be refused).
            reader.budget -= size
            elements.append(reader.byte() % 8 == 0 ? makeValue(&reader, depth: depth + 1) : element)
        }
        let signature = element.signature
        if reader.byte() % 6 == 0 { return .array(Signature(unchecked: signature), []) }
        return .array(Signature(unchecked: signature), elements)
    case 15:
        let key = basicSignatures[Int(reader.byte()) % basicSignatures.count]
        var entries: [DBusDictEntry] = []
        let value = makeValue(&reader, depth: depth + 1)
        let size = nodeCount(value) + 1
        for _ in 0..<Int(reader.byte() % 3) where reader.budget > size {
            reader.budget -= size
            var keyReader = reader
            let keyValue = makeBasic(key, &keyReader)
            reader = keyReader
            entries.append(DBusDictEntry(keyValue, value))
        }
        return .dictionary(key: Signature(unchecked: key), value: Signature(unchecked: value.signature), entries)
    case 16:
        let count = Int(reader.byte() % 4)  // 0 fields: an empty struct, which must be refused
        return .structure((0..<count).map { _ in makeValue(&reader, depth: depth + 1) })
    default:
        return .variant(makeValue(&reader, depth: depth + 1))
    }
}

private func makeBasic(_ signature: String, _ reader: inout ByteReader) -> DBusValue {
    switch signature {
    case "y": .byte(reader.byte())
    case "b": .boolean(reader.byte() & 1 == 1)
    case "n": .int16(reader.integer(Int16.self))
    case "q": .uint16(reader.integer(UInt16.self))
    case "i": .int32(reader.integer(Int32.self))
    case "u": .uint32(reader.integer(UInt32.self))
    case "x": .int64(reader.integer(Int64.self))
    case "t": .uint64(reader.integer(UInt64.self))
    case "d": .double(Double(bitPattern: reader.integer(UInt64.self)))
    case "o": .objectPath("/k")
    case "g": .signature("s")
    default: .string(String(decoding: reader.chunk(8), as: UTF8.self))
    }
}

/// Equality that treats doubles by bit pattern (NaN != NaN otherwise) and `ay` written as elements as bytes.
private func same(_ a: DBusValue, _ b: DBusValue) -> Bool {
    switch (a, b) {
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.array(let s, let xs), .bytes(let ys)) where s.rawValue == "y": return xs.compactMap(\.byteValue) == ys
    case (.array(_, let xs), .array(_, let ys)), (.structure(let xs), .structure(let ys)):
        return a.signature == b.signature && xs.count == ys.count && zip(xs, ys).allSatisfy(same)
    case (.dictionary(_, _, let xs), .dictionary(_, _, let ys)):
        return a.signature == b.signature && xs.count == ys.count
            && zip(xs, ys).allSatisfy { same($0.key, $1.key) && same($0.value, $1.value) }
    case (.variant(let x), .variant(let y)): return same(x, y)
    default: return a == b
    }
}

private func finding(_ text: String) -> Never {
    let line = Array("FINDING: \(text)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// Encodes `values` into a signal, decodes it, and sends it through the wire format and back.
private func roundTrip(_ values: [DBusValue]) {
    let message: OutgoingMessage
    do {
        message = try OutgoingMessage.signal(
            path: "/fuzz", interface: "org.toastkit.Fuzz", member: "Value", destination: nil, body: values)
    } catch {
        return  // refused with an error: fine
    }
    defer { message.release() }
    let decoded = DBusMessage(decoding: message.raw).body
    guard decoded.count == values.count, zip(values, decoded).allSatisfy(same) else {
        finding("decoded \(decoded) from \(values)")
    }
    var buffer: UnsafeMutablePointer<CChar>?
    var length: Int32 = 0
    dbus_message_set_serial(message.raw, 1)  // a message on the wire always has one
    guard dbus_message_marshal(message.raw, &buffer, &length) != 0, let buffer else { return }
    defer { dbus_free(buffer) }
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    guard let again = dbus_message_demarshal(buffer, length, &error) else {
        finding("libdbus refused its own marshalled message: \(DBusError.take(&error)?.description ?? "?")")
    }
    defer { dbus_message_unref(again) }
    let wire = DBusMessage(decoding: again).body
    guard wire.count == values.count, zip(values, wire).allSatisfy(same) else {
        finding("wire round trip gave \(wire) from \(values)")
    }
}

/// The entry point libFuzzer calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = bytes.first else { return 0 }
    if mode & 1 == 0 {
        // Raw wire bytes.
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let body = Array(bytes.dropFirst())
        let message = body.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                dbus_message_demarshal($0.baseAddress, Int32(buffer.count), &error)
            }
        }
        guard let message else {
            dbus_error_free(&error)
            return 0
        }
        defer { dbus_message_unref(message) }
        roundTrip(DBusMessage(decoding: message).body)
    } else {
        var reader = ByteReader(bytes: Array(bytes.dropFirst()))
        var values: [DBusValue] = []
        while !reader.isAtEnd && values.count < 8 { values.append(makeValue(&reader, depth: 0)) }
        roundTrip(values)
    }
    return 0
}
