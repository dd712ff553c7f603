import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// What the tool prints for people: control characters never reach the terminal raw, a lost write is an error, and
/// each outcome says what it is.
@Suite(.timeLimit(.minutes(2))) struct OutputTests {

    /// The bytes a terminal acts on: C0 controls (ESC, newline, carriage return…), DEL and the C1 controls.
    private func hasRawControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
        }
    }

    // MARK: - Item 12: control characters

    @Test func listenEscapesHintKeysAndValues() async throws {
        try await withFakeServer(.init(unicastSignals: false)) { environment, _ in
            let env = environment.environment
            let listener = try ToolProcess.start([Array("listen".utf8)], environment: env)
            _ = await listener.nextErrorLine()
            let sent = try await toastkit(
                ["send", "-h", "string:x\u{1B}[2J\nnotify id=7:v\u{9B}1m", "Hola"], environment: env)
            #expect(sent.status == 0, "\(sent.error)")
            let line = await listener.nextLine()
            listener.signal(SIGINT)
            let rest = await listener.finish()
            #expect(rest.output.isEmpty, "one line per Notify, nothing forged after it: \(rest.output)")
            #expect(!hasRawControl(line), "\(line.debugDescription)")
            #expect(line.contains(#"x\u{1B}[2J\nnotify id=7="v\u009b1m""#), "\(line)")
        }
    }

    @Test func laterListAndShowEscapeTitlesAndIDs() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            let title = "Rojo\u{1B}[31m\r\nfalso\u{9B}"
            let waiting = try ToolProcess.start(
                ["send", "-p", "-d", "indefinite", "-A", "later", "--id", "x\u{7}y", title].map { Array($0.utf8) },
                environment: env)
            let notification = try await server.nextNotification()
            _ = await waiting.nextLine()
            try server.emitActionInvoked(id: notification.id, key: "later")
            let deferred = await waiting.finish()
            #expect(deferred.status == 5, "\(deferred.error)")

            let list = try await toastkit(["later"], environment: env)
            #expect(list.status == 0, "\(list.error)")
            #expect(!hasRawControl(list.output), "\(list.output.debugDescription)")
            #expect(list.lines.count == 2, "one line and the final newline: \(list.output.debugDescription)")
            #expect(list.output.hasPrefix("x\\u{07}y\tnormal\t"))
            #expect(list.output.hasSuffix("\tRojo\\u{1B}[31m\\r\\nfalso\\u{9B}\n"))

            // The re-shown toast stays with `later --show` until it is answered: Later again, here.
            let showing = try ToolProcess.start(["later", "--show"].map { Array($0.utf8) }, environment: env)
            let again = try await server.nextNotification()
            let presented = await showing.nextLine()
            #expect(!hasRawControl(presented), "\(presented.debugDescription)")
            #expect(presented.hasSuffix("\tRojo\\u{1B}[31m\\r\\nfalso\\u{9B}"))
            try server.emitActionInvoked(id: again.id, key: "later")
            let show = await showing.finish()
            #expect(show.status == 0, "\(show.error)")
            #expect(show.output == "x\\u{07}y\tlater\n", "the chosen action's line escapes the id too")
        }
    }

    @Test func serverInfoCapabilitiesAndErrorsEscapeWhatTheServerSays() async throws {
        let options = FakeNotificationServer.Options(
            capabilities: ["body", "x-\u{1B}]0;owned\u{7}"], name: "evil\u{1B}[2J\u{9B}H")
        try await withFakeServer(options) { environment, _ in
            let env = environment.environment
            let info = try await toastkit(["server-info"], environment: env)
            #expect(info.status == 0)
            #expect(!hasRawControl(info.output), "\(info.output.debugDescription)")
            #expect(info.lines.first == "name: evil\\u{1B}[2J\\u{9B}H")
            let capabilities = try await toastkit(["capabilities"], environment: env)
            #expect(!hasRawControl(capabilities.output), "\(capabilities.output.debugDescription)")
            #expect(capabilities.lines.contains("x-\\u{1B}]0;owned\\u{07}"))
            // A value the person typed, echoed in an error: C1 controls are escaped as C0 ones are.
            let status = try await toastkit(["send", "-s", "a\u{9B}31m", "T"], environment: env)
            #expect(status.status == 65)
            #expect(!hasRawControl(status.error), "\(status.error.debugDescription)")
            #expect(status.error.hasPrefix("toastkit: -s/--status a\\u{9B}31m: unknown status"))
        }
    }

    // MARK: - Item 13: a lost write is an error

    /// Runs `toastkit` with standard output on /dev/full (every write fails with ENOSPC); returns the exit status
    /// and stderr.
    private func runIntoFullDevice(_ arguments: [String], environment: [String: String]) throws -> (Int32, String) {
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        guard full >= 0 else {
            throw TestEnvironmentError("cannot open /dev/full: \(String(cString: strerror(errno)))")
        }
        defer { close(full) }
        return try run(arguments, standardOutput: full, environment: environment)
    }

    /// Runs `toastkit` with standard output on `descriptor`; returns the exit status and stderr.
    private func run(_ arguments: [String], standardOutput descriptor: Int32, environment: [String: String]) throws
        -> (Int32, String)
    {
        let stderr = try PipePair()
        let child = try ChildProcess.spawn(
            ToolProcess.binary, arguments, environment: environment,
            fileDescriptors: [1: descriptor, 2: stderr.writeEnd])
        stderr.closeWriteEnd()
        let error = String(decoding: stderr.readAll(), as: UTF8.self)
        return (child.wait(), error)
    }

    @Test func outputThatCannotBeWrittenIsAnIOError() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            let printID = try await onOwnThread {
                try self.runIntoFullDevice(["send", "-p", "Hola"], environment: env)
            }
            #expect(printID.0 == 74, "\(printID.1)")
            #expect(printID.1 == "toastkit: cannot write to standard output: No space left on device\n")
            #expect(server.notifications.count == 1, "the toast was shown; its id was lost")

            let quiet = try await onOwnThread { try self.runIntoFullDevice(["send", "Hola"], environment: env) }
            #expect(quiet.0 == 0, "nothing to print, nothing lost: \(quiet.1)")

            let json = try await onOwnThread {
                try self.runIntoFullDevice(["send", "--wait", "--json", "-d", "0.2", "Hola"], environment: env)
            }
            #expect(json.0 == 74, "\(json.1)")
            #expect(json.1.hasSuffix("toastkit: cannot write to standard output: No space left on device\n"))

            let version = try await onOwnThread { try self.runIntoFullDevice(["--version"], environment: env) }
            #expect(version.0 == 74)
        }
    }

    @Test func listenStopsWhenItsOutputIsGone() async throws {
        try await withFakeServer(.init(unicastSignals: false)) { environment, _ in
            let env = environment.environment
            let stdout = try PipePair()
            let stderr = try PipePair()
            let child = try ChildProcess.spawn(
                ToolProcess.binary, ["listen"], environment: env,
                fileDescriptors: [1: stdout.writeEnd, 2: stderr.writeEnd])
            stdout.closeWriteEnd()
            stderr.closeWriteEnd()
            #expect(stderr.readLine() == "toastkit: listening for notifications on the session bus (Ctrl-C stops)")
            // The reader goes away (as `toastkit listen | head -1` after one line); the next line cannot be written.
            shutdown(stdout.readEnd, Int32(SHUT_RD))
            let sent = try await toastkit(["send", "Hola"], environment: env)
            #expect(sent.status == 0)
            // A watchdog, so a tool that never notices keeps this test from hanging.
            let watchdog = Task {
                try await Task.sleep(for: .seconds(20))
                child.signal(SIGKILL)
            }
            let status = try await onOwnThread { child.wait() }
            watchdog.cancel()
            #expect(status == 128 + SIGPIPE, "ended as a tool in a pipe ends: by SIGPIPE")
            #expect(String(decoding: stderr.readAll(), as: UTF8.self) == "", "and quietly")
        }
    }

    /// Runs `toastkit` with standard output on a real pipe whose reader has already gone (as `| head -2` after its
    /// lines); returns the exit status and stderr.
    private func runIntoClosedPipe(_ arguments: [String], environment: [String: String]) throws -> (Int32, String) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw TestEnvironmentError("cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        close(ends[0])
        defer { close(ends[1]) }
        return try run(arguments, standardOutput: ends[1], environment: environment)
    }

    @Test func aClosedReaderEndsTheCommandQuietly() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            for arguments in [["capabilities"], ["capabilities", "--json"], ["send", "-p", "Hola"], ["--help"]] {
                let (status, error) = try await onOwnThread { try self.runIntoClosedPipe(arguments, environment: env) }
                #expect(status == 128 + SIGPIPE, "\(arguments): \(error)")
                #expect(error == "", "\(arguments): no \"Broken pipe\" line")
            }
            #expect(server.notifications.map(\.summary) == ["Hola"], "the toast was shown; only its id had no reader")
        }
    }

    // MARK: - The language of the built-in labels (issue 23)

    @Test func langSetsTheBuiltInLabelsOnBothPathsAndTheLocaleIsTheFallback() async throws {
        try await withFakeServer { environment, server in
            var cLocale = environment.environment
            cLocale["LC_ALL"] = "C"
            cLocale["LANGUAGE"] = nil
            var agentCLocale = environment.agentEnvironment
            agentCLocale["LC_ALL"] = "C"
            agentCLocale["LANGUAGE"] = nil
            let cases: [(environment: [String: String], extra: [String], labels: [String], warning: String?)] = [
                (cLocale, ["--lang", "es"], ["Más tarde", "Descartar"], nil),
                (agentCLocale, ["--lang", "ja_JP.UTF-8", "-d", "30"], ["後で", "閉じる"], nil),
                (cLocale, [], ["Later", "Dismiss"], nil),
                (
                    cLocale, ["--lang", "tlh"], ["Later", "Dismiss"],
                    "toastkit: warning: --lang tlh: no built-in labels in that language (there are en, es, ja, "
                        + "zh-Hans, zh-Hant); the locale's are used"
                ),
            ]
            for (index, test) in cases.enumerated() {
                let process = try ToolProcess.start(
                    (["send", "-A", "later", "-A", "dismiss"] + test.extra + ["Tarea \(index)"]).map { Array($0.utf8) },
                    environment: test.environment)
                let notification = try await server.nextNotification()
                let labels = notification.arguments.actions.filter { $0.key != "default" }.map(\.label)
                #expect(labels == test.labels, "\(test.extra)")
                try server.emitActionInvoked(id: notification.id, key: "dismiss")
                let result = await process.finish()
                #expect(result.status == 0, "\(test.extra): \(result.error)")
                #expect(result.error == (test.warning.map { $0 + "\n" } ?? ""), "\(test.extra)")
            }
        }
    }
}
