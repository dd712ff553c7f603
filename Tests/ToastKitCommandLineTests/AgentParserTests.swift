import Foundation
import TestSupport
import Testing
import ToastKit
import ToastKitAgent

@testable import ToastKitCommandLine

/// The agent's command lines, its config file, `--on-action` word splitting and the `Present` codec: pure, each
/// error with its exact line and code.
@Suite struct AgentParserTests {
    private func parse(_ arguments: String...) throws -> Invocation {
        try CommandLineParser.parse(arguments)
    }

    private func failure(_ arguments: String...) -> CommandFailure? {
        do {
            _ = try CommandLineParser.parse(arguments)
            return nil
        } catch {
            return error
        }
    }

    @Test func onActionIsSplitLikeAShellWordsButRunWithoutOne() throws {
        guard
            case .send(let options) = try parse(
                "send", "-A", "open=Abrir", "--on-action", #"open=xdg-open "/tmp/a b" 'it''s' c\ d $HOME"#, "T")
        else { throw CommandFailure(.software, "not send") }
        #expect(options.onAction["open"] == ["xdg-open", "/tmp/a b", "its", "c d", "$HOME"])
        #expect(!options.waits, "--on-action hands the actions to the agent: send does not wait")
        guard case .send(let shell) = try parse("send", "--tap", "go", "--shell", "--on-action", "go=echo $X | wc", "T")
        else { throw CommandFailure(.software, "not send") }
        #expect(shell.onAction["go"] == ["/bin/sh", "-c", "echo $X | wc"])
        guard case .send(let waiting) = try parse("send", "-w", "-A", "a=A", "--on-action", "a=true", "T") else {
            throw CommandFailure(.software, "not send")
        }
        #expect(waiting.waits, "--wait still waits")
    }

    @Test func onActionErrors() {
        #expect(
            failure("send", "--on-action", "x=true", "T")?.line
                == #"toastkit: --on-action x=true: no -A/--action or --tap has the id "x""#)
        #expect(
            failure("send", "-A", "x=X", "--on-action", "x", "T")?.line
                == "toastkit: --on-action x: expected ID=COMMAND")
        #expect(failure("send", "-A", "x=X", "--on-action", "x=", "T")?.code == .dataError)
        #expect(
            failure("send", "-A", "x=X", "--on-action", "x='open", "T")?.line
                == "toastkit: --on-action: unclosed ' in 'open")
        #expect(
            failure("send", "-A", "x=X", "--on-action", "x=a", "--on-action", "x=b", "T")?.line
                == #"toastkit: --on-action: more than one command for action "x""#)
        #expect(
            failure("send", "--shell", "T")?.line == "toastkit: --shell applies to --on-action commands; none is given")
        #expect(
            failure("send", "--no-agent", "-A", "x=X", "--on-action", "x=true", "T")?.line
                == "toastkit: --on-action needs the toast agent (its commands run after send exits); drop --no-agent")
    }

    @Test func waitListAndAgent() throws {
        #expect(try parse("wait", "--id", "job") == .wait(id: "job", json: false))
        #expect(try parse("wait", "--json", "--id=job") == .wait(id: "job", json: true))
        #expect(failure("wait")?.line == "toastkit: wait: missing --id ID; see toastkit wait --help")
        #expect(failure("wait", "--id", "")?.code == .dataError)
        #expect(try parse("list", "--json") == .list(json: true))
        #expect(try parse("agent") == .agent(AgentOptions()))
        #expect(
            try parse("agent", "--idle-timeout", "2.5", "--max-visible", "3", "--replace")
                == .agent(AgentOptions(idleTimeout: .milliseconds(2500), maxVisible: 3, replace: true)))
        #expect(
            failure("agent", "--max-visible", "0")?.line
                == "toastkit: --max-visible 0: expected a whole number from 1 to 10")
        #expect(
            failure("agent", "--idle-timeout", "-1")?.line
                == "toastkit: --idle-timeout -1: expected seconds or a duration (90s, 5m, 1h; 0 to stay until stopped)")
        #expect(try parse("agent", "--help") == .help(.agent))
        #expect(HelpText.page(for: .agent).contains("agent.conf"))
    }

    @Test func theConfigFileUnderTheOptions() throws {
        var settings = AgentSettings()
        try settings.read("# comment\n\n max-visible = 3 # inline\nidle-timeout=0\n", path: "/c")
        #expect(settings.maxVisible == 3)
        #expect(settings.idleTimeout == nil, "0: never exit when idle")
        var bad = AgentSettings()
        #expect(throws: AgentSettingsError(#"/c:2: unknown setting "colour" (max-visible, idle-timeout)"#)) {
            try bad.read("max-visible = 2\ncolour = red\n", path: "/c")
        }
        #expect(throws: AgentSettingsError(#"/c:1: expected key = value, got "max-visible""#)) {
            try bad.read("max-visible\n", path: "/c")
        }
        let folder = try Tools.makeTemporaryDirectory(prefix: "toastkit-config")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: "\(folder)/toastkit", withIntermediateDirectories: true)
        try "max-visible = 4\nidle-timeout = 30\n".write(
            toFile: "\(folder)/toastkit/agent.conf", atomically: true, encoding: .utf8)
        let resolved = try AgentSettings.resolve(
            AgentOptions(maxVisible: 2), environment: ["XDG_CONFIG_HOME": folder])
        #expect(resolved.maxVisible == 2, "the option wins")
        #expect(resolved.idleTimeout == .seconds(30), "the file's value")
        #expect(try AgentSettings.resolve(AgentOptions(), environment: [:]) == AgentSettings(), "no file: defaults")
    }

    @Test func aRequestSurvivesTheWireAndTheSaveFile() throws {
        var options = SendOptions(title: "Copia lista")
        options.id = "backup"
        options.message = .text("Tus fotos")
        options.status = .success
        options.icon = .path("/tmp/i.png")
        options.duration = .duration(.seconds(2.5))
        options.actions = [ActionOption(id: "open", label: "Abrir", confirmation: "Abierto")]
        options.tap = ActionOption(id: "default-go", label: "Ir")
        options.appName = "backup"
        options.urgency = .critical
        options.category = "transfer.complete"
        options.hints = [Hint(name: "x-count", value: .int32(5))]
        options.transient = true
        options.replaceID = 7
        var request = AgentRequest(options: options, onAction: ["open": ["xdg-open", "/tmp"]])
        request.awaitShown = true
        let decoded = try AgentRequest(request.dictionary)
        #expect(decoded == request)
        // What the journal and the schedules write (``SavedRequest``; they keep the toast's id beside it), read back.
        let saved = try JSONDecoder().decode(SavedRequest.self, from: JSONEncoder().encode(SavedRequest(request)))
        var back = try saved.request()
        back.options.id = request.options.id
        #expect(back == request)
    }
}

/// docs/agent.md describes the interface the agent serves.
@Suite struct AgentDocumentationTests {
    @Test func theDocumentQuotesTheIntrospectionDataAndEveryKey() throws {
        let document = try String(
            contentsOfFile: "\(NotificationEnvironment.repositoryRoot)/docs/agent.md", encoding: .utf8)
        #expect(document.contains("```xml\n\(AgentInterface.introspection)\n```"), "the introspection data, verbatim")
        for key in AgentRequest.Key.all.sorted() {
            #expect(document.contains("| `\(key)` |"), "the key \(key) has a row")
        }
        for error in [
            AgentInterface.ErrorName.invalidToast, AgentInterface.ErrorName.unavailable,
            AgentInterface.ErrorName.unknownToast, AgentInterface.ErrorName.accessDenied,
            AgentInterface.ErrorName.stopping, AgentInterface.ErrorName.queueFull,
        ] {
            let name = error.rawValue.split(separator: ".").last.map(String.init) ?? error.rawValue
            #expect(document.contains("Error.\(name)"), "the error \(error)")
        }
    }

    @Test func theStartLimitIsTwoSecondsUnlessTheEnvironmentSaysOtherwise() {
        #expect(AgentClient.startLimit([:]) == .seconds(2))
        #expect(AgentClient.startLimit(["TOASTKIT_AGENT_START_TIMEOUT": "7.5"]) == .milliseconds(7500))
        for ignored in ["", "0", "-3", "nan", "inf", "soon"] {
            #expect(AgentClient.startLimit(["TOASTKIT_AGENT_START_TIMEOUT": ignored]) == .seconds(2), "\(ignored)")
        }
        #expect(AgentClient.startLimit(["TOASTKIT_AGENT_START_TIMEOUT": "1e9"]) == .seconds(3600))
    }
}
