import Glibc
import ToastKitAgent

/// Reads MESSAGE from standard input (`-`) and keeps messages within the documented limit.
enum MessageInput {
    /// The largest message, in UTF-8 bytes: longer ones are cut between two characters with "…".
    static let limit = 65_536

    /// What was read, and a warning when it had to be cut.
    struct Result: Sendable, Equatable {
        var text: String
        var warning: String?
    }

    /// Reads standard input to its end (see ``StandardInputReader``). Trailing newlines are removed, as `$(…)` in a
    /// shell does.
    static func readStandardInput() throws(CommandFailure) -> Result {
        var reader = StandardInputReader(limit: limit)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .data("cannot read MESSAGE from standard input: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            try reader.consume(buffer[0..<count])
        }
        return try reader.finish()
    }

    /// Cuts a message given as an argument to ``limit`` bytes, with a warning.
    static func limited(_ text: String) -> Result {
        let count = text.utf8.count
        guard count > limit else { return Result(text: text, warning: nil) }
        let cut = cut(text, limit: limit)
        return Result(text: cut, warning: "warning: MESSAGE cut from \(count) to \(cut.utf8.count) bytes")
    }

    /// The longest run of whole characters (grapheme clusters) of `text` that fits in `limit` bytes with "…".
    static func cut(_ text: String, limit: Int) -> String {
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let width = text[index].utf8.count
            if used + width > limit - 3 { break }
            used += width
            end = text.index(after: index)
        }
        return String(text[..<end]) + "…"
    }
}

/// Standard input as a MESSAGE, read chunk by chunk with bounded memory: every byte is checked — no NUL byte,
/// valid UTF-8 to the very end, also beyond the cut — but only the first `limit` bytes (and a few more, to find a
/// character boundary) are kept. Longer input is cut between two characters (grapheme clusters, as for a MESSAGE
/// argument) and marked with "…".
struct StandardInputReader {
    /// The most bytes the message may have.
    let limit: Int
    private var kept: [UInt8] = []
    private var total = 0
    private var validator = UTF8Validator()

    /// A reader that keeps at most `limit` bytes (at least 4, room for "…").
    init(limit: Int) {
        self.limit = max(4, limit)
        kept.reserveCapacity(min(self.limit + 4, 65_536))
    }

    /// Checks and keeps the next chunk.
    ///
    /// - Throws: a data error (65) naming the offset of the first NUL byte or of the first byte that is not UTF-8.
    mutating func consume(_ chunk: some Collection<UInt8>) throws(CommandFailure) {
        if let nul = chunk.firstIndex(of: 0) {
            throw .data(
                "MESSAGE from standard input contains a NUL byte at offset \(total + chunk.distance(from: chunk.startIndex, to: nul))"
            )
        }
        if let problem = validator.consume(chunk) { throw Self.failure(problem) }
        let room = limit + 4 - kept.count
        if room > 0 { kept.append(contentsOf: chunk.prefix(room)) }
        total += chunk.count
    }

    /// The message: all of it, or cut with a warning.
    ///
    /// - Throws: a data error when the input ends inside a UTF-8 sequence.
    func finish() throws(CommandFailure) -> MessageInput.Result {
        var validator = self.validator
        if let problem = validator.finish() { throw Self.failure(problem) }
        guard total > limit else {
            var text = String(decoding: kept, as: UTF8.self)
            while text.hasSuffix("\n") || text.hasSuffix("\r\n") { text.removeLast() }
            return MessageInput.Result(text: text, warning: nil)
        }
        // The kept bytes may end inside a sequence: decode whole scalars only, then cut between characters.
        var end = kept.count
        while end > 0, kept[end - 1] & 0xC0 == 0x80 { end -= 1 }
        if end > 0, kept[end - 1] >= 0xC0 { end -= 1 }
        let cut = MessageInput.cut(String(decoding: kept[0..<end], as: UTF8.self), limit: limit)
        let warning = "warning: message from stdin cut from \(total) to \(cut.utf8.count) bytes"
        return MessageInput.Result(text: cut, warning: warning)
    }

    private static func failure(_ problem: UTF8Problem) -> CommandFailure {
        .data("MESSAGE from standard input is not valid UTF-8 (byte 0x\(problem.hexByte) at offset \(problem.offset))")
    }
}

/// Checks UTF-8 as it arrives in chunks (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
/// reporting the first problem as ``UTF8Problem/first(in:)`` does for the whole text: the first byte of the
/// sequence that is not valid, and its offset.
struct UTF8Validator: Sendable {
    private var offset = 0
    /// The sequence being read: its first byte and offset, how many continuation bytes are still due, and the
    /// range the next one must be in.
    private var lead: (byte: UInt8, offset: Int)?
    private var due = 0
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xBF

    /// Checks the next bytes; returns the first problem, if any (later calls are then meaningless).
    mutating func consume(_ bytes: some Collection<UInt8>) -> UTF8Problem? {
        for byte in bytes {
            defer { offset += 1 }
            if due > 0 {
                guard byte >= low && byte <= high else {
                    return UTF8Problem(byte: lead?.byte ?? byte, offset: lead?.offset ?? offset)
                }
                due -= 1
                (low, high) = (0x80, 0xBF)
                if due == 0 { self.lead = nil }
                continue
            }
            switch byte {
            case 0x00...0x7F: continue
            case 0xC2...0xDF: due = 1
            case 0xE0: (due, low) = (2, 0xA0)
            case 0xE1...0xEC, 0xEE...0xEF: due = 2
            case 0xED: (due, high) = (2, 0x9F)
            case 0xF0: (due, low) = (3, 0x90)
            case 0xF1...0xF3: due = 3
            case 0xF4: (due, high) = (3, 0x8F)
            default: return UTF8Problem(byte: byte, offset: offset)
            }
            lead = (byte, offset)
        }
        return nil
    }

    /// The problem of an input that ends inside a sequence, if it does.
    mutating func finish() -> UTF8Problem? {
        guard due > 0, let lead else { return nil }
        return UTF8Problem(byte: lead.byte, offset: lead.offset)
    }
}
