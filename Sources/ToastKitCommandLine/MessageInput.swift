import Glibc

/// Reads MESSAGE from standard input (`-`) and keeps messages within the documented limit.
enum MessageInput {
    /// The largest message, in UTF-8 bytes: longer ones are cut at a character boundary with "…".
    static let limit = 65_536

    /// What was read, and a warning when it had to be cut.
    struct Result: Sendable, Equatable {
        var text: String
        var warning: String?
    }

    /// Reads standard input to its end, keeping at most ``limit`` bytes in memory (the rest is counted and
    /// checked for NUL bytes, then dropped). Trailing newlines are removed, as `$(…)` in a shell does.
    static func readStandardInput() throws(CommandFailure) -> Result {
        var kept: [UInt8] = []
        kept.reserveCapacity(4096)
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .data("cannot read MESSAGE from standard input: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            if let nul = buffer[0..<count].firstIndex(of: 0) {
                throw .data("MESSAGE from standard input contains a NUL byte at offset \(total + nul)")
            }
            let room = limit + 4 - kept.count
            if room > 0 { kept.append(contentsOf: buffer[0..<min(count, room)]) }
            total += count
        }
        return try decode(kept, total: total)
    }

    /// Checks and cuts bytes read from standard input (`total` is how many there were in all).
    static func decode(_ bytes: [UInt8], total: Int) throws(CommandFailure) -> Result {
        var bytes = bytes
        if total > limit {
            // Keep whole characters only: drop continuation bytes at the cut, then the lead byte they belong to.
            var end = limit - 3
            while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            bytes = Array(bytes[0..<end])
        }
        if let problem = UTF8Problem.first(in: bytes) {
            throw .data(
                "MESSAGE from standard input is not valid UTF-8 (byte 0x\(problem.hexByte) at offset "
                    + "\(problem.offset))")
        }
        var text = String(decoding: bytes, as: UTF8.self)
        guard total > limit else {
            while text.hasSuffix("\n") || text.hasSuffix("\r\n") { text.removeLast() }
            return Result(text: text, warning: nil)
        }
        text += "…"
        let warning = "warning: message from stdin cut from \(total) to \(text.utf8.count) bytes"
        return Result(text: text, warning: warning)
    }

    /// Cuts a message given as an argument to ``limit`` bytes, with a warning.
    static func limited(_ text: String) -> Result {
        let count = text.utf8.count
        guard count > limit else { return Result(text: text, warning: nil) }
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let width = text[index].utf8.count
            if used + width > limit - 3 { break }
            used += width
            end = text.index(after: index)
        }
        let cut = String(text[..<end]) + "…"
        return Result(text: cut, warning: "warning: MESSAGE cut from \(count) to \(cut.utf8.count) bytes")
    }
}
