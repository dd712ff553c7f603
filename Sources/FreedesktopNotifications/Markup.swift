/// The body-markup subset of the specification, and what to do with text for servers with and without it.
///
/// The specification allows `<b> <i> <u> <a href> <img src alt>` in bodies when the server has `body-markup`;
/// everything else in a body is then parsed as markup too, so plain text must have `& < >` escaped. Summaries are
/// plain text on every server (dunst escapes them itself), so they are never touched.
public enum BodyMarkup {
    /// Escapes `&`, `<` and `>` so a markup server shows the text as it is. Works on code points, as a markup
    /// parser reads them: an `&` or `<` followed by a combining mark is escaped too.
    public static func escape(_ text: String) -> String {
        escapeBytes(text, quotes: false)
    }

    /// Replaces `&`, `<`, `>` (and `"` when `quotes` is set) by their entities, byte by byte: each is one byte in
    /// UTF-8 and never part of another character's encoding.
    private static func escapeBytes(_ text: String, quotes: Bool) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || (quotes && $0 == 0x22) }) else {
            return text
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            switch byte {
            case 0x26: out.append(contentsOf: "&amp;".utf8)
            case 0x3C: out.append(contentsOf: "&lt;".utf8)
            case 0x3E: out.append(contentsOf: "&gt;".utf8)
            case 0x22 where quotes: out.append(contentsOf: "&quot;".utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Text as a markup parser reads it, changed only where it is not valid: `<` becomes `&lt;` and an `&` that
    /// starts no entity (`&lt; &gt; &amp; &quot; &apos; &#N; &#xN;`) becomes `&amp;`; valid entities and `>` stay as
    /// written, as notify-send passes them.
    static func validText(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(where: { $0 == 0x26 || $0 == 0x3C }) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x3C {
                out.append(contentsOf: "&lt;".utf8)
            } else if byte == 0x26, !startsEntity(bytes, at: index) {
                out.append(contentsOf: "&amp;".utf8)
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether the `&` at `index` starts a named or numeric entity.
    private static func startsEntity(_ bytes: [UInt8], at index: Int) -> Bool {
        let rest = bytes[(index + 1)...]
        if entities.contains(where: { rest.starts(with: $0.name) }) { return true }
        guard rest.first == UInt8(ascii: "#") else { return false }
        var digits = rest.dropFirst()
        let hex = digits.first == UInt8(ascii: "x") || digits.first == UInt8(ascii: "X")
        if hex { digits = digits.dropFirst() }
        let run = digits.prefix {
            (0x30...0x39).contains($0) || (hex && ((0x41...0x46).contains($0) || (0x61...0x66).contains($0)))
        }
        guard !run.isEmpty, run.count <= 8, digits.dropFirst(run.count).first == UInt8(ascii: ";"),
            let value = UInt32(String(decoding: run, as: UTF8.self), radix: hex ? 16 : 10)
        else { return false }
        // Only what an XML (GMarkup) parser accepts as a character: anything else fails the whole body.
        switch value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x1_0000...0x10_FFFF: return true
        default: return false
        }
    }

    /// The specification's tags, and Pango's inline tags, which every server that draws markup with Pango (dunst,
    /// GNOME Shell, mako, swaync, the GTK servers) draws and the Qt ones show as text: notify-send passes them on.
    private static let allowedTags: Set<String> = [
        "b", "i", "u", "a", "img", "span", "s", "tt", "big", "small", "sub", "sup",
    ]
    private static let allowedAttributes: [String: Set<String>] = [
        "a": ["href"], "img": ["src", "alt"],
        "span": [
            "font", "font_desc", "font_family", "face", "size", "style", "weight", "variant", "stretch",
            "foreground", "fgcolor", "color", "background", "bgcolor", "underline", "underline_color",
            "strikethrough", "strikethrough_color", "rise", "letter_spacing", "alpha", "fgalpha", "bgalpha",
            "font_features", "allow_breaks", "insert_hyphens", "show", "baseline_shift", "font_scale",
        ],
    ]

    /// Keeps the allowed tags (with only their allowed attributes, as written when they are valid) and escapes
    /// what is not valid markup (`validText(_:)`), for a server with `body-markup`. Unknown tags become visible
    /// text, never markup; a closing tag with nothing open is dropped, and
    /// tags left open are closed at the end. Takes time in proportion to the length of `text`, whatever it holds.
    ///
    /// - Parameters:
    ///   - text: The body as the app wrote it.
    ///   - allowingLinks: Whether `<a href>` is kept; pass false for a server without `body-hyperlinks`
    ///     (GNOME Shell, mako and swaync draw the tag as text): the link's text stays, the tag goes.
    public static func sanitize(_ text: String, allowingLinks: Bool = true) -> String {
        var out = ""
        var open: [String] = []
        // How many of each tag are open, so a closing tag that matches nothing costs no scan of the stack.
        var openCount: [String: Int] = [:]
        for token in tokens(text) {
            switch token {
            case .text(let value):
                out += validText(value)
            case .tag(let raw, let name, let closing, let attributes):
                if name == "a", !allowingLinks {
                    continue
                } else if allowedTags.contains(name) {
                    if closing {
                        if openCount[name, default: 0] > 0, let index = open.lastIndex(of: name) {
                            // Close what was opened inside, in order, so the result is well formed. The scan from
                            // the top stops at `index`: it costs what it removes.
                            for inner in open[index...].reversed() where inner != "img" {
                                out += "</\(inner)>"
                                openCount[inner, default: 1] -= 1
                            }
                            open.removeSubrange(index...)
                        }
                    } else if name == "img" {
                        out += "<img" + render(attributes, for: name) + "/>"
                    } else {
                        // A tag that is already valid is passed on as written (notify-send passes it as it is).
                        let rendered = "<\(name)" + render(attributes, for: name) + ">"
                        let singleQuoted = String(rendered.map { $0 == "\"" ? "'" : $0 })
                        out += raw == rendered || (raw == singleQuoted && !raw.contains("&quot;")) ? raw : rendered
                        open.append(name)
                        openCount[name, default: 0] += 1
                    }
                } else {
                    out += validText(raw)
                }
            }
        }
        for name in open.reversed() { out += "</\(name)>" }
        return out
    }

    /// Removes every tag and decodes the basic entities, for a server without `body-markup`. Takes time in
    /// proportion to the length of `text`.
    public static func strip(_ text: String) -> String {
        var out = ""
        for token in tokens(text) {
            switch token {
            case .text(let value): out += unescapeEntities(value)
            case .tag(_, let name, _, let attributes):
                if name == "img", let alt = attributes.first(where: { $0.0 == "alt" })?.1 { out += alt }
            }
        }
        return out
    }

    /// The allowed attributes of `tag`, each once (the first occurrence wins: markup parsers refuse a repeated
    /// attribute).
    private static func render(_ attributes: [(String, String)], for tag: String) -> String {
        let allowed = allowedAttributes[tag] ?? []
        var seen: Set<String> = []
        return attributes.filter { allowed.contains($0.0) && seen.insert($0.0).inserted }
            .map { " \($0.0)=\"\(escapeAttribute($0.1))\"" }.joined()
    }

    private static func escapeAttribute(_ value: String) -> String {
        escapeBytes(unescapeEntities(value), quotes: true)
    }

    /// The entities a markup body may hold, without their `&`.
    private static let entities: [(name: [UInt8], value: UInt8)] = [
        (Array("lt;".utf8), 0x3C), (Array("gt;".utf8), 0x3E), (Array("quot;".utf8), 0x22),
        (Array("apos;".utf8), 0x27), (Array("amp;".utf8), 0x26),
    ]

    /// Decodes `&lt; &gt; &quot; &apos; &amp;` in one pass over the bytes (what a decoded entity produces is not
    /// decoded again: `&amp;lt;` is `&lt;`).
    private static func unescapeEntities(_ text: String) -> String {
        guard utf8Contains(text, "&") else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x26,
                let entity = entities.first(where: { bytes[(index + 1)...].starts(with: $0.name) })
            {
                out.append(entity.value)
                index += 1 + entity.name.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private enum Token {
        case text(String)
        case tag(raw: String, name: String, closing: Bool, attributes: [(String, String)])
    }

    /// Splits text into runs of text and things that look like tags (`<name …>` / `</name>`), in one pass: the
    /// next `>` is searched for once and reused by every `<` before it (searching again from each `<` made 64 KB
    /// of `<` cost seconds), and a `<` that starts no tag stays in its run of text.
    private static func tokens(_ text: String) -> [Token] {
        var result: [Token] = []
        var runStart = text.startIndex
        var position = text.startIndex
        // The first `>` at or after the last search's start; `nil` once there is none left.
        var close: String.Index? = text.startIndex
        var closeFound = false
        while let start = text[position...].firstIndex(of: "<") {
            if let known = close, !closeFound || known < start {
                close = text[start...].firstIndex(of: ">")
                closeFound = true
            }
            guard let end = close, let tag = parseTag(text[start...end]) else {
                if close == nil { break }  // no `>` left: the rest is text
                position = text.index(after: start)
                continue
            }
            if start > runStart { result.append(.text(String(text[runStart..<start]))) }
            result.append(tag)
            position = text.index(after: end)
            runStart = position
        }
        if runStart < text.endIndex { result.append(.text(String(text[runStart...]))) }
        return result
    }

    private static func parseTag(_ raw: Substring) -> Token? {
        var inner = raw.dropFirst().dropLast()
        let closing = inner.first == "/"
        if closing { inner = inner.dropFirst() }
        if inner.last == "/" { inner = inner.dropLast() }
        let name = inner.prefix { $0.isLetter || $0.isNumber }.lowercased()
        guard !name.isEmpty, name.first!.isLetter else { return nil }
        var attributes: [(String, String)] = []
        var remainder = inner.dropFirst(name.count)
        while true {
            remainder = remainder.drop { $0.isWhitespace }
            let key = remainder.prefix { $0.isLetter || $0 == "-" || $0 == "_" }
            guard !key.isEmpty else { break }
            remainder = remainder.dropFirst(key.count).drop { $0.isWhitespace }
            guard remainder.first == "=" else {
                attributes.append((key.lowercased(), ""))
                continue
            }
            remainder = remainder.dropFirst().drop { $0.isWhitespace }
            if let quote = remainder.first, quote == "\"" || quote == "'" {
                let body = remainder.dropFirst()
                let value = body.prefix { $0 != quote }
                attributes.append((key.lowercased(), String(value)))
                remainder = body.dropFirst(value.count).dropFirst()
            } else {
                let value = remainder.prefix { !$0.isWhitespace }
                attributes.append((key.lowercased(), String(value)))
                remainder = remainder.dropFirst(value.count)
            }
        }
        return .tag(raw: String(raw), name: name, closing: closing, attributes: attributes)
    }
}
