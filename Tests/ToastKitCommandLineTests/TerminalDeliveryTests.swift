import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

@testable import ToastKitCommandLine

/// Toasts through the terminal's escape codes (issue 20 §2): the exact bytes of each code, the rule that picks one,
/// and the real binary writing them to its controlling terminal — a pseudo-terminal whose other end the test reads.
@Suite(.timeLimit(.minutes(2))) struct TerminalDeliveryTests {
    private typealias Code = TerminalDelivery.TerminalCode

    private func encoded(
        _ title: String, _ body: String?, _ code: Code, critical: Bool = false, id: String = "job-1", tmux: Bool = false
    ) -> String {
        String(
            decoding: TerminalDelivery.encode(
                title: title, body: body, critical: critical, id: id, code: code, tmux: tmux), as: UTF8.self)
    }

    @Test func eachCodeIsWrittenAsItsTerminalReadsIt() {
        // kitty: title then body, base64 (e=1), one identifier, d=0 until the last part.
        #expect(
            encoded("Build", "3 errors", .osc99, critical: true)
                == "\u{1B}]99;i=job-1:d=0:e=1:p=title:u=2;QnVpbGQ=\u{1B}\\\u{1B}]99;i=job-1:d=1:e=1:p=body;MyBlcnJvcnM=\u{1B}\\"
        )
        #expect(
            encoded("Só título", nil, .osc99, id: "a b/ñ") == "\u{1B}]99;i=ab:d=1:e=1:p=title;U8OzIHTDrXR1bG8=\u{1B}\\")
        // urxvt, VTE, foot, WezTerm: a ";" in the title would start the body.
        #expect(encoded("a;b", "línea 1\nlínea 2", .osc777) == "\u{1B}]777;notify;a,b;línea 1 línea 2\u{1B}\\")
        // iTerm2: one text; a leading number would read as ConEmu's "9;4" progress report.
        #expect(encoded("Build", "done", .osc9) == "\u{1B}]9;Build: done\u{1B}\\")
        #expect(encoded("4;1 percent", nil, .osc9) == "\u{1B}]9; 4;1 percent\u{1B}\\")
        #expect(encoded("Build", "done", .plain) == "\u{07}Build: done\r\n")
        // tmux passes on what it gets wrapped, every ESC doubled.
        #expect(encoded("T", nil, .osc9, tmux: true) == "\u{1B}Ptmux;\u{1B}\u{1B}]9;T\u{1B}\u{1B}\\\u{1B}\\")
    }

    @Test func textCannotEndTheCodeOrStartAnother() {
        let hostile = "ok\u{1B}]0;pwned\u{07}\u{9B}2J\u{7F}"
        for code in [Code.osc777, .osc9, .plain] {
            let bytes = encoded(hostile, hostile, code)
            #expect(!bytes.dropFirst(2).dropLast(2).contains("\u{1B}"), "\(code): \(bytes.debugDescription)")
            #expect(bytes.contains("ok]0;pwned2J"), "\(code): \(bytes.debugDescription)")
            #expect(!bytes.unicodeScalars.contains("\u{9B}"))
        }
        let long = String(repeating: "é", count: 5000)
        let cut = encoded(long, nil, .osc9)
        #expect(cut.utf8.count <= TerminalDelivery.textLimit + 8 && cut.hasSuffix("…\u{1B}\\"))
    }

    @Test func theCodeFollowsTheTerminal() {
        func code(_ variables: [String: String]) -> Code { Code.forTerminal { variables[$0] } }
        #expect(code(["TERM": "xterm-kitty"]) == .osc99)
        #expect(code(["TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"]) == .osc99)
        #expect(code(["TERM": "xterm-ghostty"]) == .osc9)
        #expect(
            code(["TERM": "xterm-256color", "LC_TERMINAL": "iTerm2"]) == .osc9, "iTerm2 sends LC_TERMINAL over SSH")
        #expect(code(["TERM": "xterm-256color", "WT_SESSION": "x"]) == .osc9)
        #expect(code(["TERM": "foot"]) == .osc777)
        #expect(code(["TERM": "xterm-256color", "VTE_VERSION": "7006"]) == .osc777)
        #expect(code(["TERM": "wezterm"]) == .osc777)
        #expect(code(["TERM": "rxvt-unicode-256color"]) == .osc777)
        #expect(code(["TERM": "xterm-256color"]) == .plain)
        #expect(code(["TERM": "linux"]) == .plain)
    }

    // MARK: - The binary on a pseudo-terminal

    /// Runs `toastkit arguments` with a pseudo-terminal as its controlling terminal (util-linux `setsid --ctty`,
    /// standard input on the terminal's far end), and returns what reached the terminal, standard output and the
    /// exit status.
    private func onTerminal(
        _ arguments: [String], environment: [String: String]
    ) async throws -> (terminal: [UInt8], output: String, status: Int32) {
        let (master, name) = try openPseudoTerminal()
        defer { close(master) }
        let slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(slave >= 0)
        // Raw: the bytes arrive as written (no "\n" → "\r\n").
        var settings = termios()
        tcgetattr(slave, &settings)
        cfmakeraw(&settings)
        tcsetattr(slave, TCSANOW, &settings)
        let stdout = try PipePair()
        let child = try ChildProcess.spawn(
            "/usr/bin/setsid", ["--ctty", ToolProcess.binary] + arguments, environment: environment,
            fileDescriptors: [0: slave, 1: stdout.writeEnd])
        close(slave)
        stdout.closeWriteEnd()
        // Off the pool: the process may talk to a server in this test process.
        let (output, status) = try await onOwnThread {
            (String(decoding: stdout.readAll(), as: UTF8.self), child.wait())
        }
        // The child has ended: what it wrote is in the terminal's buffer (bounded read, nothing blocks).
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        while poll(&poller, 1, 0) > 0, poller.revents & Int16(POLLIN) != 0 {
            let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            received += buffer.prefix(count)
        }
        return (received, output, status)
    }

    /// An environment with no session bus anywhere (cron's, over SSH): no address, no runtime folder, nothing at the
    /// place logind uses.
    private func noBus(_ directory: String, term: String) -> [String: String] {
        [
            "HOME": directory, "PATH": "/usr/bin:/bin", "TERM": term, "LANGUAGE": "en",
            "TOASTKIT_USER_RUNTIME_ROOT": "\(directory)/run-user",
        ]
    }

    @Test func overSSHWithoutABusTheToastGoesToTheTerminal() async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-terminal")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let kitty = try await onTerminal(
            ["send", "-p", "--id", "build", "Build", "<b>3</b> errors"],
            environment: noBus(directory, term: "xterm-kitty"))
        #expect(kitty.status == 0)
        #expect(kitty.output == "0\n", "no server id: 0, which -r takes as \"a new one\"")
        #expect(
            String(decoding: kitty.terminal, as: UTF8.self)
                == "\u{1B}]99;i=build:d=0:e=1:p=title;QnVpbGQ=\u{1B}\\\u{1B}]99;i=build:d=1:e=1:p=body;MyBlcnJvcnM=\u{1B}\\",
            "markup is taken out, as the server would")

        let foot = try await onTerminal(
            ["send", "--json", "-s", "error", "Copia", "falló"], environment: noBus(directory, term: "foot"))
        #expect(foot.status == 0)
        #expect(String(decoding: foot.terminal, as: UTF8.self) == "\u{1B}]777;notify;Copia;falló\u{1B}\\")
        #expect(foot.output.hasSuffix(#","terminal":"777"}"# + "\n"), "\(foot.output)")

        let unknown = try await onTerminal(["send", "Hola"], environment: noBus(directory, term: "vt100"))
        #expect(unknown.status == 0)
        #expect(
            unknown.terminal == Array("\u{07}Hola\r\n".utf8), "a terminal that may lack every code: a bell and a line")
    }

    @Test func askedForItTheToastGoesToTheTerminalEvenWithABus() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let server = try await FakeNotificationServer.start(on: environment.bus)
        defer { server.stop() }
        var env = environment.environment
        env["TERM"] = "xterm-256color"
        let run = try await onTerminal(["send", "--terminal-code", "9", "Listo"], environment: env)
        #expect(run.status == 0)
        #expect(String(decoding: run.terminal, as: UTF8.self) == "\u{1B}]9;Listo\u{1B}\\")
        #expect(server.notifications.isEmpty, "nothing went to the bus")
        let plain = try await onTerminal(["send", "Al servidor"], environment: env)
        #expect(plain.status == 0 && plain.terminal.isEmpty, "with a bus, the server shows it")
        #expect(server.notifications.map(\.summary) == ["Al servidor"])
    }

    @Test func withoutATerminalOrWithWhatNeedsAnAnswerItIsNotTheTerminal() async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-terminal")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A session of its own without a terminal (cron): the bus's own error, as before.
        let stdout = try PipePair(), stderr = try PipePair()
        let child = try ChildProcess.spawn(
            "/usr/bin/setsid", [ToolProcess.binary, "send", "Backup"],
            environment: noBus(directory, term: "xterm-kitty"),
            fileDescriptors: [1: stdout.writeEnd, 2: stderr.writeEnd])
        stdout.closeWriteEnd()
        stderr.closeWriteEnd()
        let (error, status) = try await onOwnThread {
            (String(decoding: stderr.readAll(), as: UTF8.self), child.wait())
        }
        #expect(status == 69)
        #expect(error.hasPrefix("toastkit: cannot reach the session bus: no session bus"), "\(error)")

        for arguments in [
            ["--terminal", "--wait"], ["--terminal", "-A", "ok=OK"], ["--terminal-code", "777", "--tap", "open"],
        ] {
            let run = try await toastkit(["send"] + arguments + ["Hola"], environment: noBus(directory, term: "foot"))
            #expect(run.status == 64, "\(arguments)")
            #expect(
                run.error.contains("cannot be used with --terminal: the terminal reports nothing back"), "\(run.error)")
        }
        let bad = try await toastkit(
            ["send", "--terminal-code", "52", "x"], environment: noBus(directory, term: "foot"))
        #expect(
            bad.status == 64 && bad.error == "toastkit: --terminal-code 52: expected 99, 777, 9 or plain\n",
            "\(bad.error)")
    }
}
