// The parser's side of "a cosmetic problem never costs the message" (issue 43): an empty value of an option that only
// decorates the toast is no decoration, never an error, in each dialect.
import Testing
import ToastKit
import ToastKitAgent

@testable import ToastKitCommandLine

/// An empty icon, status, sound, language, category or string hint (a script's variable left empty) parses to a toast
/// without it: `toastkit send` says so in one warning where the person asked for something they will not see, and
/// says nothing where notify-send sends nothing either; called as notify-send or dunstify, toastkit reads the line as
/// the tool does.
@Suite struct EmptyValueParserTests {
    private func options(_ program: String, _ arguments: String...) throws -> SendOptions {
        try options(program, arguments)
    }

    private func options(_ program: String, _ arguments: [String]) throws -> SendOptions {
        try ParsedLine.sendOptions(program, arguments)
    }

    private func failure(_ program: String, _ arguments: String...) -> CommandFailure? {
        ParsedLine.failure(program, arguments)
    }

    /// Each of `toastkit send`'s decorations, empty: the toast without it, and the one warning that says so.
    @Test(arguments: [
        (["-i", ""], "-i/--icon: the icon is empty; the toast is shown without one"),
        (["--icon="], "-i/--icon: the icon is empty; the toast is shown without one"),
        (["-s", ""], "-s/--status: the status is empty; the toast is shown without one"),
        (["--sound", ""], "--sound: the sound is empty; the toast is shown without one"),
        (["--lang", ""], "--lang: the language is empty; the locale's labels are used"),
    ])
    func anEmptyDecorationIsNoneWithAWarning(flags: [String], warning: String) throws {
        let options = try options("toastkit", ["send"] + flags + ["Now Playing", "Portishead - Roads"])
        #expect(options.title == "Now Playing")
        #expect(options.message == .text("Portishead - Roads"))
        #expect(options.warnings == [warning])
        #expect(options.icon == nil && options.status == nil && options.sound == nil && options.language == nil)
    }

    /// An empty category or `string` hint is sent as notify-send sends it — not at all — without a word: nothing the
    /// person asked to see is missing. The category stays "" in the options, so that it also clears a status's one;
    /// the mapping sends none for it.
    @Test func anEmptyCategoryOrStringHintIsNotSent() throws {
        let send = try options(
            "toastkit", "send", "-c", "", "-h", "string:image-path:", "-h", "STRING:x-dunst-stack-tag:", "T")
        #expect(send.category == "")
        #expect(send.hints.isEmpty, "\(send.hints)")
        #expect(send.warnings.isEmpty, "\(send.warnings)")
        // A hint that is not an empty string is still sent as given, and a variant's empty string is a value.
        let kept = try options("toastkit", "send", "-h", "string:image-path:/tmp/a.png", "-h", "variant:v:<''>", "T")
        #expect(
            kept.hints == [
                Hint(name: "image-path", value: .string("/tmp/a.png")), Hint(name: "v", value: .string("")),
            ])
        let notifySend = try options("notify-send", "-c", "", "-i", "", "-h", "string:image-path:", "T")
        #expect(notifySend.category == nil && notifySend.icon == nil && notifySend.hints.isEmpty)
        #expect(notifySend.warnings.isEmpty, "notify-send says nothing")
    }

    /// dunstify's `-i ""` and `--icon=` are no icon, silently, as dunstify sends them; its `-I ""` fails as dunstify
    /// fails on it (and on a missing file), since `-I` asks dunstify to read the image itself.
    @Test func dunstifyReadsEmptyIconsAsDunstifyDoes() throws {
        for flags in [["-i", ""], ["--icon="]] {
            let dunstify = try options("dunstify", flags + ["T"])
            #expect(dunstify.icon == nil && dunstify.warnings.isEmpty, "\(flags)")
        }
        #expect(failure("dunstify", "-I", "", "T")?.code == .dataError)
    }

    /// `toastkit run --lang ""` runs the command and uses the locale's labels, instead of refusing the command line.
    @Test func runWithAnEmptyLanguageRunsTheCommand() throws {
        guard case .run(let options) = try CommandLineParser.parse(["run", "--lang", "", "--", "true"]) else {
            Issue.record("not a run invocation")
            return
        }
        #expect(options.language == nil)
        #expect(options.command == [Array("true".utf8)])
        #expect(throws: CommandFailure.self) { try CommandLineParser.parse(["run", "--lang", "xx", "--", "true"]) }
    }
}
