import ToastKit
import ToastKitAgent

/// Parses `-h TYPE:NAME:VALUE` as notify-send does: TYPE is `boolean`, `int`, `double`, `string`, `byte` or
/// `variant` (a small subset of GVariant text: `<int32 5>`, `<uint32 5>`, `<'text'>`, `<true>`, `<byte 0x05>`,
/// `<double 1.5>`, with or without the angle brackets).
enum HintParser {
    static let types = ["boolean", "int", "double", "string", "byte", "variant"]

    static func parse(_ text: String) throws(CommandFailure) -> Hint {
        let flag = "-h/--hint \(text)"
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else {
            throw .data("\(flag): expected TYPE:NAME:VALUE (TYPE is \(types.joined(separator: ", ")))")
        }
        let (type, name, value) = (parts[0], parts[1], parts[2])
        guard !name.isEmpty else { throw .data("\(flag): the hint NAME is empty") }
        // libnotify reads the type in any case (`STRING:`, `Int:`).
        switch type.lowercased() {
        case "boolean", "bool":
            return Hint(name: name, value: .bool(try boolean(value, flag: flag)))
        case "int", "int32":
            return Hint(name: name, value: .int32(try integer(value, flag: flag)))
        case "double":
            return Hint(name: name, value: .double(try double(value, flag: flag)))
        case "string":
            return Hint(name: name, value: .string(value))
        case "byte":
            return Hint(name: name, value: .byte(try byte(value, flag: flag)))
        case "variant":
            return Hint(name: name, value: try variant(value, flag: flag))
        default:
            throw .data("\(flag): unknown hint type \"\(type)\" (use \(types.joined(separator: ", ")))")
        }
    }

    /// `-h TYPE:NAME:VALUE` for `toastkit send`: ``parse(_:)``, except that an empty `string` sends no hint (nil), as
    /// notify-send sends none: `-h string:image-path:` with an empty variable never costs the toast, nor sends a
    /// hint that names no image.
    static func parseForSend(_ text: String) throws(CommandFailure) -> Hint? {
        let hint = try parse(text)
        if case .string("") = hint.value, text.prefix(7).lowercased() == "string:" { return nil }
        return hint
    }

    /// The warning for an `int` hint whose value ``parse(_:)`` read as notify-send does, from its leading digits
    /// (`int:value:50%`); nil for any other hint.
    static func readAsLibnotify(_ text: String) -> String? {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, ["int", "int32"].contains(parts[0].lowercased()), Int32(parts[2].trimmingSpaces) == nil,
            let number = Int32(parts[2].prefix { $0.isASCII && $0.isNumber })
        else { return nil }
        return "-h/--hint \(text): \"\(parts[2])\" is read as \(number), as notify-send reads it"
    }

    /// `-h TYPE:NAME:VALUE` exactly as notify-send 0.8 reads it (`tools/notify-send.c`): TYPE in any case; `int` and
    /// `double` must start with a digit and stop at the first character that is not one (`50abc` is 50), an `int`
    /// wraps at 32 bits; `byte` is any number up to 255 (`abc` is 0); `boolean` is true for `true` in any case or a
    /// number other than 0, false for anything else; an empty `string` sends no hint (nil); `variant` is GVariant
    /// text (the subset ``parse(_:)`` reads).
    static func parseAsLibnotify(_ text: String) throws(CommandFailure) -> Hint? {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { throw .data("Invalid hint syntax specified. Use TYPE:NAME:VALUE.") }
        let (type, name, value) = (parts[0], parts[1], parts[2])
        guard !name.isEmpty else { throw .data("-h/--hint \(text): the hint NAME is empty") }
        func invalid() -> CommandFailure {
            .data("Value \"\(value)\" of hint \"\(name)\" could not be parsed as type \"\(type)\".")
        }
        let digits = value.utf8.prefix { (0x30...0x39).contains($0) }
        switch type.lowercased() {
        case "string":
            return value.isEmpty ? nil : Hint(name: name, value: .string(value))
        case "int":
            guard !digits.isEmpty else { throw invalid() }
            return Hint(name: name, value: .int32(Int32(truncatingIfNeeded: wrappingDecimal(digits))))
        case "double":
            guard value.first?.isASCII == true, value.first?.isNumber == true else { throw invalid() }
            let number = value.prefix { $0.isNumber || $0 == "." || $0 == "e" || $0 == "E" || $0 == "-" || $0 == "+" }
            guard let parsed = Double(number) ?? Double(Substring(digits)) else { throw invalid() }
            return Hint(name: name, value: .double(parsed))
        case "byte":
            let number = digits.isEmpty ? 0 : wrappingDecimal(digits)
            guard number <= 255, !value.hasPrefix("-") else { throw invalid() }
            return Hint(name: name, value: .byte(UInt8(number)))
        case "boolean":
            let truth = value.lowercased() == "true" || (!digits.isEmpty && wrappingDecimal(digits) != 0)
            return Hint(name: name, value: .bool(truth))
        case "variant":
            return try parse("variant:\(name):\(value)")
        default:
            throw .data("Invalid hint type \"\(type)\". Valid types are int, double, string and byte.")
        }
    }

    /// `-h TYPE:NAME:VALUE` as dunstify 1.9 reads it (`dunstify.c`): TYPE `int` (C's `atoi`), `double`, `string`
    /// or `byte`, in lower case only. Anything else is an error, which dunstify only warns about.
    static func parseAsDunstify(_ text: String) throws(CommandFailure) -> Hint {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, !parts[2].isEmpty else {
            throw .data("Malformed hint. Expected \"type:name:value\", got \"\(text)\"")
        }
        let (type, name, value) = (parts[0], parts[1], parts[2])
        guard !name.isEmpty else { throw .data("Malformed hint: the name is empty in \"\(text)\"") }
        let trimmed = value.trimmingSpaces
        let signed = trimmed.hasPrefix("-") || trimmed.hasPrefix("+") ? 1 : 0
        let digits = trimmed.utf8.dropFirst(signed).prefix { (0x30...0x39).contains($0) }
        switch type {
        case "string": return Hint(name: name, value: .string(value))
        case "int":
            let magnitude = Int32(truncatingIfNeeded: wrappingDecimal(digits))
            return Hint(name: name, value: .int32(trimmed.hasPrefix("-") ? 0 &- magnitude : magnitude))
        case "double":
            return Hint(name: name, value: .double(Double(trimmed) ?? Double(Substring(digits)) ?? 0))
        case "byte":
            let number = digits.isEmpty ? 0 : wrappingDecimal(digits)
            guard number <= 255 else { throw .data("Not a byte: \"\(value)\"") }
            return Hint(name: name, value: .byte(UInt8(number)))
        default:
            throw .data("Malformed hint. Expected a type of int, double, string or byte, got \(type)")
        }
    }

    /// Decimal digits as `g_ascii_strtoull` reads them, wrapping at 64 bits.
    private static func wrappingDecimal(_ digits: Substring.UTF8View.SubSequence) -> UInt64 {
        digits.reduce(UInt64(0)) { $0 &* 10 &+ UInt64($1 - 0x30) }
    }

    private static func boolean(_ value: String, flag: String) throws(CommandFailure) -> Bool {
        switch value.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw .data("\(flag): \"\(value)\" is not a boolean (true or false)")
        }
    }

    private static func integer(_ value: String, flag: String) throws(CommandFailure) -> Int32 {
        let digits = value.prefix { $0.isASCII && $0.isNumber }
        if Int32(value.trimmingSpaces) == nil, !digits.isEmpty, let number = Int32(digits) {
            // notify-send reads the leading digits (`int:value:50%` is 50): so does toastkit (with a warning,
            // ``readAsLibnotify(_:)``).
            return number
        }
        guard let number = Int32(value.trimmingSpaces) else {
            if Int64(value.trimmingSpaces) != nil {
                throw .data("\(flag): \"\(value)\" does not fit in a 32-bit integer")
            }
            throw .data("\(flag): \"\(value)\" is not an integer")
        }
        return number
    }

    private static func unsigned(_ value: String, flag: String) throws(CommandFailure) -> UInt32 {
        guard let number = UInt32(value.trimmingSpaces) else {
            throw .data("\(flag): \"\(value)\" is not an unsigned 32-bit integer")
        }
        return number
    }

    private static func double(_ value: String, flag: String) throws(CommandFailure) -> Double {
        guard let number = Double(value.trimmingSpaces), number.isFinite else {
            throw .data("\(flag): \"\(value)\" is not a finite number")
        }
        return number
    }

    private static func byte(_ value: String, flag: String) throws(CommandFailure) -> UInt8 {
        let text = value.trimmingSpaces
        let parsed: UInt8? =
            text.lowercased().hasPrefix("0x") ? UInt8(text.dropFirst(2), radix: 16) : UInt8(text)
        guard let parsed else { throw .data("\(flag): \"\(value)\" is not a byte (0 to 255, or 0x00 to 0xff)") }
        return parsed
    }

    /// The GVariant text subset.
    private static func variant(_ value: String, flag: String) throws(CommandFailure) -> ToastHintValue {
        var text = value.trimmingSpaces
        if text.hasPrefix("<") && text.hasSuffix(">") && text.count >= 2 {
            text = String(text.dropFirst().dropLast()).trimmingSpaces
        }
        if text == "true" { return .bool(true) }
        if text == "false" { return .bool(false) }
        if text.count >= 2, let quote = text.first, quote == "'" || quote == "\"", text.last == quote {
            return .string(unescape(String(text.dropFirst().dropLast())))
        }
        let words = text.split(separator: " ", maxSplits: 1).map(String.init)
        if words.count == 2 {
            switch words[0] {
            case "int32": return .int32(try integer(words[1], flag: flag))
            case "uint32": return .uint32(try unsigned(words[1], flag: flag))
            case "byte": return .byte(try byte(words[1], flag: flag))
            case "double": return .double(try double(words[1], flag: flag))
            case "boolean": return .bool(try boolean(words[1], flag: flag))
            case "string": return .string(words[1])
            default: break
            }
        }
        if let number = Int32(text) { return .int32(number) }
        if text.contains("."), let number = Double(text), number.isFinite { return .double(number) }
        throw .data(
            "\(flag): unsupported variant \"\(value)\" (use <int32 N>, <uint32 N>, <byte 0xNN>, <double N>, "
                + "<true>, <false> or <'text'>)")
    }

    private static func unescape(_ text: String) -> String {
        var result = ""
        var escaped = false
        for character in text {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
