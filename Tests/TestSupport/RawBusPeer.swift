// A bus peer written by hand over the bus's Unix socket, for the tests of hostile peers (issue 39): it writes a
// method call's bytes itself, in pieces, with pauses, and as large as the bus takes — beyond what the DBus layer
// lets a program send (it refuses 32 MiB and more) — and reads the answer to it.
import Foundation
import Glibc

/// A peer on a bus that speaks the wire protocol itself (little-endian): authenticates with `EXTERNAL`, says `Hello`,
/// writes method calls whose one long run of filler bytes is made as it is written (a 128 MiB call costs no 128 MiB
/// here), and reads replies. Blocking: use it off the shared pool (``onOwnThread(_:)``).
public final class RawBusPeer: @unchecked Sendable {
    // `@unchecked Sendable`: one thread at a time uses it (each test hands it from one `onOwnThread` to the next).
    private let descriptor: Int32
    private var nextSerial: UInt32 = 1
    private var unread: [UInt8] = []
    /// Replies read while another was awaited.
    private var replies: [RawReply] = []

    /// Connects to the bus at `address` (`unix:path=…`), authenticates and sends `Hello` (its reply is read with the
    /// first awaited reply).
    public init(address: String) throws {
        guard let path = address.split(separator: ",").first?.split(separator: "=", maxSplits: 1).last,
            address.hasPrefix("unix:path=")
        else { throw TestEnvironmentError("RawBusPeer: not a unix:path= address: \(address)") }
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestEnvironmentError("socket: \(String(cString: strerror(errno)))") }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw TestEnvironmentError("cannot connect to \(path): \(reason)")
        }
        let uid = String(getuid()).utf8.map { String(format: "%02x", $0) }.joined()
        try writeAll([0] + Array("AUTH EXTERNAL \(uid)\r\n".utf8))
        let answer = try readLine(within: .seconds(10))
        guard answer.hasPrefix("OK ") else { throw TestEnvironmentError("the bus refused EXTERNAL: \(answer)") }
        try writeAll(Array("BEGIN\r\n".utf8))
        let hello = RawCall(
            serial: takeSerial(), destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "Hello", body: .empty)
        try write(hello, bytes: hello.totalBytes)
    }

    deinit { close(descriptor) }

    private func takeSerial() -> UInt32 {
        defer { nextSerial += 1 }
        return nextSerial
    }

    /// A method call to write (nothing is written yet): see ``write(_:bytes:piece:pause:)``.
    public func call(
        destination: String, path: String, interface: String, member: String, body: RawCall.Body
    ) -> RawCall {
        RawCall(
            serial: takeSerial(), destination: destination, path: path, interface: interface, member: member,
            body: body)
    }

    /// Writes the next `bytes` of `call` (or what is left of it) in pieces of at most `piece`, sleeping `pause`
    /// after each piece but the last: a slow peer.
    public func write(_ call: RawCall, bytes: Int, piece: Int = 1 << 20, pause: Duration? = nil) throws {
        let end = min(call.totalBytes, call.written + bytes)
        while call.written < end {
            let stop = min(end, call.written + piece)
            while call.written < stop { try writeAll(call.take(upTo: stop)) }
            if let pause, call.written < end { Thread.sleep(forTimeInterval: pause.timeInterval) }
        }
    }

    /// Writes all of `call` and returns its reply (``awaitReply(to:within:)``).
    public func send(_ call: RawCall, within limit: Duration) throws -> RawReply {
        try write(call, bytes: call.totalBytes)
        return try awaitReply(to: call, within: limit)
    }

    /// The reply to `call` (other replies are kept for their own wait, signals dropped); throws when none came
    /// within `limit` or the bus closed the connection.
    public func awaitReply(to call: RawCall, within limit: Duration) throws -> RawReply {
        let end = ContinuousClock.now + limit
        while true {
            while let message = try takeMessage() {
                if message.replySerial != nil { replies.append(message) }
            }
            if let index = replies.firstIndex(where: { $0.replySerial == call.serial }) {
                return replies.remove(at: index)
            }
            try readSome(until: end, what: "the reply to \(call.member)")
        }
    }

    // MARK: - The socket

    private func writeAll(_ bytes: ArraySlice<UInt8>) throws {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            // MSG_NOSIGNAL: a bus that dropped this peer (a message over its limit) is an error here, not SIGPIPE.
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw TestEnvironmentError("RawBusPeer: write failed: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    private func writeAll(_ bytes: [UInt8]) throws { try writeAll(bytes[...]) }

    private func readSome(until end: ContinuousClock.Instant, what: String) throws {
        let left = end - ContinuousClock.now
        guard left > .zero else { throw TestEnvironmentError("no \(what) within the limit") }
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: Int64(left.timeInterval * 1000) + 1)
        let ready = poll(&poller, 1, milliseconds)
        if ready < 0 && errno == EINTR { return }
        guard ready > 0 else { throw TestEnvironmentError("no \(what) within the limit") }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { throw TestEnvironmentError("the bus closed the connection before \(what)") }
        unread += buffer[..<count]
    }

    private func readLine(within limit: Duration) throws -> String {
        let end = ContinuousClock.now + limit
        while true {
            if let newline = unread.firstIndex(of: 0x0A) {
                defer { unread.removeSubrange(...newline) }
                return String(decoding: unread[...newline], as: UTF8.self)
            }
            try readSome(until: end, what: "the bus's answer to AUTH")
        }
    }

    /// The next whole message of ``unread``, taken out of it; nil while it is not all read yet.
    private func takeMessage() throws -> RawReply? {
        guard unread.count >= 16 else { return nil }
        guard unread[0] == UInt8(ascii: "l") else { throw TestEnvironmentError("RawBusPeer: a big-endian message") }
        let bodyLength = Int(WireBytes.uint32(unread, at: 4))
        let fieldsLength = Int(WireBytes.uint32(unread, at: 12))
        let bodyStart = WireBytes.aligned(16 + fieldsLength, 8)
        guard unread.count >= bodyStart + bodyLength else { return nil }
        var reply = RawReply(type: unread[1])
        var offset = 16
        while offset < 16 + fieldsLength {
            offset = WireBytes.aligned(offset, 8)
            let code = unread[offset]
            let signatureLength = Int(unread[offset + 1])
            let signature = unread[(offset + 2)..<(offset + 2 + signatureLength)]
            offset += 3 + signatureLength
            switch Array(signature) {
            case [UInt8(ascii: "u")]:
                offset = WireBytes.aligned(offset, 4)
                if code == 5 { reply.replySerial = WireBytes.uint32(unread, at: offset) }
                offset += 4
            case [UInt8(ascii: "g")]:
                offset += Int(unread[offset]) + 2
            default:  // s, o
                offset = WireBytes.aligned(offset, 4)
                let length = Int(WireBytes.uint32(unread, at: offset))
                let text = String(decoding: unread[(offset + 4)..<(offset + 4 + length)], as: UTF8.self)
                if code == 4 { reply.errorName = text }
                offset += 4 + length + 1
            }
        }
        // The first argument, when the body starts with a string (an error's text).
        if bodyLength >= 5 {
            let length = Int(WireBytes.uint32(unread, at: bodyStart))
            if bodyStart + 4 + length <= unread.count {
                reply.text = String(decoding: unread[(bodyStart + 4)..<(bodyStart + 4 + length)], as: UTF8.self)
            }
        }
        unread.removeSubrange(..<(bodyStart + bodyLength))
        return reply
    }
}

/// A reply a ``RawBusPeer`` read: its type, the error's name and the first string argument, if any.
public struct RawReply: Sendable {
    /// 2 for a method return, 3 for an error.
    public var type: UInt8
    /// The serial of the call it answers.
    public var replySerial: UInt32?
    /// The error's name, for an error.
    public var errorName: String?
    /// The first argument when it is a string (an error's message), else nil.
    public var text: String?

    init(type: UInt8) { self.type = type }
}

/// A method call of a ``RawBusPeer``: its header and body as bytes, the body's long run of filler made on the fly.
public final class RawCall: @unchecked Sendable {
    // `@unchecked Sendable`: written by one thread at a time, as its peer.
    /// What the body holds.
    public enum Body: Sendable {
        /// No arguments.
        case empty
        /// One string argument (`s`) of `count` bytes of `a`.
        case string(count: Int)
        /// An `a{sv}` of one entry, `key`, whose value is a string of `count` bytes of `a` (the shape of `Present`).
        case dictionary(key: String, stringOf: Int)
    }

    /// The call's serial.
    public let serial: UInt32
    /// The method called.
    public let member: String
    /// Bytes of the whole message.
    public var totalBytes: Int { head.count + fillerCount + tail.count }
    /// Bytes written so far.
    public private(set) var written = 0
    /// The header and the body before the filler.
    private let head: [UInt8]
    private let fillerCount: Int
    private let tail: [UInt8]

    init(serial: UInt32, destination: String, path: String, interface: String, member: String, body: Body) {
        self.serial = serial
        self.member = member
        var prefix = WireBytes()
        let signature: String
        switch body {
        case .empty:
            signature = ""
            fillerCount = 0
        case .string(let count):
            signature = "s"
            prefix.uint32(UInt32(count))
            fillerCount = count
        case .dictionary(let key, let count):
            signature = "a{sv}"
            prefix.uint32(0)  // the array's length, set below
            prefix.align(8)
            prefix.string(key)
            prefix.signature("s")
            prefix.align(4)
            prefix.uint32(UInt32(count))
            fillerCount = count
            prefix.setUInt32(UInt32(prefix.bytes.count + count + 1 - 8), at: 0)
        }
        let bodyLength = prefix.bytes.count + fillerCount + (fillerCount > 0 ? 1 : 0)
        var header = WireBytes()
        header.bytes = [UInt8(ascii: "l"), 1, 0, 1]
        header.uint32(UInt32(bodyLength))
        header.uint32(serial)
        header.uint32(0)  // the fields' length, set below
        let fieldsStart = WireBytes.aligned(header.bytes.count, 8)
        header.field(1, "o", path)
        header.field(6, "s", destination)
        header.field(2, "s", interface)
        header.field(3, "s", member)
        if !signature.isEmpty {
            header.align(8)
            header.bytes += [8, 1, UInt8(ascii: "g"), 0]
            header.signature(signature)
        }
        header.setUInt32(UInt32(header.bytes.count - fieldsStart), at: 12)
        header.align(8)
        head = header.bytes + prefix.bytes
        tail = fillerCount > 0 ? [0] : []
    }

    /// The next bytes to write, from ``written`` up to `end` at most (one part: the header, filler or the end), counted
    /// as written.
    func take(upTo end: Int) -> ArraySlice<UInt8> {
        let start = written
        if start < head.count {
            written = min(end, head.count)
            return head[start..<written]
        }
        if start < head.count + fillerCount {
            written = min(end, head.count + fillerCount, start + Self.fillerBytes.count)
            return Self.fillerBytes[..<(written - start)]
        }
        written = min(end, totalBytes)
        return tail[(start - head.count - fillerCount)..<(written - head.count - fillerCount)]
    }

    /// The filler, a MiB at a time.
    private static let fillerBytes = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
}

/// Little-endian marshalling, as much as ``RawCall`` needs.
struct WireBytes {
    var bytes: [UInt8] = []

    /// Pads with zeros to a multiple of `boundary` (offsets count from the message's start).
    mutating func align(_ boundary: Int) {
        while bytes.count % boundary != 0 { bytes.append(0) }
    }

    /// A `u`, aligned to 4.
    mutating func uint32(_ value: UInt32) {
        align(4)
        bytes += withUnsafeBytes(of: value.littleEndian, Array.init)
    }

    /// Overwrites the `u` at `offset` (a length known only once what it measures is written).
    mutating func setUInt32(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { for index in 0..<4 { bytes[offset + index] = $0[index] } }
    }

    /// An `s` (or an `o`): its length, its bytes, a NUL.
    mutating func string(_ text: String) {
        uint32(UInt32(text.utf8.count))
        bytes += text.utf8
        bytes.append(0)
    }

    /// A `g`: its length in one byte, its bytes, a NUL.
    mutating func signature(_ text: String) {
        bytes.append(UInt8(text.utf8.count))
        bytes += text.utf8
        bytes.append(0)
    }

    /// A header field: its code, and a variant of a string or object path.
    mutating func field(_ code: UInt8, _ type: Character, _ value: String) {
        align(8)
        bytes += [code, 1, UInt8(ascii: type.unicodeScalars.first!), 0]
        string(value)
    }

    /// `offset` rounded up to a multiple of `boundary`.
    static func aligned(_ offset: Int, _ boundary: Int) -> Int { (offset + boundary - 1) / boundary * boundary }

    /// The little-endian `u` at `offset` of `bytes`.
    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    fileprivate var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
