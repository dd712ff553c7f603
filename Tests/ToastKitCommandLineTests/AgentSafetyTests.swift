import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// The agent attacked and crashed on purpose (issue 18, points 3–5), end to end on dunst: a kill at any moment after
/// `send` returns loses nothing, a crash at each step of `Present` (fail points) leaves one toast, a call that races
/// the idle exit is answered, and `--on-action` runs as its sender asked. The saved toasts: AgentSavedFileTests.
@Suite(.timeLimit(.minutes(3))) struct AgentSafetyTests {
    private func withDesktop(_ body: (NotificationEnvironment, BusWatcher) async throws -> Void) async throws {
        try await NotificationEnvironment.withWatched(.dunst, body)
    }

    /// Writes an executable script with a descriptor no child process can inherit: Foundation's atomic write opens
    /// its temporary file without `O_CLOEXEC`, and a process another test spawns at that moment keeps it open for
    /// writing, so running the script then fails with "Text file busy" (seen once in a parallel run).
    static func writeExecutable(_ path: String, _ text: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
    }

    /// Starts `toastkit agent` with `environment` and returns once it owns its name.
    private func startAgent(_ environment: [String: String], _ bus: DBusConnection) async throws -> ToolProcess {
        let changes = try await bus.bus.nameOwnerChanges(of: "org.toastkit.Agent1")
        let agent = try ToolProcess.start([Array("agent".utf8)], environment: environment)
        _ = try await Deadline.run(within: .seconds(30), "the agent's name") {
            for try await change in changes where change.newOwner != nil { return true }
            return nil
        }
        return agent
    }

    /// Before: the save came 50 ms after the change, and a SIGKILL 0–40 ms after `send` returned lost 4–5 toasts of
    /// 6. Now each `send` returns once its toast is on disk: killed at once after the last one, nothing is lost.
    @Test func aKillRightAfterSendReturnsLosesNoToast() async throws {
        try await withDesktop { desktop, _ in
            let env = desktop.agentEnvironment
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            let first = try await toastkit(["send", "--id", "front", "-d", "indefinite", "Delante"], environment: env)
            #expect(first.status == 0 && first.error.isEmpty, "\(first.error)")
            let pid = try await bus.agentPID()
            for index in 1...5 {
                // A minute each: none may end by itself before the kill, however loaded the machine.
                let queued = try await toastkit(
                    ["send", "--id", "q\(index)", "-d", "60", "Cola \(index)"], environment: env)
                #expect(queued.status == 0 && queued.error.isEmpty, "\(queued.error)")
            }
            try await killAgent(pid, bus)
            // The next command's agent adopts all six.
            let next = try await toastkit(["send", "--id", "z", "-d", "indefinite", "Después"], environment: env)
            #expect(next.status == 0 && next.error.isEmpty, "\(next.error)")
            let list = try await toastkit(["list"], environment: env)
            let ids = list.lines.compactMap { $0.split(separator: "\t").first.map(String.init) }
            #expect(
                Set(ids) == ["front", "q1", "q2", "q3", "q4", "q5", "z"], "\(list.output)\n\(desktop.agentFiles)")
            #expect(list.lines.first?.hasPrefix("front\tfront\t") == true, "\(list.output)")
        }
    }

    /// A crash at each step of `Present` (the fail point `TOASTKIT_FAILPOINT_AGENT_CRASH`): after the write-ahead
    /// record, and after the server's id is saved but before the answer. `send` calls the next agent, which adopts
    /// the saved toast; the call made again replaces it. One toast, on screen once, and `send` exits 0.
    @Test(arguments: ["after-write-ahead", "before-reply"])
    func aCrashAtEachStepOfPresentLeavesOneToast(step: String) async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.agentEnvironment
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            var crashing = env
            crashing["TOASTKIT_FAILPOINT_AGENT_CRASH"] = step
            let agent = try await startAgent(crashing, bus)
            let send = try await toastkit(["send", "--id", "x", "-d", "indefinite", "Sobrevive"], environment: env)
            let crashed = await agent.finish()
            #expect(crashed.status == 128 + SIGKILL, "the first agent died at \(step)")
            #expect(send.status == 0 && send.error.isEmpty, "\(step): \(send.status) \(send.error)")
            let list = try await toastkit(["list"], environment: env)
            let lines = list.lines.filter { !$0.isEmpty }
            #expect(lines.count == 1 && lines[0].hasPrefix("x\tfront\t"), "\(list.output)")
            // Every Notify after the first replaced it in place: one notification on screen.
            let (firstNotify, _) = try await watcher.nextNotifyAndReply()
            #expect(firstNotify.summary == "Sobrevive")
            try await desktop.waitUntilDisplayed(1)
            #expect(try await desktop.displayedCount() == 1, "one notification on screen")
        }
    }

    /// Before: a `send` that came as the agent exited for being idle was lost (16 of 150 at an idle time of 1 ms).
    /// Now a call is counted from the moment it arrives, the exit answers `Stopping` to any call after it is
    /// decided, and `send` calls the next agent.
    @Test func sendsThatRaceTheIdleExitAreAllAnswered() async throws {
        try await withDesktop { desktop, _ in
            let env = desktop.agentEnvironment
            try desktop.configureAgent("idle-timeout = 0.001\n")
            let results = try await withThrowingTaskGroup(of: [ToolProcess.Result].self) { group in
                for stream in 0..<4 {
                    group.addTask {
                        var results: [ToolProcess.Result] = []
                        for index in 0..<12 {
                            results.append(
                                try await toastkit(
                                    ["send", "-d", "0.02", "Carrera \(stream).\(index)"], environment: env))
                        }
                        return results
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let failed = results.filter { $0.status != 0 || !$0.error.isEmpty }
            #expect(results.count == 48)
            #expect(failed.isEmpty, "\(failed.map { "\($0.status): \($0.error)" })\n\(desktop.agentFiles)")
        }
    }

    /// Before: with the agent stopped (SIGSTOP), `send --wait -d 2` exited 3 after 16 s, and Ctrl-C after 16 s: a
    /// wait for the unanswered `Present` did not heed its limit. Now the toast's time plus the 1 s close grace holds,
    /// and Ctrl-C is answered within the grace.
    ///
    /// The wait is timed from its `Present` on the bus, not from the process's start: on a loaded machine starting
    /// `toastkit` alone took seconds, and a run failed at 6.27 s for that.
    @Test func waitLimitsHoldWhileTheAgentIsStopped() async throws {
        try await withDesktop { desktop, _ in
            let env = desktop.agentEnvironment
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            _ = try await toastkit(["send", "-d", "0.1", "Arranca"], environment: env)
            let pid = try await bus.agentPID()
            let presents = try await BusWatcher(
                bus: desktop.bus.address, rules: [MatchRule(kind: .methodCall, interface: AgentInterface.interface)])
            defer { presents.stop() }
            Glibc.kill(pid, SIGSTOP)
            defer { Glibc.kill(pid, SIGCONT) }
            let waiting = try ToolProcess.start(
                ["send", "--wait", "--json", "-d", "1", "Colgado"].map { Array($0.utf8) }, environment: env)
            waiting.feed(nil)
            _ = try await presents.next("send's Present to the stopped agent") { $0.member == "Present" }
            let started = ContinuousClock.now
            let expired = await waiting.finish()
            let took = ContinuousClock.now - started
            #expect(expired.status == 3, "\(expired.error)")
            #expect(
                expired.output
                    == #"{"event":"closed","id":"\#(expired.output.jsonID)","server_id":null,"reason":"expired"}"#
                    + "\n")
            // 1 s + 0.1 s + the 1 s grace, with room for a loaded machine; it was 16 s.
            #expect(took < .seconds(6), "ended \(took) after the start")
            let interrupted = try ToolProcess.start(
                ["send", "--wait", "-d", "30", "Colgado otra vez"].map { Array($0.utf8) }, environment: env)
            let interruptStart = ContinuousClock.now
            interrupted.signal(SIGINT)
            let ended = await interrupted.finish()
            #expect(ended.status == 130, "\(ended.error)")
            #expect(ContinuousClock.now - interruptStart < .seconds(5), "Ctrl-C within the grace")
        }
    }

    /// A Ctrl-C at any moment of `send --wait`'s start ends it with 130: handled, or by the default action. Before,
    /// one that came in the moment the signal watching was set up was lost (the signal was set to SIG_IGN before
    /// Dispatch installed its handler, a moment after the source is resumed), and the command waited out its limit;
    /// seen once in a full run (`waitLimitsHoldWhileTheAgentIsStopped`: 69 after 11 s). That window is too short for
    /// this sweep to hit reliably; a standalone program that signals itself right after `resume()` lost the signal in
    /// 3 of 5 tries with SIG_IGN first and in none without.
    @Test func aCtrlCRightAfterTheStartIsNeverLost() async throws {
        try await withDesktop { desktop, _ in
            let env = desktop.agentEnvironment
            _ = try await toastkit(["send", "-d", "0.1", "Arranca"], environment: env)
            for round in 0..<12 {
                let waiting = try ToolProcess.start(
                    ["send", "--wait", "-d", "30", "Interrumpido \(round)"].map { Array($0.utf8) }, environment: env)
                // Spread over the start-up: at once, and after growing pauses.
                if round > 0 { try await Task.sleep(for: .milliseconds(round * 3)) }
                waiting.signal(SIGINT)
                let ended = await waiting.finish()
                #expect(ended.status == 130, "round \(round): \(ended.status) \(ended.error)")
            }
        }
    }

    /// Before: a `Wait` called right after the action answered UnknownToast in 24–37 of 40 tries with `--on-action`:
    /// the toast had left the center and its end had not reached the agent. Now it waits for that end. Each `Wait`
    /// is called at once after the click (odd rounds) or the moment the agent announces the action (even rounds).
    /// (The old window was not hit here on an idle machine; the fix is in `wait`: a toast the center no longer holds
    /// is awaited through the center's event delivery.)
    @Test func waitRightAfterAnActionFindsTheToast() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.agentEnvironment
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            let events = try await bus.signals(
                matching: MatchRule(
                    sender: "org.toastkit.Agent1", interface: "org.toastkit.Agent1", member: "Event",
                    path: "/org/toastkit/Agent1"))
            var iterator = events.makeAsyncIterator()
            for index in 0..<10 {
                let id = "w\(index)"
                let sent = try await toastkit(
                    ["send", "--id", id, "-A", "go=Ir", "--on-action", "go=true", "-d", "indefinite", "Clic \(index)"],
                    environment: env)
                #expect(sent.status == 0 && sent.error.isEmpty, "\(sent.error)")
                _ = try await watcher.nextNotifyAndReply()
                try await desktop.waitUntilDisplayed(1)
                try await desktop.dunstctl("action", "0")
                while index.isMultiple(of: 2), let message = try await iterator.next() {
                    let values = try message.arguments("ssa{sv}")
                    if values[0].stringValue == id, values[1].stringValue == "action" { break }
                }
                let reply = try await bus.call(
                    destination: "org.toastkit.Agent1", path: "/org/toastkit/Agent1", interface: "org.toastkit.Agent1",
                    member: "Wait", arguments: [.string(id)])
                let outcome = try reply.arguments("sa{sv}")
                #expect(outcome[0].stringValue == "action", "\(id): \(outcome)")
                #expect(outcome[1].variantDictionaryValue?["action"]?.stringValue == "go")
                try await desktop.waitUntilDisplayed(0)
            }
        }
    }

    /// Before: each running `--on-action` command held a thread of the agent (197 threads for 197 commands). Now one
    /// reaper collects them all and at most 16 run at once; the rest wait their turn, and the log says so.
    @Test func longRunningCommandsNeitherHoldThreadsNorRunBeyondTheBound() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.agentEnvironment
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            let count = 20
            for index in 0..<count {
                let sent = try await toastkit(
                    [
                        "send", "--id", "c\(index)", "-A", "go=Ir", "--on-action", "go=sleep 20.0\(index)", "-d",
                        "indefinite", "Tarea \(index)",
                    ], environment: env)
                #expect(sent.status == 0 && sent.error.isEmpty, "\(sent.error)")
                _ = try await watcher.nextNotifyAndReply()
            }
            let pid = try await bus.agentPID()
            defer {
                // On a thread of its own: a defer cannot await, and a test's task never waits on the pool.
                let environment = desktop.environment
                Thread {
                    for index in 0..<count {
                        _ = try? Tools.run("pkill", ["-f", "sleep 20.0\(index)$"], environment: environment)
                    }
                }.start()
            }
            for remaining in stride(from: count, to: 0, by: -1) {
                try await desktop.waitUntilDisplayed(remaining)
                try await desktop.dunstctl("action", "0")
            }
            try await desktop.waitUntilDisplayed(0)
            let log = "\(desktop.directory)/state/toastkit/actions.log"
            let text = try await Deadline.run(within: .seconds(10), "the commands started and queued") {
                () -> String? in
                while true {
                    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                    if text.components(separatedBy: "\n").filter({ $0.contains(": sleep 20.0") }).count == 16,
                        text.components(separatedBy: "\n").filter({ $0.contains("commands run already") }).count == 4
                    {
                        return text
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(text.contains("waits, 16 commands run already"))
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let threads =
                status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
                .flatMap { Int($0.split(separator: "\t").last ?? "") } ?? 0
            #expect(threads > 0 && threads < 16, "the agent has \(threads) threads with 16 commands running")
        }
    }

    /// A journal that cannot be written (here its path has become a folder) costs no toast: it is shown, `send` exits
    /// 0, and says in one warning that a restarted agent would not know it.
    @Test func aToastThatCannotBeSavedIsShownWithAWarning() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.agentEnvironment
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            // Indefinite: shown by the agent (a timed toast would be shown by `send` itself and taken over).
            _ = try await toastkit(["send", "--id", "a", "-d", "indefinite", "Primero"], environment: env)
            _ = try await watcher.nextNotifyAndReply()
            _ = try await toastkit(["close", "--id", "a"], environment: env)
            _ = try await toastkit(["wait", "--id", "a"], environment: env)
            // Its end is written (the journal removed: nothing is live) once GetInfo answers.
            _ = try await bus.agentPID()
            let path = "\(desktop.directory)/runtime/toastkit/agent-\(try await bus.bus.id()).json"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let sent = try await toastkit(["send", "--id", "b", "-d", "indefinite", "Sin guardar"], environment: env)
            #expect(sent.status == 0, "\(sent.error)")
            #expect(
                sent.error.hasPrefix("toastkit: warning: the toast is not saved, a restarted agent will not know it:"),
                "\(sent.error)")
            #expect(sent.error.split(separator: "\n").count == 1, "one line: \(sent.error)")
            let (notify, _) = try await watcher.nextNotifyAndReply()
            #expect(notify.summary == "Sin guardar")
        }
    }

    /// Before: a command ran in the folder and environment of whichever process started the agent. Now it runs in
    /// its sender's folder with its sender's environment, whoever started the agent and however bare its
    /// environment was (a cron-like `env -i`).
    @Test func onActionRunsInTheSendersFolderAndEnvironment() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.agentEnvironment
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            let folderA = "\(desktop.directory)/script a"
            let folderB = "\(desktop.directory)/script b"
            for (folder, text) in [(folderA, "wrong"), (folderB, "$MARK|${SECRET-unset}|$PWD|$DISPLAY")] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try Self.writeExecutable(
                    "\(folder)/hook.sh", "#!/bin/sh\necho \"\(text)\" > \"\(folderB)/out\"\n")
            }
            // The agent is started from A with a bare environment and a secret of A's.
            var bare = [String: String]()
            for name in [
                "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME",
                "TOASTKIT_AGENT_START_TIMEOUT",
            ] {
                bare[name] = env[name]
            }
            bare["SECRET"] = "of-a"
            let agent = try await startAgent(bare, bus)
            defer { agent.signal(SIGTERM) }
            var senderB = env
            senderB["MARK"] = "b"
            senderB["SECRET"] = nil
            let send = try ToolProcess.start(
                [
                    "-C", folderB, ToolProcess.binary, "send", "--id", "h", "-A", "go=Ir", "--on-action",
                    "go=./hook.sh",
                    "-d", "indefinite", "Hook",
                ].map { Array($0.utf8) },
                environment: senderB, executable: "/usr/bin/env")
            let sent = await send.finish()
            #expect(sent.status == 0 && sent.error.isEmpty, "\(sent.error)")
            _ = try await watcher.nextNotifyAndReply()
            try await desktop.waitUntilDisplayed(1)
            try await desktop.dunstctl("action", "0")
            let out = "\(folderB)/out"
            let text: String
            do {
                text = try await Deadline.run(within: .seconds(10), "the hook's output") { () -> String? in
                    while true {
                        if let text = try? String(contentsOfFile: out, encoding: .utf8), text.hasSuffix("\n") {
                            return text
                        }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
            } catch {
                let log =
                    (try? String(contentsOfFile: "\(desktop.directory)/state/toastkit/actions.log", encoding: .utf8))
                Issue.record("actions.log:\n\(log ?? "(none)")\n\(desktop.agentFiles)")
                throw error
            }
            // (The shell prints its folder as the system names it: without the temporary folder's double slash.)
            let folder = folderB.replacingOccurrences(of: "//", with: "/")
            #expect(text == "b|unset|\(folder)|\(env["DISPLAY"] ?? "")\n")
        }
    }
}

extension String {
    /// The `id` of the first JSON line, for comparing a line whose id `send` made up.
    fileprivate var jsonID: String {
        guard let range = range(of: #""id":""#) else { return "" }
        return String(self[range.upperBound...].prefix { $0 != "\"" })
    }
}
