import Testing
import ToastKit
import ToastKitAgent

@testable import ToastKitCommandLine

/// notify-send's and dunstify's command lines as toastkit reads them when it is called by their names: each rule
/// of those tools (libnotify 0.8.1's `tools/notify-send.c`, dunst 1.9's `dunstify.c`) that a script can see.
@Suite struct DialectParserTests {
    private func parse(_ program: String, _ arguments: String...) throws -> Invocation {
        try CommandLineParser.parse(arguments: arguments.map { Argument($0) }, program: program)
    }

    private func options(_ program: String, _ arguments: String...) throws -> SendOptions {
        try ParsedLine.sendOptions(program, arguments)
    }

    private func failure(_ program: String, _ arguments: String...) -> CommandFailure? {
        ParsedLine.failure(program, arguments)
    }

    @Test func theProgramsNameChoosesTheCommandLine() throws {
        #expect(try options("/usr/local/bin/notify-send", "T").dialect == .notifySend)
        #expect(try options("dunstify", "T").dialect == .dunstify)
        #expect(try CommandLineParser.parse(["notify-send", "T"]) == .send(try options("notify-send", "T")))
        #expect(try CommandLineParser.parse(["dunstify", "-s"]) == .toolCommand(.serverInfo, .dunstify))
        #expect(try parse("notify-send", "--help") == .toolCommand(.help, .notifySend))
        #expect(try parse("notify-send", "-v") == .toolCommand(.version, .notifySend))
        #expect(try options("notify-send", "-h", "int:value:5", "T").hints == [Hint(name: "value", value: .int32(5))])
    }

    @Test func notifySendBodyEscapesActionsAndSummary() throws {
        let escaped = try options("notify-send", #"S\n"#, #"a\nb|c\\td|e\\\\f|g\xh|i\101j|k\"l|m\qn"#)
        #expect(escaped.title == #"S\n"#, "the summary is sent as it is")
        #expect(escaped.message == .text("a\nb|c\\td|e\\\\f|gxh|iAj|k\"l|mqn"), "g_strcompress on the body")
        #expect(try options("notify-send", "T", #"a\0b"#).message == .text("a"), "\\0 ends the body, as in C")
        let actions = try options("notify-send", "-A", " k = Label X ", "-A", "B", "-A", "=L", "T")
        #expect(actions.actions == [ActionOption(id: "k", label: "Label X"), ActionOption(id: "1", label: "B")])
        #expect(try options("notify-send", "-A", "default=Open", "T").tap == ActionOption(id: "default", label: "Open"))
        #expect(!(try options("notify-send", "-A", "k=", "T")).waits, "a skipped action does not make it wait")
        #expect(failure("notify-send")?.message == "No summary specified.")
        #expect(failure("notify-send", "")?.message == "No summary specified.")
        #expect(failure("notify-send", "a", "b", "c")?.message == "Invalid number of options.")
    }

    @Test func notifySendNumbersAndHints() throws {
        #expect(try options("notify-send", "-t", "0x10", "T").duration == .expireTime(16), "strtol in base 0")
        #expect(try options("notify-send", "-t", "010", "T").duration == .expireTime(8))
        #expect(try options("notify-send", "-t", "-1", "T").duration?.toastDuration == nil, "the server's default")
        #expect(failure("notify-send", "-t", "abc", "T")?.code == .dataError)
        #expect(try options("notify-send", "-r", "-1", "T").replaceID == nil, "a negative id is a new notification")
        #expect(try options("notify-send", "-u", "CRITICAL", "T").urgency == .critical)
        func hint(_ text: String) throws -> Hint? { try HintParser.parseAsLibnotify(text) }
        #expect(try hint("INT:value:50abc") == Hint(name: "value", value: .int32(50)))
        #expect(try hint("int:value:4294967297") == Hint(name: "value", value: .int32(1)), "wraps at 32 bits")
        #expect(throws: CommandFailure.self) { try hint("int:value:-5") }
        #expect(try hint("byte:b:abc") == Hint(name: "b", value: .byte(0)))
        #expect(throws: CommandFailure.self) { try hint("byte:b:300") }
        #expect(try hint("boolean:t:TRUE") == Hint(name: "t", value: .bool(true)))
        #expect(try hint("boolean:t:yes") == Hint(name: "t", value: .bool(false)), "libnotify's reading")
        #expect(try hint("boolean:t:2") == Hint(name: "t", value: .bool(true)))
        #expect(try hint("string:x:") == nil, "an empty string sends no hint")
        #expect(try hint("STRING:x:a:b") == Hint(name: "x", value: .string("a:b")))
        #expect(try hint("double:d:1.5") == Hint(name: "d", value: .double(1.5)))
        #expect(failure("notify-send", "-h", "string::v", "T")?.code == .dataError, "notify-send would crash")
        // toastkit send reads what a script relies on as notify-send does, and warns.
        let lenient = try options("toastkit", "send", "-h", "int:value:50%", "T")
        #expect(lenient.hints == [Hint(name: "value", value: .int32(50))])
        #expect(lenient.warnings.count == 1)
    }

    @Test func dunstifyActionsUrgencyAndHints() throws {
        let dunst = try options("dunstify", "-A", "yes,Yes, really", "-A", "nocomma", "-u", "cxyz", "S", "B", "extra")
        #expect(dunst.actions == [ActionOption(id: "yes", label: "Yes, really")], "split at the first comma")
        #expect(dunst.warnings.count == 1, "the malformed action is left out, with a warning")
        #expect(dunst.urgency == .critical, "dunstify reads the first letter")
        #expect(dunst.message == .text("B"), "extra words are ignored")
        #expect(try options("dunstify", "-A", "nocomma", "S").waits, "it still waits")
        #expect(try options("dunstify", "-u", "2", "S").urgency == .critical)
        let unknown = try options("dunstify", "-u", "urgent", "S")
        #expect(unknown.urgency == .normal && unknown.warnings == ["Unknown urgency: urgent; assuming normal urgency"])
        #expect(try options("dunstify", "--replace=5", "-p", "S").replaceID == 5)
        #expect(try options("dunstify", "-r", "-5", "S").replaceID == 4_294_967_291, "sent as unsigned")
        #expect(try options("dunstify", "-b", "S").waits)
        let hints = try options("dunstify", "-h", "int:value:abc", "-h", "INT:x:1", "-h", "byte:b:300", "S")
        #expect(
            hints.hints == [Hint(name: "value", value: .int32(0))], "atoi; an unknown type or a bad byte is dropped")
        #expect(hints.warnings.count == 2)
        #expect(try options("dunstify", "", "body").title == "", "an empty summary is allowed")
        #expect(failure("dunstify")?.message == "I need at least a summary")
        #expect(failure("dunstify", "-a", "", "S")?.message == "Provided appname was empty")
        #expect(try options("dunstify", "-I", "/tmp/x.png", "S").rawIcon == "/tmp/x.png")
    }

    @Test func moreThanTheToastHoldsIsLeftOutWithAWarning() throws {
        let many = try options("notify-send", "-A", "a=A", "-A", "a=Again", "-A", "b=B", "-A", "c=C", "S")
        #expect(many.actions.map(\.id) == ["a", "b"])
        #expect(many.warnings.count == 2)
        #expect(failure("toastkit", "send", "-A", "a=A", "-A", "b=B", "-A", "c=C", "S")?.code == .usage)
        #expect(Dialects.cInteger("--5") == nil && Dialects.cInteger("-9223372036854775807") == -Int64.max)
        #expect(Dialects.cInteger("--9223372036854775808") == nil, "no second sign, no trap")
    }

    @Test func iconNamesAreSentAsGivenByTheToolsAndMappedBySend() throws {
        func appIcon(_ options: SendOptions) -> String? {
            let toast = PresentedToast(id: "x", status: .normal, title: "T")
            return CommandLineStyle(options: options).makeRequest(for: toast).appIcon
        }
        #expect(appIcon(try options("notify-send", "-i", "trash", "S")) == "trash")
        #expect(appIcon(try options("toastkit", "send", "-i", "trash", "S")) == "user-trash")
    }

    @Test func anAutomaticDurationStaysAutomaticOnTheAgentsWireAndDisk() throws {
        var options = SendOptions(title: "T")
        options.duration = .duration(.automatic)
        let request = AgentRequest(options: options)
        let decoded = try AgentRequest(request.dictionary)
        #expect(decoded.options.duration?.toastDuration == .automatic)
        #expect(decoded.traits.indefinite == false, "it queues in its application's lane")
        let saved = try SavedRequest(request).request()
        #expect(saved.options.duration?.toastDuration == .automatic)
        var server = options
        server.duration = .serverDefault
        #expect(try AgentRequest(AgentRequest(options: server).dictionary).options.duration == .serverDefault)
    }

    @Test func dunstifyCommands() throws {
        #expect(try parse("dunstify", "-C", "46") == .toolCommand(.close(46), .dunstify))
        #expect(try parse("dunstify", "-C", "-12345") == .toolCommand(.close(4_294_954_951), .dunstify))
        #expect(try parse("dunstify", "-c", "-s") == .toolCommand(.capabilities, .dunstify), "-c comes first")
        #expect(try parse("dunstify", "--serverinfo") == .toolCommand(.serverInfo, .dunstify))
    }

    @Test func exitCodesAsTheToolsGiveThem() {
        for code in [ExitCode.success, .dismissed, .expired, .closed, .deferred] {
            #expect(DialectOutput.exitCode(code, dialect: .notifySend) == 0)
            #expect(DialectOutput.exitCode(code, dialect: .dunstify) == 0)
        }
        for code in [ExitCode.usage, .dataError, .unavailable, .software] {
            #expect(DialectOutput.exitCode(code, dialect: .notifySend) == 1)
        }
        #expect(DialectOutput.exitCode(.ioError, dialect: .notifySend) == 0, "a closed stdout is ignored, as GLib does")
        #expect(DialectOutput.exitCode(.interrupted, dialect: .notifySend) == 0, "notify-send closes it and exits 0")
        #expect(DialectOutput.exitCode(.interrupted, dialect: .dunstify) == 130)
        #expect(DialectOutput.exitCode(.dismissed, dialect: .toastkit) == 2)
    }
}
