import Testing
import ToastKit
import ToastKitAgent

@testable import ToastKitCommandLine

/// The pure parser: arguments → invocation, every flag, combinations, and each error with its exact line and code.
@Suite(.timeLimit(.minutes(2))) struct ParserTests {
    private func send(_ arguments: String...) throws -> SendOptions {
        guard case .send(let options) = try CommandLineParser.parse(["send"] + arguments) else {
            throw CommandFailure(.software, "not a send invocation")
        }
        return options
    }

    private func failure(_ arguments: [String]) -> CommandFailure? {
        do {
            _ = try CommandLineParser.parse(arguments)
            return nil
        } catch {
            return error
        }
    }

    private func expectFailure(
        _ arguments: [String], _ code: ExitCode, _ line: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let failure = failure(arguments)
        #expect(failure?.code == code, sourceLocation: sourceLocation)
        #expect(failure?.line == line, sourceLocation: sourceLocation)
    }

    @Test func titleAndMessage() throws {
        let options = try send("Cambios guardados", "Todo está al día.")
        #expect(options.title == "Cambios guardados")
        #expect(options.message == .text("Todo está al día."))
        #expect(options.status == nil, "no status asked for: no status icon, as notify-send")
        #expect(!options.waits)
        #expect(try send("T", "-").message == .standardInput)
        #expect(try send("--", "-titulo", "-x").title == "-titulo")
    }

    @Test func toastKitFlags() throws {
        let options = try send(
            "-s", "warning", "-i", "photo.on.rectangle", "--id", "sync", "-d", "6", "--json", "-w", "T")
        #expect(options.status == .warning)
        #expect(options.icon == .name("photo.on.rectangle"))
        #expect(options.id == "sync")
        #expect(options.duration == .duration(.seconds(6)))
        #expect(options.json && options.wait && options.waits)
        #expect(try send("--status=error", "T").status == .error)
        #expect(try send("-serror", "T").status == .error)
        #expect(try send("-d", "auto", "T").duration?.toastDuration == .automatic)
        #expect(try send("-d", "indefinite", "T").duration?.toastDuration == .indefinite)
        #expect(try send("--duration", "2.5", "T").duration?.toastDuration == .seconds(2.5))
        #expect(try send("-i", "./icon.png", "T").icon == .path("./icon.png"))
        #expect(try send("-i", "/usr/share/x.svg", "T").icon == .path("/usr/share/x.svg"))
        #expect(try send("-i", "file:///tmp/a.png", "T").icon == .path("file:///tmp/a.png"), "sent as given")
        #expect(try send("-i", "logo.png", "T").icon == .path("logo.png"))
    }

    @Test func actionsTapAndConfirm() throws {
        let options = try send(
            "-A", "archive=Archivar", "-A", "later", "--tap", "open=Abrir", "--confirm", "archive=Archivado", "T")
        #expect(
            options.actions == [
                ActionOption(id: "archive", label: "Archivar", confirmation: "Archivado"),
                ActionOption(id: "later", label: nil),
            ])
        #expect(options.tap == ActionOption(id: "open", label: "Abrir"))
        #expect(options.waits, "actions imply --wait, as notify-send's -A does")
        #expect(try send("--tap", "open", "T").tap == ActionOption(id: "open", label: nil))
        #expect(try send("-A", "Yes", "-A", "No", "T").actions.map(\.id) == ["0", "1"], "notify-send's index ids")
        #expect(try send("-A", "later=Luego", "T").actions == [ActionOption(id: "later", label: "Luego")])
        let click = try send("-A", "default=Abrir", "-A", "Más", "T")
        #expect(click.tap == ActionOption(id: "default", label: "Abrir"), "notify-send's click on the notification")
        #expect(click.actions == [ActionOption(id: "1", label: "Más")], "a bare label's id counts every -A")
    }

    @Test func notifySendFlags() throws {
        let options = try send(
            "-a", "backup", "-n", "drive-harddisk", "-u", "critical", "-c", "transfer.complete", "-h",
            "int:x-count:5", "-h", "string:x-name:a:b", "-e", "-p", "-r", "42", "-t", "2500", "T", "B")
        #expect(options.appName == "backup")
        #expect(options.appIcon == "drive-harddisk")
        #expect(options.urgency == .critical)
        #expect(options.category == "transfer.complete")
        #expect(
            options.hints == [Hint(name: "x-count", value: .int32(5)), Hint(name: "x-name", value: .string("a:b"))])
        #expect(options.transient && options.printID)
        #expect(options.replaceID == 42)
        #expect(options.duration == .expireTime(2500))
        #expect(options.duration?.toastDuration == .seconds(2.5))
        #expect(try send("-t", "-1", "T").duration == .expireTime(-1))
        #expect(try send("-t", "-1", "T").duration?.toastDuration == nil, "the server's default, as notify-send")
        #expect(try send("-t", "0", "T").duration?.toastDuration == .indefinite)
        #expect(try send("-r", "0", "T").replaceID == nil)
        #expect(try send("-ep", "T").transient)
        #expect(try send("-ulow", "T").urgency == .low)
        #expect(try send("--hint=byte:x:0x05", "T").hints == [Hint(name: "x", value: .byte(5))])
    }

    @Test func hintTypes() throws {
        #expect(try HintParser.parse("boolean:x:true") == Hint(name: "x", value: .bool(true)))
        #expect(try HintParser.parse("double:x:1.5") == Hint(name: "x", value: .double(1.5)))
        #expect(try HintParser.parse("byte:urgency:2") == Hint(name: "urgency", value: .byte(2)))
        #expect(try HintParser.parse("variant:x:<int32 5>") == Hint(name: "x", value: .int32(5)))
        #expect(try HintParser.parse("variant:x:<uint32 7>") == Hint(name: "x", value: .uint32(7)))
        #expect(try HintParser.parse("variant:x:<'hi there'>") == Hint(name: "x", value: .string("hi there")))
        #expect(try HintParser.parse("variant:x:<false>") == Hint(name: "x", value: .bool(false)))
        #expect(try HintParser.parse("variant:x:<byte 0x05>") == Hint(name: "x", value: .byte(5)))
        #expect(try HintParser.parse("variant:x:<double 1.5>") == Hint(name: "x", value: .double(1.5)))
        #expect(try HintParser.parse("variant:x:5") == Hint(name: "x", value: .int32(5)))
    }

    @Test func hintErrors() {
        expectFailure(
            ["send", "-h", "int:x:abc", "T"], .dataError, #"toastkit: -h/--hint int:x:abc: "abc" is not an integer"#)
        expectFailure(
            ["send", "-h", "int:x:99999999999", "T"], .dataError,
            #"toastkit: -h/--hint int:x:99999999999: "99999999999" does not fit in a 32-bit integer"#)
        expectFailure(
            ["send", "-h", "boolean:x:maybe", "T"], .dataError,
            #"toastkit: -h/--hint boolean:x:maybe: "maybe" is not a boolean (true or false)"#)
        expectFailure(
            ["send", "-h", "byte:x:300", "T"], .dataError,
            #"toastkit: -h/--hint byte:x:300: "300" is not a byte (0 to 255, or 0x00 to 0xff)"#)
        expectFailure(
            ["send", "-h", "float:x:1", "T"], .dataError,
            #"toastkit: -h/--hint float:x:1: unknown hint type "float" (use boolean, int, double, string, byte, variant)"#
        )
        expectFailure(
            ["send", "-h", "int:x", "T"], .dataError,
            "toastkit: -h/--hint int:x: expected TYPE:NAME:VALUE (TYPE is boolean, int, double, string, byte, variant)")
        expectFailure(["send", "-h", "int::5", "T"], .dataError, "toastkit: -h/--hint int::5: the hint NAME is empty")
        expectFailure(
            ["send", "-h", "variant:x:<(1,2)>", "T"], .dataError,
            #"toastkit: -h/--hint variant:x:<(1,2)>: unsupported variant "<(1,2)>" (use <int32 N>, <uint32 N>, "#
                + "<byte 0xNN>, <double N>, <true>, <false> or <'text'>)")
    }

    @Test func usageErrors() {
        expectFailure(
            [], .usage,
            "toastkit: missing command (send, close, later, capabilities, server-info, listen, wait, list, run, progress, doctor, agent); see toastkit --help"
        )
        expectFailure(
            ["sned"], .usage,
            #"toastkit: unknown command "sned" (send, close, later, capabilities, server-info, listen, wait, list, run, progress, doctor, agent); see toastkit --help"#
        )
        expectFailure(["send"], .usage, "toastkit: send: missing TITLE; see toastkit send --help")
        expectFailure(
            ["send", "--frobnicate", "T"], .usage,
            "toastkit: send: unknown option --frobnicate; see toastkit send --help")
        expectFailure(["send", "-x", "T"], .usage, "toastkit: send: unknown option -x; see toastkit send --help")
        expectFailure(
            ["send", "-h"], .usage,
            "toastkit: -h/--hint needs a value TYPE:NAME:VALUE (-h is the hint flag, as in notify-send; for help use --help)"
        )
        expectFailure(["send", "T", "-s"], .usage, "toastkit: -s/--status needs a value; see toastkit send --help")
        expectFailure(["send", "--wait=yes", "T"], .usage, "toastkit: -w/--wait takes no value")
        expectFailure(
            ["send", "T", "M", "extra"], .usage,
            #"toastkit: send: unexpected argument "extra" (TITLE and MESSAGE are already given; quote text with spaces)"#
        )
        expectFailure(
            ["send", "-t", "1000", "-d", "2", "T"], .usage,
            "toastkit: -t/--expire-time and -d/--duration cannot be used together")
        expectFailure(
            ["send", "-A", "a=A", "-A", "b=B", "-A", "c=C", "T"], .usage,
            "toastkit: -A/--action: at most two actions (the first is leading, the second trailing); use --tap for clicking the toast"
        )
        expectFailure(
            ["send", "--confirm", "nope=Hecho", "T"], .usage,
            #"toastkit: --confirm nope=Hecho: no -A/--action or --tap has the id "nope""#)
        expectFailure(
            ["send", "-", "M"], .usage, "toastkit: send: TITLE cannot be read from standard input; use - for MESSAGE")
        expectFailure(["close"], .usage, "toastkit: close: missing --id ID or --server-id N; see toastkit close --help")
        expectFailure(
            ["close", "--id", "a", "--server-id", "3"], .usage,
            "toastkit: close: give one of --id ID or --server-id N, once")
        expectFailure(
            ["later", "now"], .usage, #"toastkit: later: unexpected argument "now"; see toastkit later --help"#)
        expectFailure(
            ["listen", "--xml"], .usage, "toastkit: listen: unknown option --xml; see toastkit listen --help")
        expectFailure(
            ["help", "nope"], .usage,
            #"toastkit: help: unknown command "nope" (send, close, later, capabilities, server-info, listen, wait, list, run, progress, doctor, agent)"#
        )
    }

    @Test func valueErrors() throws {
        expectFailure(
            ["send", "-s", "purple", "T"], .dataError,
            "toastkit: -s/--status purple: unknown status (use normal, success, warning, error, notification)")
        expectFailure(
            ["send", "-u", "urgent", "T"], .dataError,
            "toastkit: -u/--urgency urgent: unknown urgency (use low, normal or critical)")
        expectFailure(
            ["send", "-d", "soon", "T"], .dataError,
            "toastkit: -d/--duration soon: expected seconds (2.5) or a duration (500ms, 10m, 1h30m), auto or indefinite"
        )
        expectFailure(
            ["send", "-d", "-3", "T"], .dataError,
            "toastkit: -d/--duration -3: expected seconds (2.5) or a duration (500ms, 10m, 1h30m), auto or indefinite")
        for (text, seconds) in [("10m", 600.0), ("1h30m", 5400), ("500ms", 0.5), ("1.5s", 1.5), ("2min", 120)] {
            #expect(try send("-d", text, "T").duration == .duration(.seconds(seconds)), "-d \(text) is \(seconds) s")
        }
        for text in ["10x", "m10", "30s1m", "1h1h", "5 m"] {
            #expect(failure(["send", "-d", text, "T"])?.code == .dataError, "-d \"\(text)\" is refused")
        }
        expectFailure(
            ["send", "-t", "-5", "T"], .dataError,
            "toastkit: -t/--expire-time -5: expected milliseconds (-1 for the default, 0 to stay until closed)")
        expectFailure(
            ["send", "-r", "x", "T"], .dataError,
            "toastkit: -r/--replace-id x: expected a notification number (0 for none)")
        expectFailure(["send", "--id", "", "T"], .dataError, "toastkit: --id: the id is empty")
        expectFailure(
            ["send", "-A", "=Archivar", "T"], .dataError, "toastkit: -A/--action =Archivar: the action id is empty")
        expectFailure(
            ["send", "-A", "archive=", "T"], .dataError, "toastkit: -A/--action archive=: the label is empty")
        expectFailure(
            ["send", "-A", "a=A", "-A", "a=B", "T"], .dataError,
            #"toastkit: -A/--action: more than one action has the id "a""#)
        expectFailure(["send", "--confirm", "a", "T"], .dataError, "toastkit: --confirm a: expected ID=TEXT")
        expectFailure(
            ["close", "--server-id", "0"], .dataError,
            "toastkit: --server-id 0: expected a notification number from 1 to 4294967295")
    }

    @Test func invalidUTF8NamesTheArgument() {
        func failure(_ arguments: [[UInt8]]) -> CommandFailure? {
            do {
                _ = try CommandLineParser.parse(arguments: arguments.map { Argument(bytes: $0) })
                return nil
            } catch {
                return error
            }
        }
        let bad: [UInt8] = [0x61, 0x62, 0x63, 0xFF, 0x64]
        #expect(
            failure([Array("send".utf8), bad])
                == .data("TITLE is not valid UTF-8 (byte 0xff at offset 3)"))
        #expect(
            failure([Array("send".utf8), Array("T".utf8), [0xC3, 0x28]])
                == .data("MESSAGE is not valid UTF-8 (byte 0xc3 at offset 0)"))
        #expect(
            failure([Array("send".utf8), Array("--id".utf8), bad, Array("T".utf8)])
                == .data("the value of --id is not valid UTF-8 (byte 0xff at offset 3)"))
        #expect(failure([Array("send".utf8), Array("é ok".utf8)]) == nil)
    }

    @Test func helpAndVersion() throws {
        #expect(try CommandLineParser.parse(["--help"]) == .help(nil))
        #expect(try CommandLineParser.parse(["help"]) == .help(nil))
        #expect(try CommandLineParser.parse(["help", "send"]) == .help(.send))
        #expect(try CommandLineParser.parse(["send", "--help"]) == .help(.send))
        #expect(try CommandLineParser.parse(["send", "-s", "nope", "--help"]) == .help(.send))
        #expect(try CommandLineParser.parse(["close", "-h"]) == .help(.close))
        #expect(try CommandLineParser.parse(["server-info", "--help"]) == .help(.serverInfo))
        #expect(try CommandLineParser.parse(["--version"]) == .version)
        for command in [nil] + Command.allCases.map(Optional.some) {
            let page = HelpText.page(for: command)
            for section in ["OVERVIEW:", "USAGE:", "ARGUMENTS:", "OPTIONS:"] {
                #expect(page.contains(section), "\(String(describing: command)) help has \(section)")
            }
        }
        #expect(HelpText.page(for: nil).contains("EXIT CODES:"))
        #expect(HelpText.page(for: .send).contains("EXIT CODES:"))
        for code in ExitCode.allCases where code != .terminated {
            #expect(HelpText.exitCodes.contains("  \(code.rawValue) "), "exit code \(code.rawValue) is documented")
        }
    }

    @Test func otherCommands() throws {
        #expect(try CommandLineParser.parse(["close", "--id", "sync"]) == .close(.id("sync")))
        #expect(try CommandLineParser.parse(["close", "--server-id", "7"]) == .close(.serverID(7)))
        #expect(try CommandLineParser.parse(["later"]) == .later(show: false, json: false, application: "toastkit"))
        #expect(
            try CommandLineParser.parse(["later", "--show", "--json"])
                == .later(show: true, json: true, application: "toastkit"))
        #expect(
            try CommandLineParser.parse(["later", "--app", "org.example.Fotos"])
                == .later(show: false, json: false, application: "org.example.Fotos"))
        #expect(try CommandLineParser.parse(["capabilities", "--json"]) == .capabilities(json: true))
        #expect(try CommandLineParser.parse(["server-info"]) == .serverInfo(json: false))
        #expect(try CommandLineParser.parse(["listen", "--json"]) == .listen(json: true))
    }

    @Test func backendComesBeforeTheCommand() throws {
        func global(_ arguments: [String]) throws(CommandFailure) -> (NotificationBackend, [String]) {
            let (backend, rest) = try CommandLineParser.globalOptions(arguments.map { Argument($0) })
            return (backend, rest.map(\.text))
        }
        #expect(try global(["send", "x"]) == (.automatic, ["send", "x"]))
        #expect(try global(["--backend", "portal", "send", "x"]) == (.portal, ["send", "x"]))
        #expect(try global(["--backend=notifications", "server-info"]) == (.notifications, ["server-info"]))
        #expect(
            try global(["--backend", "portal", "--backend", "auto", "capabilities"]) == (.automatic, ["capabilities"]))
        #expect(
            try global(["send", "--backend", "portal"]).1 == ["send", "--backend", "portal"], "only before the command")
        for (arguments, code, line) in [
            (["--backend"], ExitCode.usage, "toastkit: --backend: missing value (auto, notifications or portal)"),
            (
                ["--backend", "fax", "send"], .dataError,
                "toastkit: --backend fax: expected auto, notifications or portal"
            ),
            (["--backend=", "send"], .usage, "toastkit: --backend: missing value (auto, notifications or portal)"),
        ] {
            do {
                _ = try global(arguments)
                Issue.record("expected a failure for \(arguments)")
            } catch {
                #expect(error.code == code)
                #expect(error.line == line)
            }
        }
    }
}

@Suite struct FuzzRegressionTests {
    /// Found by the cli-parser fuzzer: an error that quotes an argument with a newline was two lines.
    @Test(arguments: [
        ["\n"], ["send", "--status", "a\nb", "x"], ["close", "--id"], ["send", "-h", "int:x:a\nb", "t"],
    ])
    func errorsAreOneLineWhateverTheArgumentsHold(_ arguments: [String]) {
        do {
            _ = try CommandLineParser.parse(arguments)
            Issue.record("expected a failure for \(arguments)")
        } catch {
            #expect(error.code == .usage || error.code == .dataError)
            #expect(!error.line.contains("\n") && !error.line.contains("\r"), "\(error.line)")
        }
    }
}
