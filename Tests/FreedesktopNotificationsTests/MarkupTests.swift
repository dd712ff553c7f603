import FreedesktopNotifications
import Testing
import ToastModel

/// The body-markup subset: what is kept, what is escaped, and that hostile input costs time in proportion to its
/// length (issue 12: 64 KB of `<` took about 43 s, a quadratic search for `>`).
@Suite(.timeLimit(.minutes(1))) struct MarkupTests {
    @Test(arguments: [
        ("<b>bold</b> & <i>it</i>", "<b>bold</b> &amp; <i>it</i>"),
        ("<b>a<i>b</b>c", "<b>a<i>b</i></b>c"),
        ("<B onclick=\"x\">a</B>", "<b>a</b>"),
        ("<a href='https://x/?a=1&b=2' target=_blank>l</a>", "<a href=\"https://x/?a=1&amp;b=2\">l</a>"),
        ("<img src=\"i.png\" alt=\"a\\\"b\">", "<img src=\"i.png\" alt=\"a\\\"/>"),
        ("<script>x</script>", "&lt;script>x&lt;/script>"),
        ("a < b > c", "a &lt; b > c"),
        ("<<b>>", "&lt;<b>></b>"),
        ("Tom & Jerry &amp; &#233; &#x1F600; &nbsp;", "Tom &amp; Jerry &amp; &#233; &#x1F600; &amp;nbsp;"),
        ("From: Ana <ana@example.org>", "From: Ana &lt;ana@example.org>"),
        ("&#0; &#xD800; &#65;", "&amp;#0; &amp;#xD800; &#65;"),
        ("</i>x", "x"),
        ("1 &lt; 2 &amp;&amp; 3 &gt; 2", "1 &lt; 2 &amp;&amp; 3 &gt; 2"),
        ("<u>open", "<u>open</u>"),
        ("<1>", "&lt;1>"),
        ("<span foreground='red'>x</span>", "<span foreground='red'>x</span>"),
        ("<span color=\"#ff0000\" onclick='y'>x</span>", "<span color=\"#ff0000\">x</span>"),
        ("<span font_desc=Mono>x", "<span font_desc=\"Mono\">x</span>"),
        ("<small>s</small> <sup>2</sup> <tt>t</tt>", "<small>s</small> <sup>2</sup> <tt>t</tt>"),
        ("<", "&lt;"),
    ])
    func sanitizeKeepsTheSubsetAndEscapesTheRest(_ input: String, _ expected: String) {
        #expect(BodyMarkup.sanitize(input) == expected)
    }

    @Test(arguments: [
        ("<b>bold</b> &amp; <a href=\"x\">link</a>", "bold & link"),
        ("<img src=\"i.png\" alt=\"pic\"/> after", "pic after"),
        ("a < b > c", "a < b > c"),
        ("<<b>>", "<>"),
        ("&lt;b&gt;", "<b>"),
    ])
    func stripRemovesTagsAndDecodesEntities(_ input: String, _ expected: String) {
        #expect(BodyMarkup.strip(input) == expected)
    }

    /// Each input is 32 KiB; a linear pass takes milliseconds (debug build), the old quadratic one 30-60 s.
    @Test(arguments: ["lt", "unclosed-nesting", "open-tag-to-the-end", "letters-after-lt"])
    func hostileInputCostsLinearTime(_ kind: String) {
        let size = 32_768
        let text: String =
            switch kind {
            case "lt": String(repeating: "<", count: size)
            case "unclosed-nesting":
                String(repeating: "<b>", count: size / 7) + String(repeating: "</i>", count: size / 7)
            case "open-tag-to-the-end": "<a " + String(repeating: "x=", count: size / 2) + ">"
            default: String(repeating: "<a", count: size / 2)
            }
        let clock = ContinuousClock()
        var sanitized = ""
        var stripped = ""
        let sanitizing = clock.measure { sanitized = BodyMarkup.sanitize(text) }
        let stripping = clock.measure { stripped = BodyMarkup.strip(text) }
        #expect(sanitizing < .seconds(5), "sanitize took \(sanitizing)")
        #expect(stripping < .seconds(5), "strip took \(stripping)")
        if kind == "lt" {
            #expect(sanitized == String(repeating: "&lt;", count: size))
            #expect(stripped == text)
        }
    }

    /// `&`, `<` and `>` are escaped even where a combining mark makes them part of a larger character: a markup
    /// parser reads code points, and a raw `&` or `<` breaks the whole body.
    @Test func markupCharactersInsideGraphemeClustersAreEscaped() {
        #expect(BodyMarkup.escape("a &\u{301} <\u{301}b>\u{301}") == "a &amp;\u{301} &lt;\u{301}b&gt;\u{301}")
        #expect(BodyMarkup.sanitize("<\u{301}b>x &\u{301}") == "&lt;\u{301}b>x &amp;\u{301}")
        #expect(BodyMarkup.strip("&amp;\u{301} &lt;\u{301}") == "&\u{301} <\u{301}", "entities are decoded likewise")
        #expect(BodyMarkup.sanitize("<a href=\"\u{301}x\">l</a>") == "<a href=\"&quot;\u{301}x&quot;\">l</a>")
    }

    /// An attribute given twice is kept once (the first), so the result is still valid markup.
    @Test func aRepeatedAttributeIsKeptOnce() {
        #expect(BodyMarkup.sanitize("<a href='x' href='y'>l</a>") == "<a href=\"x\">l</a>")
        #expect(BodyMarkup.sanitize("<img alt=a src=b alt=c>") == "<img alt=\"a\" src=\"b\"/>")
    }

    @Test func aServerWithoutHyperlinksGetsTheLinksTextAndItIsReported() throws {
        let body = #"<b>Negrita</b> y <a href="https://example.org/">enlace</a>"#
        #expect(BodyMarkup.sanitize(body, allowingLinks: false) == "<b>Negrita</b> y enlace")
        var configuration = PresenterConfiguration(appName: "t")
        configuration.markup = .basic
        let noLinks = ServerCapabilities(["body", "body-markup"])
        let mapped = try NotificationMapping.notify(
            ToastRequest(summary: "x", body: body), expireTimeout: nil, capabilities: noLinks,
            configuration: configuration)
        #expect(mapped.call.body == "<b>Negrita</b> y enlace")
        #expect(mapped.degradations == ["the server has no body-hyperlinks: links shown as their text"])
        let links = ServerCapabilities(["body", "body-markup", "body-hyperlinks"])
        let kept = try NotificationMapping.notify(
            ToastRequest(summary: "x", body: body), expireTimeout: nil, capabilities: links,
            configuration: configuration)
        #expect(kept.call.body == body)
        #expect(kept.degradations.isEmpty)
    }
}
