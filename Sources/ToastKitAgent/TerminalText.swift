import Glibc

/// Text for a terminal: what a terminal or a reader could take for something else — C0 controls (newline, ESC, …),
/// DEL, the C1 controls (U+0080–U+009F; U+009B is a CSI on many terminals), the bidirectional marks, embeddings,
/// overrides and isolates, and the Unicode line and paragraph separators — is written as a Swift-style escape
/// (`\n`, `\t`, `\u{1B}`). Every human-readable line the tool prints goes through it, so text from a server, a
/// stored toast or the command line can neither forge lines nor drive the terminal.
package enum TerminalText {
    /// Whether `scalar` is escaped.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` with every unsafe scalar escaped (the rest unchanged).
    package static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                switch scalar {
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\0": out += "\\0"
                default:
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u{" + (hex.count == 1 ? "0" : "") + hex + "}"
                }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// One `toastkit: <message>` line on standard error, written at once with `write(2)` (control characters escaped):
/// the commands' errors and warnings, and the agent's log (its standard error is `agent.log` when `send` started it).
package enum ErrorLine {
    /// Writes `toastkit: <message>` and a newline to standard error.
    package static func write(_ message: String) {
        _ = writeAll(2, "toastkit: \(TerminalText.escape(message))\n")
    }

    /// Writes all of `text` to `descriptor` (retrying after EINTR); the `errno` of a failure, or nil.
    package static func writeAll(_ descriptor: Int32, _ text: String) -> Int32? {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return written < 0 ? errno : EIO }
            offset += written
        }
        return nil
    }
}
