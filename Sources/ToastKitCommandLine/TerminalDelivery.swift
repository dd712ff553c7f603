import DBus
import Glibc
import ToastKit
import ToastKitAgent

/// Toasts through the terminal's own notification escape codes, for a shell with no session bus (over SSH): the
/// terminal on the person's desk shows them. `send --terminal` asks for it; `send` takes it by itself when no
/// session bus can be found but the process has a terminal (`/dev/tty`).
///
/// Which code (``TerminalCode/forTerminal(_:)``, documented in the man page): kitty's OSC 99 for kitty; OSC 9 for
/// iTerm2, Ghostty and Windows Terminal; OSC 777 (`notify`) for foot, WezTerm, VTE terminals (GNOME Terminal,
/// Tilix, …) and urxvt; for any other terminal, which may lack all three, a bell and one plain line. Inside tmux
/// the code is wrapped for tmux to pass on (it needs `set -g allow-passthrough on`).
///
/// The terminal answers nothing: there are no buttons, no `--wait` and no server id (`-p` prints 0). Text is made
/// safe first: control characters (the escape and bell that would end the code early, or start another) are
/// dropped, and a title loses the `;` that would split OSC 777's fields.
enum TerminalDelivery {
    /// Which escape code.
    enum TerminalCode: String, CaseIterable, Sendable {
        /// kitty's desktop notifications: `OSC 99 ; i=…:d=0:e=1:p=title ; base64 ST`, then the body.
        case osc99 = "99"
        /// urxvt's `notify` extension, taken up by VTE, foot and WezTerm: `OSC 777 ; notify ; TITLE ; BODY ST`.
        case osc777 = "777"
        /// iTerm2's: `OSC 9 ; TEXT ST` (one text: "TITLE: BODY").
        case osc9 = "9"
        /// No escape code: a bell and the toast as one line of text.
        case plain

        /// The code for the terminal `variable` describes (see ``TerminalDelivery``).
        static func forTerminal(_ variable: (String) -> String?) -> TerminalCode {
            let term = variable("TERM") ?? ""
            let program = variable("TERM_PROGRAM") ?? ""
            if term == "xterm-kitty" || variable("KITTY_WINDOW_ID") != nil { return .osc99 }
            if term == "xterm-ghostty" || program == "ghostty" || program == "iTerm.app"
                || variable("LC_TERMINAL") == "iTerm2" || variable("WT_SESSION") != nil
            {
                return .osc9
            }
            if term.hasPrefix("foot") || term == "wezterm" || program == "WezTerm" || variable("VTE_VERSION") != nil
                || term.hasPrefix("rxvt-unicode")
            {
                return .osc777
            }
            return .plain
        }
    }

    /// The most bytes of text a code carries (some terminals cut longer escape codes); longer text ends in "…".
    static let textLimit = 2048

    /// The bytes that show a toast of `title` and `body` with `code` (`tmux`: wrapped for tmux to pass on).
    static func encode(
        title: String, body: String?, critical: Bool, id: String, code: TerminalCode, tmux: Bool
    ) -> [UInt8] {
        let title = safe(title, oneLine: true)
        let body = body.map { safe($0, oneLine: code != .osc99) }.flatMap { $0.isEmpty ? nil : $0 }
        var sequences: [[UInt8]] = []
        switch code {
        case .osc99:
            // Identifiers are words of [a-zA-Z0-9-_+.]: the toast's id, kept to those.
            let identifier = String(
                id.unicodeScalars.filter {
                    $0.isASCII
                        && ($0.properties.isAlphabetic || $0.properties.numericType != nil
                            || "-_+.".unicodeScalars.contains($0))
                }.prefix(64))
            let urgency = critical ? ":u=2" : ""
            let more = body == nil ? "1" : "0"
            sequences.append(osc("99;i=\(identifier):d=\(more):e=1:p=title\(urgency);\(base64(title))"))
            if let body { sequences.append(osc("99;i=\(identifier):d=1:e=1:p=body;\(base64(body))")) }
        case .osc777:
            let field = title.replacingSemicolons
            sequences.append(osc("777;notify;\(field);\(body ?? "")"))
        case .osc9:
            var text = body.map { "\(title): \($0)" } ?? title
            // "9;4;…" is a progress report to ConEmu and Windows Terminal, not a notification.
            if let first = text.first, first.isNumber { text = " " + text }
            sequences.append(osc("9;\(text)"))
        case .plain:
            return Array("\u{07}\(body.map { "\(title): \($0)" } ?? title)\r\n".utf8)
        }
        guard tmux else { return sequences.flatMap { $0 } }
        // tmux's passthrough: DCS tmux; the code with every ESC doubled; ST.
        return sequences.flatMap { sequence in
            Array("\u{1B}Ptmux;".utf8) + sequence.flatMap { $0 == 0x1B ? [0x1B, 0x1B] : [$0] } + Array("\u{1B}\\".utf8)
        }
    }

    /// Writes `bytes` to the process's terminal (`/dev/tty`), or says why it cannot.
    static func write(_ bytes: [UInt8]) throws(CommandFailure) {
        let descriptor = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .unavailable("cannot write to the terminal: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.write(descriptor, $0.baseAddress! + written, bytes.count - written)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw .unavailable("cannot write to the terminal: \(String(cString: strerror(errno)))")
            }
            written += count
        }
    }

    /// Whether this process has a terminal to write to.
    static var hasTerminal: Bool {
        let descriptor = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }

    private static func osc(_ text: String) -> [UInt8] {
        Array("\u{1B}]\(text)\u{1B}\\".utf8)
    }

    /// `text` without control characters (C0, DEL, C1), its line breaks as spaces when `oneLine`, cut to
    /// ``textLimit`` bytes.
    private static func safe(_ text: String, oneLine: Bool) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A where !oneLine: result.unicodeScalars.append(scalar)
            case 0x09, 0x0A, 0x0D: result.unicodeScalars.append(" ")
            case 0x00...0x1F, 0x7F...0x9F: continue
            default: result.unicodeScalars.append(scalar)
            }
        }
        guard result.utf8.count > textLimit else { return result }
        var cut = ""
        for character in result {
            guard cut.utf8.count + character.utf8.count <= textLimit - 3 else { break }
            cut.append(character)
        }
        return cut + "…"
    }

    private static func base64(_ text: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                output.append(
                    position <= chunk.count
                        ? alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}

extension String {
    fileprivate var replacingSemicolons: String {
        String(map { $0 == ";" ? "," : $0 })
    }
}

extension TerminalDelivery {
    /// Whether `send` goes to the terminal: asked for with `--terminal`, or — the rule for a shell without a desktop
    /// (SSH) — a toast that waits for nothing, with the backend chosen automatically, no session bus to be found,
    /// and a terminal to write to.
    static func applies(to options: SendOptions, environment: CommandEnvironment) -> Bool {
        if options.terminal != nil { return true }
        guard !options.waits, environment.backend == .automatic else { return false }
        guard (try? BusAddress.session.resolveExplained(environment: environment.variable)) == nil else { return false }
        return hasTerminal
    }
}

extension SendCommand {
    /// `send` through the terminal (``TerminalDelivery``): the escape code the terminal calls for (or the one
    /// `--terminal-code` names), written to `/dev/tty`. `-p` prints 0 (there is no server id); `--json` prints
    /// `{"event":"presented","id":…,"terminal":CODE}`.
    func runInTerminal() throws(CommandFailure) -> ExitCode {
        let message = try makeMessage()
        let code =
            options.terminal.flatMap { TerminalDelivery.TerminalCode(rawValue: $0) }
            ?? TerminalDelivery.TerminalCode.forTerminal(environment.variable)
        var body = message.message.map { options.plainText ? $0 : BodyMarkup.strip($0) }
        if let progress = message.progress { body = body.map { "\($0) \(progress.textBar)" } ?? progress.textBar }
        let critical = options.urgency == .critical || (options.urgency == nil && message.status == .error)
        let bytes = TerminalDelivery.encode(
            title: message.title, body: body, critical: critical, id: options.id ?? message.id, code: code,
            tmux: environment.variable("TMUX") != nil)
        try TerminalDelivery.write(bytes)
        if options.json {
            Output.json(["event": .string("presented"), "id": .string(message.id), "terminal": .string(code.rawValue)])
        } else if options.printID {
            Output.line("0")
        }
        return .success
    }
}
