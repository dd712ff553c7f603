import ToastKit
import ToastKitAgent

/// The command lines of the tools toastkit stands in for — libnotify's `notify-send` (0.7 and 0.8) and dunst's
/// `dunstify` (1.9) — as they read them: their option tables, their action, urgency and escape syntax. Called by one
/// of those names (a link, or `toastkit notify-send …`), toastkit takes exactly that tool's command line; `toastkit
/// send` takes notify-send's plus its own options. What each dialect prints and how it exits is
/// ``DialectOutput``'s.
enum Dialects {
    /// The options `send` accepts in `dialect`.
    static func specs(for dialect: CommandDialect) -> [OptionSpec] {
        switch dialect {
        case .toastkit: Specs.send
        case .notifySend: notifySend
        case .dunstify: dunstify
        }
    }

    /// notify-send 0.8.1's options (`tools/notify-send.c`); 0.7 has a subset of them.
    static let notifySend: [OptionSpec] = [
        OptionSpec(short: "u", long: "urgency", takesValue: true),
        OptionSpec(short: "t", long: "expire-time", takesValue: true),
        OptionSpec(short: "a", long: "app-name", takesValue: true),
        OptionSpec(short: "i", long: "icon", takesValue: true),
        OptionSpec(short: "n", long: "app-icon", takesValue: true),
        OptionSpec(short: "c", long: "category", takesValue: true),
        OptionSpec(short: "e", long: "transient", takesValue: false),
        OptionSpec(short: "h", long: "hint", takesValue: true),
        OptionSpec(short: "p", long: "print-id", takesValue: false),
        OptionSpec(short: "r", long: "replace-id", takesValue: true),
        OptionSpec(short: "w", long: "wait", takesValue: false),
        OptionSpec(short: "A", long: "action", takesValue: true),
    ]

    /// dunstify 1.9's options (`dunstify.c`), each under the name of what it means in `send`.
    static let dunstify: [OptionSpec] = [
        OptionSpec(short: "a", long: "appname", takesValue: true, meaning: "app-name"),
        OptionSpec(short: "u", long: "urgency", takesValue: true),
        OptionSpec(short: "h", long: "hints", takesValue: true, meaning: "hint"),
        OptionSpec(short: "A", long: "action", takesValue: true),
        OptionSpec(short: "t", long: "timeout", takesValue: true, meaning: "expire-time"),
        OptionSpec(short: "i", long: "icon", takesValue: true),
        OptionSpec(short: "I", long: "raw_icon", takesValue: true, meaning: "raw-icon"),
        OptionSpec(short: "p", long: "printid", takesValue: false, meaning: "print-id"),
        OptionSpec(short: "r", long: "replace", takesValue: true, meaning: "replace-id"),
        OptionSpec(short: "b", long: "block", takesValue: false, meaning: "wait"),
    ]

    /// dunstify's options that are commands of their own, not a notification.
    static let dunstifyCommands: [OptionSpec] = [
        OptionSpec(short: "C", long: "close", takesValue: true),
        OptionSpec(short: "c", long: "capabilities", takesValue: false),
        OptionSpec(short: "s", long: "serverinfo", takesValue: false),
    ]

    /// One `-A`: notify-send's `[NAME=]LABEL` (a bare label's id is its position among the `-A`s, `0`, `1`, …;
    /// `default` is the click on the notification; key and label are trimmed, and an action with either empty is
    /// left out, as libnotify does), dunstify's `KEY,LABEL` (a malformed one is left out: nil); in
    /// `toastkit send`, `later` and `dismiss` alone are the built-ins, and an empty part is an error.
    static func action(_ value: String, flag: String, index: Int, dialect: CommandDialect) throws(CommandFailure)
        -> ActionOption?
    {
        switch dialect {
        case .dunstify:
            guard let comma = value.firstIndex(of: ","), !value[..<comma].isEmpty,
                value.index(after: comma) < value.endIndex
            else { return nil }
            return ActionOption(id: String(value[..<comma]), label: String(value[value.index(after: comma)...]))
        case .notifySend:
            let (first, label) = CommandLineParser.splitPair(value)
            guard let label else {
                let text = value.trimmingSpaces
                return text.isEmpty ? nil : ActionOption(id: String(index), label: text)
            }
            let (key, text) = (first.trimmingSpaces, label.trimmingSpaces)
            guard !key.isEmpty, !text.isEmpty else { return nil }
            return ActionOption(id: key, label: text)
        case .toastkit:
            guard !value.isEmpty else { throw .data("\(flag): the action is empty") }
            let (first, label) = CommandLineParser.splitPair(value)
            guard let label else {
                if value == "later" || value == "dismiss" { return ActionOption(id: value) }
                return ActionOption(id: String(index), label: value)
            }
            guard !first.isEmpty else { throw .data("\(flag) \(value): the action id is empty") }
            guard !label.isEmpty else { throw .data("\(flag) \(value): the label is empty") }
            return ActionOption(id: first, label: label)
        }
    }

    /// An `int` option's value as GOption reads it (``cInteger(_:)``, within 32 bits), or its error line.
    static func gInt(_ value: String, flag: String) throws(CommandFailure) -> Int32 {
        guard let number = cInteger(value).flatMap(Int32.init(exactly:)) else {
            throw .data("Cannot parse integer value \u{201C}\(value)\u{201D} for \(flag)")
        }
        return number
    }

    /// An integer as GOption reads one (C's `strtol` in base 0): optional spaces and sign, then `0x` hexadecimal,
    /// `0` octal or decimal digits, and nothing after them; nil otherwise.
    static func cInteger(_ value: String) -> Int64? {
        var text = Substring(value)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        var negative = false
        if let sign = text.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            text.removeFirst()
        }
        let radix: Int
        if text.lowercased().hasPrefix("0x"), text.count > 2 {
            radix = 16
            text = text.dropFirst(2)
        } else if text.hasPrefix("0"), text.count > 1 {
            radix = 8
            text = text.dropFirst()
        } else {
            radix = 10
        }
        // One sign only (`--5` is not a number), and no magnitude beyond Int64's: negating it must not trap.
        guard !text.isEmpty, text.first != "-", text.first != "+", let magnitude = Int64(text, radix: radix) else {
            return nil
        }
        return negative ? 0 &- magnitude : magnitude
    }

    /// `-u`: `low`, `normal`, `critical` in any case, or 0, 1, 2; dunstify reads only the first character (`l`,
    /// `n`, `c` in any case, or the digit), as `dunstify.c` does.
    static func urgency(_ value: String, dialect: CommandDialect) -> ToastUrgency? {
        let levels: [String: ToastUrgency] = ["0": .low, "1": .normal, "2": .critical]
        if dialect == .dunstify {
            let letters: [String: ToastUrgency] = ["l": .low, "n": .normal, "c": .critical]
            let first = String(value.prefix(1)).lowercased()
            return levels[first] ?? letters[first]
        }
        let words: [String: ToastUrgency] = ["low": .low, "normal": .normal, "critical": .critical]
        return words[value.lowercased()] ?? levels[value]
    }

    /// GLib's `g_strcompress`, as notify-send applies it to the body: `\b \f \n \r \t \v \\ \"`, octal `\NNN`,
    /// and a backslash before any other character stands for that character; a trailing backslash is dropped.
    static func compressEscapes(_ text: String) -> String {
        guard text.utf8.contains(0x5C) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let input = Array(text.utf8)
        var index = 0
        while index < input.count {
            let byte = input[index]
            index += 1
            guard byte == 0x5C else {
                bytes.append(byte)
                continue
            }
            guard index < input.count else { break }
            let next = input[index]
            index += 1
            switch next {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = Int(next - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, index < input.count, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(input[index]) {
                    value = value * 8 + Int(input[index] - UInt8(ascii: "0"))
                    index += 1
                    digits += 1
                }
                // A NUL ends a C string: the body ends there, as notify-send's does.
                if value & 0xFF == 0 { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(UInt8(truncatingIfNeeded: value))
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "v"): bytes.append(0x0B)
            default: bytes.append(next)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension CommandDialect {
    /// The dialect of the program called `program` (a path or a name): `toastkit`'s unless it is named
    /// `notify-send` or `dunstify`.
    init(program: String) {
        let name = program.split(separator: "/").last.map(String.init) ?? program
        self = CommandDialect(rawValue: name) ?? .toastkit
    }
}

/// What the tool toastkit stands in for prints and how it exits: notify-send and dunstify exit 0 however the
/// notification ended (the outcome is what they print) and 1 for every failure; a signal while waiting still ends
/// with 128 + its number, as a shell reports for them.
enum DialectOutput {
    /// The process's exit code for toastkit's `code` in `dialect`.
    static func exitCode(_ code: ExitCode, dialect: CommandDialect) -> Int32 {
        guard dialect != .toastkit else { return code.rawValue }
        switch code {
        case .success, .dismissed, .expired, .closed, .deferred, .suppressed: return 0
        // notify-send closes the notification on Ctrl-C and exits 0; dunstify dies of it.
        case .interrupted: return dialect == .notifySend ? 0 : code.rawValue
        case .terminated: return code.rawValue
        // Both ignore a closed standard output (GLib ignores SIGPIPE and nobody checks the write).
        case .ioError: return 0
        case .usage, .dataError, .unavailable, .software: return 1
        }
    }

    /// What dunstify prints when the notification it waited for closed without an action: the server's close
    /// reason (1 expired, 2 dismissed, 3 closed by a program or `dunstify -C`, 4 for any other reason).
    static func reportEnding(_ code: ExitCode, options: SendOptions) {
        guard options.dialect == .dunstify, options.waits else { return }
        switch code {
        case .expired: Output.line("1")
        case .dismissed: Output.line("2")
        case .closed: Output.line("3")
        default: break
        }
    }

    /// Runs one of dunstify's commands that show no notification (or a tool's `--help` and `--version`).
    static func run(_ command: ToolCommand, dialect: CommandDialect, environment: CommandEnvironment)
        throws(CommandFailure) -> ExitCode
    {
        switch command {
        case .help:
            Output.text(help(for: dialect))
        case .version:
            // Scripts read the second word for the version whose options they may use.
            let version = dialect == .dunstify ? "1.9.0" : "0.8.1"
            Output.line("\(dialect.programName) \(version) (toastkit \(ToolVersion.current))")
        case .close(let serverID):
            return try CloseCommand(target: .serverID(serverID), environment: environment).run()
        case .capabilities:
            // In the server's order; dunstify prints nothing (and exits 0) when there is no server.
            let names = (try? BusAccess.withSender { $0.capabilities.ordered }) ?? []
            for name in names where !name.isEmpty { Output.line(TerminalText.escape(name)) }
        case .serverInfo:
            let information = try? BusAccess.withSender { $0.capabilities.information }
            guard let information = information ?? nil else { throw .unavailable("Unable to get server information") }
            Output.line("name:\(TerminalText.escape(information.name))")
            Output.line("vendor:\(TerminalText.escape(information.vendor))")
            Output.line("version:\(TerminalText.escape(information.version))")
            Output.line("spec_version:\(TerminalText.escape(information.specificationVersion))")
        }
        return .success
    }

    /// The tool's `--help` (also `toastkit help notify-send`): its own options, and where toastkit's are.
    static func help(for dialect: CommandDialect) -> String {
        let options = Dialects.specs(for: dialect) + (dialect == .dunstify ? Dialects.dunstifyCommands : [])
        let lines = options.map { spec in
            let short = spec.short.map { "-\($0), " } ?? "    "
            return "  \(short)--\(spec.long)\(spec.takesValue ? " VALUE" : "")"
        }
        return """
            OVERVIEW: toastkit standing in for \(dialect.programName): the same command line, output and exit codes,
            with durations that hold on every server (through the toast agent) underneath. Called through a link
            named \(dialect.programName) (scripts/install.sh --links) or as `toastkit \(dialect.programName) …`.

            USAGE: \(dialect.programName) [OPTION…] SUMMARY [BODY]

            ARGUMENTS:
              SUMMARY   the title (sent as it is)
              BODY      the message; its backslash escapes (\\n, \\t, \\\\) are applied, markup is passed on

            OPTIONS:
            \(lines.joined(separator: "\n"))
              -?, --help
            \(dialect == .notifySend ? "  -v, --version" : "      --version")

            See toastkit send --help for toastkit's own options, and docs/drop-in.md for what differs.

            """
    }
}
