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
        switch type {
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

    private static func boolean(_ value: String, flag: String) throws(CommandFailure) -> Bool {
        switch value.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw .data("\(flag): \"\(value)\" is not a boolean (true or false)")
        }
    }

    private static func integer(_ value: String, flag: String) throws(CommandFailure) -> Int32 {
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
