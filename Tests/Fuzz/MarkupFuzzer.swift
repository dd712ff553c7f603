import Foundation  // the static libraries need it linked
import FreedesktopNotifications
import Glibc

// libFuzzer target for the body-markup subset (built by scripts/fuzz.sh against the package's modules).
//
// The input, as UTF-8 (invalid bytes repaired), goes through BodyMarkup. What must hold:
//   - sanitize's output is valid markup of the subset, read code point by code point as a markup parser does:
//     only <b> <i> <u> <a href> <img src alt/>, balanced, each attribute at most once and quoted, no raw `<` `>`,
//     every `&` starting &amp; &lt; &gt; or &quot;;
//   - sanitize is idempotent;
//   - escaped text survives: strip(escape(x)) == x, sanitize(escape(x)) == escape(x);
//   - nothing traps, and (with -timeout) every input costs time in proportion to its length.

private func finding(_ what: String, _ input: String, _ output: String) -> Never {
    let line = Array(
        "FINDING: \(what)\n  input:  \(input.debugDescription)\n  output: \(output.debugDescription)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

private let allowedAttributes: [String: Set<String>] = [
    "b": [], "i": [], "u": [], "a": ["href"], "img": ["src", "alt"],
]

/// Why `markup` is not valid markup of the subset, or nil.
private func problem(in markup: String) -> String? {
    let bytes = Array(markup.utf8)
    var index = 0
    var open: [String] = []
    func entityAt(_ position: Int) -> Bool {
        ["amp;", "lt;", "gt;", "quot;"].contains { bytes[(position + 1)...].starts(with: $0.utf8) }
    }
    func name(from position: Int) -> (String, Int) {
        var end = position
        while end < bytes.count, (0x61...0x7A).contains(bytes[end]) { end += 1 }
        return (String(decoding: bytes[position..<end], as: UTF8.self), end)
    }
    while index < bytes.count {
        switch bytes[index] {
        case 0x26:
            guard entityAt(index) else { return "a raw & at byte \(index)" }
            index += 1
        case 0x3E:
            return "a raw > at byte \(index)"
        case 0x3C:
            var position = index + 1
            let closing = position < bytes.count && bytes[position] == 0x2F
            if closing { position += 1 }
            let (tag, afterName) = name(from: position)
            guard let allowed = allowedAttributes[tag] else { return "an unknown tag at byte \(index)" }
            position = afterName
            if closing {
                guard position < bytes.count, bytes[position] == 0x3E else { return "a malformed </\(tag) at \(index)" }
                guard open.last == tag else { return "</\(tag)> closes \(open.last ?? "nothing") at \(index)" }
                open.removeLast()
                index = position + 1
                continue
            }
            var seen: Set<String> = []
            while position < bytes.count, bytes[position] == 0x20 {
                let (attribute, afterAttribute) = name(from: position + 1)
                guard allowed.contains(attribute), seen.insert(attribute).inserted else {
                    return "attribute \(attribute.debugDescription) of <\(tag)> at \(position)"
                }
                guard bytes[afterAttribute...].starts(with: "=\"".utf8) else {
                    return "an unquoted attribute at \(position)"
                }
                var valueEnd = afterAttribute + 2
                while valueEnd < bytes.count, bytes[valueEnd] != 0x22 {
                    switch bytes[valueEnd] {
                    case 0x3C, 0x3E: return "a raw < or > in an attribute at \(valueEnd)"
                    case 0x26 where !entityAt(valueEnd): return "a raw & in an attribute at \(valueEnd)"
                    default: valueEnd += 1
                    }
                }
                guard valueEnd < bytes.count else { return "an unterminated attribute at \(position)" }
                position = valueEnd + 1
            }
            if tag == "img" {
                guard bytes[position...].starts(with: "/>".utf8) else { return "<img> not closed by /> at \(index)" }
                index = position + 2
            } else {
                guard position < bytes.count, bytes[position] == 0x3E else { return "a malformed <\(tag) at \(index)" }
                open.append(tag)
                index = position + 1
            }
        default:
            index += 1
        }
    }
    return open.isEmpty ? nil : "unclosed \(open)"
}

/// The entry point libFuzzer calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let sanitized = BodyMarkup.sanitize(text)
    if let problem = problem(in: sanitized) {
        finding("sanitize's output is not valid markup: \(problem)", text, sanitized)
    }
    let twice = BodyMarkup.sanitize(sanitized)
    if twice != sanitized {
        finding("sanitize is not idempotent (second pass: \(twice.debugDescription))", text, sanitized)
    }
    let escaped = BodyMarkup.escape(text)
    if let problem = problem(in: escaped) { finding("escape's output is not valid markup: \(problem)", text, escaped) }
    let stripped = BodyMarkup.strip(escaped)
    if stripped != text { finding("strip(escape(x)) is not x", text, stripped) }
    let sanitizedEscaped = BodyMarkup.sanitize(escaped)
    if sanitizedEscaped != escaped { finding("sanitize(escape(x)) is not escape(x)", text, sanitizedEscaped) }
    _ = BodyMarkup.strip(text)
    return 0
}
