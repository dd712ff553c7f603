import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

@testable import ToastKitCommandLine

/// `toastkit run` (issue 20, point 3): the command runs with its output passed through and its exit code kept; when
/// it ends a toast says what ran, how it ended, how long it took and the last lines, with an action that opens the
/// whole output after `run` has gone; `--min-seconds` holds back a quick one; signals sent to `run` reach the command;
/// `--pid` waits for a process already running.
@Suite(.timeLimit(.minutes(2))) struct RunCommandTests {
    @Test func theCommandsOutputAndStatusPassThroughAndItsToastSaysHowItEnded() async throws {
        try await withFakeServer { environment, server in
            // A stand-in for xdg-open that says what it was asked to open, through a FIFO the test reads.
            let bin = "\(environment.directory)/bin"
            let fifo = "\(environment.directory)/opened"
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            #expect(mkfifo(fifo, 0o600) == 0)
            // (Written with O_CLOEXEC: a child another test starts meanwhile must not keep it open for writing, or
            // running it fails with "Text file busy".)
            try AgentSafetyTests.writeExecutable("\(bin)/xdg-open", "#!/bin/sh\nprintf '%s\\n' \"$1\" > '\(fifo)'\n")
            var env = environment.agentEnvironment
            env["PATH"] = bin + ":" + (env["PATH"] ?? "/usr/bin:/bin")

            let run = try await toastkit(
                ["run", "--tail", "2", "--", "sh", "-c", "echo uno; echo dos; echo tres; exit 3"], environment: env)
            #expect(run.status == 3, "the command's own exit code: \(run.error)")
            #expect(run.output == "uno\ndos\ntres\n")
            #expect(run.error.isEmpty, "\(run.error)")
            let notify = try #require(server.notifications.last)
            #expect(notify.arguments.summary == "sh -c 'echo uno; echo dos; echo tres; exit 3'")
            #expect(notify.arguments.body.hasPrefix("exit 3 after "), "\(notify.arguments.body)")
            #expect(notify.arguments.body.hasSuffix("\ndos\ntres"), "\(notify.arguments.body)")
            #expect(notify.arguments.hints["image-path"] == .string("dialog-error"))
            #expect(notify.arguments.actions.map(\.key) == ["output"])
            #expect(notify.arguments.actions.map(\.label) == ["Show output"])

            // The output action, after `run` has exited: the agent opens the whole output.
            try server.emitActionInvoked(id: notify.id, key: "output")
            let opened = try await firstLine(ofFIFO: fifo, within: 60)
            let actions =
                (try? String(contentsOfFile: "\(environment.directory)/state/toastkit/actions.log", encoding: .utf8))
                ?? "(no actions.log)"
            try #require(!opened.isEmpty, "the output action opened nothing within 60 s; actions.log:\n\(actions)")
            #expect(opened.hasPrefix("\(environment.directory)/state/toastkit/runs/"), "\(opened)")
            #expect(try String(contentsOfFile: opened, encoding: .utf8) == "uno\ndos\ntres\n")
            var info = stat()
            #expect(stat(opened, &info) == 0 && info.st_mode & 0o777 == 0o600, "the log is private")

            let success = try await toastkit(["run", "--", "true"], environment: env)
            #expect(success.status == 0)
            #expect(server.notifications.last?.arguments.hints["image-path"] == .string("emblem-default"))
            #expect(server.notifications.last?.arguments.body.hasPrefix("exit 0 after ") == true)
        }
    }

    /// Issue 43: where run's output and errors go to one place (a terminal, `2>&1`), what is passed through, the log
    /// and the toast's last lines keep the order the command wrote in (they were all of stdout, then stderr).
    @Test func outputAndErrorsKeepTheirOrderWhereTheyGoToOnePlace() async throws {
        try await withFakeServer { environment, server in
            let script = "i=0; while [ $i -lt 200 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done"
            let process = try ToolProcess.start(
                ["-c", "exec \"$0\" run --tail 3 -- sh -c '\(script)' 2>&1", ToolProcess.binary].map {
                    Array($0.utf8)
                }, environment: environment.agentEnvironment, executable: "/bin/sh")
            let run = await process.finish()
            #expect(run.status == 0, "\(run.error)")
            let expected = (0..<200).map { "out\($0)\nerr\($0)\n" }.joined()
            #expect(run.output == expected)
            let runs = "\(environment.directory)/state/toastkit/runs"
            let logs = try FileManager.default.contentsOfDirectory(atPath: runs)
            #expect(logs.count == 1)
            #expect(try String(contentsOfFile: "\(runs)/\(logs[0])", encoding: .utf8) == expected)
            let notify = try #require(server.notifications.last)
            #expect(notify.arguments.body.hasSuffix("\nerr198\nout199\nerr199"), "\(notify.arguments.body)")
        }
    }

    /// Where run's output and errors go apart (`run … > log`, `run … 2>/dev/null`), the command's output reaches run's
    /// output and its errors run's errors, each whole and in its order; the log has every line of both, each stream's
    /// in its order (how the two interleave is what run read first: decision 0009).
    @Test func outputAndErrorsGoApartWhereRunsOutputAndErrorsGoApart() async throws {
        try await withFakeServer { environment, server in
            let script = "i=0; while [ $i -lt 200 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done"
            let run = try await toastkit(
                ["run", "--", "sh", "-c", script], environment: environment.agentEnvironment)
            #expect(run.status == 0, "\(run.error)")
            let outputs = (0..<200).map { "out\($0)" }
            let errors = (0..<200).map { "err\($0)" }
            #expect(run.output == outputs.map { $0 + "\n" }.joined())
            #expect(run.error == errors.map { $0 + "\n" }.joined())
            let runs = "\(environment.directory)/state/toastkit/runs"
            let logs = try FileManager.default.contentsOfDirectory(atPath: runs)
            try #require(logs.count == 1)
            let logged = try String(contentsOfFile: "\(runs)/\(logs[0])", encoding: .utf8)
            #expect(logged.hasSuffix("\n"))
            let lines = logged.split(separator: "\n").map(String.init)
            #expect(lines.count == 400)
            #expect(lines.filter { $0.hasPrefix("out") } == outputs)
            #expect(lines.filter { $0.hasPrefix("err") } == errors)
            #expect(server.notifications.last?.arguments.body.hasPrefix("exit 0 after ") == true)
        }
    }

    /// A command that writes 64 MiB (one line without an end, then a short one) leaves run's memory where 1 MiB
    /// leaves it, and the log has every byte. (No toast: what sending it costs would count in the peak; the toast's
    /// cut line is `theTailIsTheSameHoweverTheOutputIsCut`'s.)
    @Test func aChattyCommandsOutputGoesToTheLogNotIntoMemory() async throws {
        try await withFakeServer { environment, _ in
            let runs = "\(environment.directory)/state/toastkit/runs"
            /// run's peak resident memory (KiB, its own: ``PeakMemory``) and the size of its log, for `size` bytes of
            /// output.
            func run(writing size: Int) async throws -> (peak: Int, logged: Int) {
                let before = Set((try? FileManager.default.contentsOfDirectory(atPath: runs)) ?? [])
                let script = "head -c \(size) /dev/zero | tr '\\0' x; echo; echo last line"
                let peakMemory = try PeakMemory(file: "\(environment.directory)/peak-\(size)")
                // Output and errors to /dev/null (ChildProcess's default), as a cron job's `> /dev/null 2>&1`.
                let child = try ChildProcess.spawn(
                    peakMemory.time,
                    peakMemory.arguments + [ToolProcess.binary]
                        + ["run", "--min-seconds", "100000", "--", "sh", "-c", script],
                    environment: environment.agentEnvironment)
                #expect(try await onOwnThread { child.wait() } == 0)
                let peak = try peakMemory.kibibytes
                let logs = try FileManager.default.contentsOfDirectory(atPath: runs).filter { !before.contains($0) }
                try #require(logs.count == 1)
                var info = stat()
                #expect(stat("\(runs)/\(logs[0])", &info) == 0)
                return (peak, Int(info.st_size))
            }
            let small = try await run(writing: 1 << 20)
            let large = try await run(writing: 64 << 20)
            #expect(small.logged == (1 << 20) + 11 && large.logged == (64 << 20) + 11, "the whole output is logged")
            #expect(
                large.peak - small.peak < 16 << 10,
                "run's peak memory: \(small.peak) KiB for 1 MiB of output, \(large.peak) KiB for 64 MiB")
        }
    }

    /// What "one place" is: a terminal opened twice (two descriptors of one pty) and /dev/null twice are; a pipe and
    /// a terminal are not.
    @Test func aTerminalOrAFileGivenTwiceIsOnePlace() throws {
        let terminal = try openPseudoTerminal()
        defer { close(terminal.master) }
        let first = open(terminal.path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        let second = open(terminal.path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        let otherNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { for descriptor in [first, second, null, otherNull] { close(descriptor) } }
        let pipe = try PipePair()
        #expect(RunCommand.sameFile(first, second))
        #expect(RunCommand.sameFile(null, otherNull))
        #expect(!RunCommand.sameFile(first, pipe.writeEnd))
        #expect(!RunCommand.sameFile(first, null))
        #expect(!RunCommand.sameFile(first, -1), "a closed descriptor is no place")
    }

    /// The toast's last lines are the same however the output came in pieces (run reads it 64 KiB at a time, and
    /// looks only at the end of each piece).
    @Test func theTailIsTheSameHoweverTheOutputIsCut() {
        let text = Array("uno\n\n  dos  \ntres\r\n\u{1}cuatro\n\n\n\(String(repeating: "x", count: 500))\ncinco".utf8)
        let expected = ["cuatro", String(repeating: "x", count: 400), "cinco"]
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<300 {
            let tail = OutputTail(lines: 3)
            var cuts = Set((0..<(trial % 6)).map { _ in Int.random(in: 0...text.count, using: &generator) })
            if trial < text.count { cuts.insert(trial) }
            var start = 0
            for cut in cuts.sorted() + [text.count] where cut >= start {
                tail.append(text[start..<cut])
                start = cut
            }
            #expect(tail.lines == expected, "cut at \(cuts.sorted())")
        }
        let two = OutputTail(lines: 2)
        two.append(Array("a\nb\nc\n\n".utf8)[...])
        #expect(two.lines == ["b", "c"])
    }

    @Test func minSecondsHoldsBackTheToastOfAQuickCommand() async throws {
        try await withFakeServer { environment, server in
            let quick = try await toastkit(
                ["run", "--min-seconds", "3600", "true"], environment: environment.environment)
            #expect(quick.status == 0, "\(quick.error)")
            #expect(server.notifications.isEmpty, "no toast for a command quicker than --min-seconds")
            let missing = try await toastkit(
                ["run", "--", "no-such-command-here"], environment: environment.environment)
            #expect(missing.status == 127)
            #expect(missing.error == "toastkit: run: cannot run no-such-command-here: No such file or directory\n")
        }
    }

    @Test func aSignalSentToRunReachesTheCommandAndTheToastSaysSo() async throws {
        try await withFakeServer { environment, server in
            let process = try ToolProcess.start(
                ["run", "--", "sh", "-c", "echo started; exec sleep 30"].map { Array($0.utf8) },
                environment: environment.environment)
            #expect(await process.nextLine() == "started")
            process.signal(SIGTERM)
            let result = await process.finish()
            #expect(result.status == 143, "the command's end by SIGTERM: \(result.error)")
            let body = server.notifications.last?.arguments.body ?? ""
            #expect(body.hasPrefix("killed by SIGTERM after "), "\(body)")
        }
    }

    @Test func pidWaitsForAProcessThatIsAlreadyRunning() async throws {
        try await withFakeServer { environment, server in
            // A process that says it runs, once its own program runs: right after posix_spawn the kernel may not have
            // given it its name yet (the parent is released before the exec sets it), and run would read the name of
            // the test's thread.
            let input = try PipePair()
            let output = try PipePair()
            let sleeper = try ChildProcess.spawn(
                "/bin/sh", ["-c", "echo started; read line"], environment: [:],
                fileDescriptors: [0: input.readEnd, 1: output.writeEnd])
            output.closeWriteEnd()
            #expect(try await onOwnThread { output.readLine() } == "started")
            let process = try ToolProcess.start(
                ["run", "--pid", "\(sleeper.pid)"].map { Array($0.utf8) }, environment: environment.environment)
            sleeper.signal(SIGTERM)
            let result = await process.finish()
            _ = sleeper.wait()
            #expect(result.status == 0, "\(result.error)")
            let notify = try #require(server.notifications.last)
            #expect(notify.arguments.summary == "sh (\(sleeper.pid))")
            #expect(notify.arguments.body.hasPrefix("ended after "), "\(notify.arguments.body)")
            let gone = try await toastkit(["run", "--pid", "\(sleeper.pid)"], environment: environment.environment)
            #expect(gone.status == 65)
            #expect(gone.error == "toastkit: run: no process \(sleeper.pid)\n")
        }
    }

    @Test func theCommandStartsAtTheFirstWordThatIsNotAnOption() throws {
        func parse(_ words: [String]) throws -> Invocation { try CommandLineParser.parse(words) }
        guard case .run(let plain) = try parse(["run", "--tail", "5", "make", "-j4", "--help"]) else {
            Issue.record("not a run")
            return
        }
        #expect(plain.command.map { String(decoding: $0, as: UTF8.self) } == ["make", "-j4", "--help"])
        #expect(plain.tail == 5)
        guard case .run(let dashed) = try parse(["run", "-a", "CI", "--", "-weird-name"]) else {
            Issue.record("not a run")
            return
        }
        #expect(dashed.command.map { String(decoding: $0, as: UTF8.self) } == ["-weird-name"])
        #expect(dashed.appName == "CI")
        #expect(try parse(["run", "--help"]) == .help(.run))
        #expect(throws: CommandFailure.self) { try parse(["run", "--pid", "7", "ls"]) }
        #expect(throws: CommandFailure.self) { try parse(["run", "--tail", "99", "ls"]) }
    }
}
