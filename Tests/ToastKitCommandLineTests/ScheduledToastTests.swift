import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

@testable import ToastKitCommandLine

/// Toasts for later (issue 20 §5): `send --in` and `--at` keep a toast in the agent until its time, across the agent's
/// restarts and the user's sessions; `toastkit list` shows them and `close --id` cancels them; `-A later=DURATION`
/// brings a toast back by itself.
@Suite(.timeLimit(.minutes(2))) struct ScheduledToastTests {
    /// The next `Notify` with `summary` (the others are skipped).
    @Test func aScheduledToastComesAtItsTimeAndListAndCloseSeeIt() async throws {
        try await withFakeServer { environment, server in
            let env = environment.agentEnvironment
            let later = try await toastkit(
                ["send", "--json", "--in", "1h", "--id", "tarde", "-s", "warning", "Más tarde"], environment: env)
            #expect(later.status == 0, "\(later.error)")
            let event = try #require(
                try JSONSerialization.jsonObject(with: Data(later.output.utf8)) as? [String: Any], "\(later.output)")
            #expect(event["event"] as? String == "scheduled" && event["id"] as? String == "tarde")
            let due = try #require(event["due"] as? Double)
            #expect(abs(due - (AgentStore.now() + 3600)) < 60, "an hour from now: \(due)")

            let started = AgentStore.now()
            let soon = try await toastkit(
                ["send", "--in", "1s", "--id", "reunion", "-d", "30", "Reunión"], environment: env)
            #expect(soon.status == 0 && soon.output.isEmpty && soon.error.isEmpty, "\(soon.output)\(soon.error)")
            let list = try await toastkit(["list", "--json"], environment: env)
            let entries = list.lines.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let tarde = try #require(entries.first { $0["id"] as? String == "tarde" }, "\(list.output)")
            #expect(tarde["state"] as? String == "scheduled")
            #expect(tarde["title"] as? String == "Más tarde")
            #expect(tarde["due"] as? Double == due)
            let text = try await toastkit(["list"], environment: env)
            #expect(
                text.lines.contains { $0.hasPrefix("tarde\tscheduled\t@") && $0.hasSuffix("\tMás tarde") },
                "\(text.output)")

            let shown = try await server.nextNotification(summary: "Reunión")
            #expect(AgentStore.now() >= started + 0.95, "not before its time")
            #expect(shown.arguments.expireTimeout == 30_000, "with its own duration")

            #expect(try await toastkit(["close", "--id", "tarde"], environment: env).status == 0)
            let after = try await toastkit(["list"], environment: env)
            #expect(!after.output.contains("tarde"), "\(after.output)")
            #expect(
                !FileManager.default.fileExists(atPath: "\(environment.directory)/state/toastkit/scheduled/tarde.json"))
        }
    }

    private static func log(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(none)"
    }

    /// Ends a session whose agent runs: its server, its bus, and then its agent, which follows its bus; returns once
    /// that agent has exited.
    private func end(_ session: BusOnlyEnvironment, server: FakeNotificationServer, log: String) async throws {
        let bus = try await session.bus.connect()
        let agent = try await bus.agentPID()
        bus.close()
        server.stop()
        session.stop()
        #expect(try await processEnds(agent, within: 30), "the agent \(agent) outlived its bus:\n\(Self.log(log))")
        // Its name went with its bus: nobody took it over, and the session's toasts ended with it.
        let said = Self.log(log)
        #expect(said.contains("agent: the session bus closed") && !said.contains("took over"), "\(said)")
    }

    /// `send --json --in 1h --id cita Cita` in `environment`: answered as scheduled.
    private func scheduleCita(_ environment: [String: String]) async throws {
        let sent = try await toastkit(
            ["send", "--json", "--in", "1h", "--id", "cita", "Cita"], environment: environment)
        #expect(sent.status == 0, "\(sent.error)")
        #expect(sent.output.contains("\"event\":\"scheduled\""), "\(sent.output)")
    }

    /// A session of the user whose state folder is `state`: its bus, a fake server (`options`) on it, and the
    /// environment in which `send` goes through that session's agent.
    private func session(_ state: String, _ options: FakeNotificationServer.Options = .init()) async throws
        -> (BusOnlyEnvironment, FakeNotificationServer, [String: String])
    {
        let session = try await BusOnlyEnvironment()
        var environment = session.agentEnvironment
        environment["XDG_STATE_HOME"] = state
        return (session, try await FakeNotificationServer.start(on: session.bus, options: options), environment)
    }

    /// The user's next session: any toast starts its agent, which takes up the user's schedules and shows Cita,
    /// which is due; shown, it is no longer the user's to keep.
    private func citaComesInTheNextSession(_ state: String, log: String) async throws {
        let (second, server, environment) = try await session(state)
        defer {
            server.stop()
            second.stop()
        }
        // Only what this session's agent writes counts (the log is the user's: earlier agents wrote there too).
        let before = Self.log(log).utf8.count
        let ping = try await toastkit(["send", "--id", "ping", "-d", "5", "Hola"], environment: environment)
        #expect(ping.status == 0, "\(ping.error)")
        let cita = try await server.nextNotification(summary: "Cita", log: log)
        #expect(cita.arguments.summary == "Cita")
        let written = String(decoding: Self.log(log).utf8.dropFirst(before), as: UTF8.self)
        #expect(written.contains("taking up 1 scheduled toast(s): cita"), "\(written)")
        let list = try await toastkit(["list"], environment: environment)
        #expect(!list.output.contains("scheduled"), "\(list.output)")
    }

    /// The toast is the user's, not the session's: scheduled in one session whose bus then closed, it comes in the next
    /// session, from that session's agent.
    @Test func aScheduledToastOutlivesItsAgentAndItsSession() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-scheduled-state")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let log = "\(state)/toastkit/agent.log"
        let (first, server, environment) = try await session(state)
        try await scheduleCita(environment)
        // The session ends: its bus, its server and its agent go. Then the hour passes.
        try await end(first, server: server, log: log)
        try makeSchedulesDue(state)
        try await citaComesInTheNextSession(state, log: log)
    }

    /// Issue 39: a reminder keeps its id once it comes due in the next session (it was listed as `toastkit-<uuid>`,
    /// `close --id` found nothing, and never marked as shown it came back at every later session).
    @Test func aReminderKeepsItsIdWhenItComesDueAndIsShownOnce() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-scheduled-state")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let log = "\(state)/toastkit/agent.log"
        let (first, firstServer, firstEnvironment) = try await session(state)
        try await scheduleCita(firstEnvironment)
        try await end(first, server: firstServer, log: log)
        try makeSchedulesDue(state)
        let (second, server, environment) = try await session(state)
        let ping = try await toastkit(["send", "--id", "ping", "-d", "600", "Hola"], environment: environment)
        #expect(ping.status == 0, "\(ping.error)")
        let cita = try await server.nextNotification(summary: "Cita", log: log)
        let list = try await toastkit(["list"], environment: environment)
        #expect(list.lines.contains { $0.hasPrefix("cita\t") }, "\(list.output)")
        let closed = try await toastkit(["close", "--id", "cita"], environment: environment)
        #expect(closed.status == 0, "\(closed.error)")
        _ = try await Deadline.run(within: .seconds(10), "Cita's CloseNotification") { () -> Bool? in
            for await event in server.events {
                if case .close(let id) = event, id == cita.id { return true }
            }
            return nil
        }
        // Shown once: settled, not given back for the next session.
        try await end(second, server: server, log: log)
        #expect(!Self.log(log).contains("giving back"), "\(Self.log(log))")
        #expect(!FileManager.default.fileExists(atPath: "\(state)/toastkit/scheduled/cita.json"))
    }

    /// Issue 39: a session without a notification server (a headless `dbus-run-session`, an SSH login) leaves a due
    /// reminder to a session that has one; its agent claimed it, and it was never seen.
    @Test func aSessionWithoutAServerLeavesTheReminderToOneWithAServer() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-scheduled-state")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let log = "\(state)/toastkit/agent.log"
        let headless = try await BusOnlyEnvironment()
        defer { headless.stop() }
        var headlessEnvironment = headless.agentEnvironment
        headlessEnvironment["XDG_STATE_HOME"] = state
        for name in ["DISPLAY", "WAYLAND_DISPLAY"] { headlessEnvironment[name] = nil }
        // Its agent (started by the schedule's send) keeps it; then its time comes.
        try await scheduleCita(headlessEnvironment)
        try makeSchedulesDue(state)
        let said = try await Deadline.run(within: .seconds(30), "the headless agent's word in its log") {
            () -> String? in
            while true {
                let line = Self.log(log).split(separator: "\n").first {
                    $0.contains("\"cita\"") && $0.contains("no notification server")
                }
                if let line { return String(line) }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(said.contains("left for a session that has one"), "\(said)")
        // The user's graphical session shows it.
        let (desktop, server, environment) = try await session(state)
        defer {
            server.stop()
            desktop.stop()
        }
        let ping = try await toastkit(["send", "--id", "ping", "-d", "600", "Hola"], environment: environment)
        #expect(ping.status == 0, "\(ping.error)")
        #expect(try await server.nextNotification(summary: "Cita", log: log).arguments.summary == "Cita")
    }

    /// Due while its session's agent ran, claimed by that agent, and its session ended before the server answered:
    /// the toast was never shown, so it goes back to the user and the next session's agent shows it.
    @Test func aScheduledToastNoServerAcceptedGoesBackToTheUser() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-scheduled-state")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let log = "\(state)/toastkit/agent.log"
        // A server that takes the Notify and never answers it.
        let (first, server, environment) = try await session(state, .init(notifyDelay: .seconds(3600)))
        try await scheduleCita(environment)
        // Its agent stops (SIGTERM: the schedule stays the user's), and the hour passes.
        let bus = try await first.bus.connect()
        let stopped = try await bus.agentPID()
        bus.close()
        kill(stopped, SIGTERM)
        #expect(try await processEnds(stopped, within: 30), "the agent \(stopped) ignored SIGTERM:\n\(Self.log(log))")
        try makeSchedulesDue(state)
        // The session's next agent takes it up, due: it claims it at once, and the server never answers.
        let agent = try ToolProcess.start(["agent"].map { Array($0.utf8) }, environment: environment)
        _ = try await server.nextNotification(summary: "Cita", log: log)
        #expect(
            !FileManager.default.fileExists(atPath: "\(state)/toastkit/scheduled/cita.json"), "claimed by the agent")
        server.stop()
        first.stop()
        #expect(try await processEnds(agent.pid, within: 30), "the agent \(agent.pid) outlived its bus")
        let said = await agent.finish().error
        #expect(said.contains("giving back 1 scheduled toast(s) no server showed, for the next agent: cita"), "\(said)")
        #expect(said.contains("agent: the session bus closed") && !said.contains("took over"), "\(said)")
        try await citaComesInTheNextSession(state, log: log)
    }

    /// Two sessions of the user at once: a schedule session B's agent made, left behind when B ended, comes in session
    /// A from A's agent, which ran all along — an agent follows the user's file, not only what it read at its start.
    @Test func aRunningAgentTakesUpWhatAnotherSessionLeft() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-scheduled-state")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let log = "\(state)/toastkit/agent.log"
        let (first, serverA, environmentA) = try await session(state)
        defer {
            serverA.stop()
            first.stop()
        }
        // Session A's agent runs, kept by a live toast (its idle exit would end the test's point).
        let ping = try await toastkit(["send", "--id", "ping", "-d", "600", "Hola"], environment: environmentA)
        #expect(ping.status == 0, "\(ping.error)")
        let (second, serverB, environmentB) = try await session(state)
        try await scheduleCita(environmentB)
        try await end(second, server: serverB, log: log)
        // The hour passes: A's agent sees the file change and shows the toast, now due.
        try makeSchedulesDue(state)
        let cita = try await serverA.nextNotification(summary: "Cita", log: log)
        #expect(cita.arguments.summary == "Cita")
    }

    @Test func laterWithATimeBringsTheToastBackByItself() async throws {
        try await withFakeServer { environment, server in
            let env = environment.agentEnvironment
            let waiting = try ToolProcess.start(
                ["send", "--wait", "--json", "-A", "later=1s", "-d", "30", "--id", "cafe", "Café"].map {
                    Array($0.utf8)
                },
                environment: env)
            let first = try await server.nextNotification(summary: "Café")
            #expect(first.arguments.actions.map(\.key) == ["later"])
            #expect(first.arguments.actions.map(\.label) == ["Later"], "the built-in label")
            let pressed = AgentStore.now()
            try server.emitActionInvoked(id: first.id, key: "later")
            let result = await waiting.finish()
            #expect(
                result.status == 5,
                "deferred, as Later: \(result.output) \(result.error) \((try? String(contentsOfFile: "\(environment.directory)/state/toastkit/agent.log", encoding: .utf8)) ?? "")"
            )
            let again = try await server.nextNotification(summary: "Café")
            #expect(AgentStore.now() >= pressed + 0.95, "after its snooze")
            #expect(again.arguments.actions.map(\.key) == ["later"], "it can be snoozed again")
        }
    }

    /// On dunst, through its own `NotificationClosed` and `ActionInvoked` (a click with `dunstctl`): a scheduled toast
    /// comes at its time, and Later with a time brings one back.
    @Test func onDunstAScheduledToastComesAndASnoozedOneComesBack() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let env = desktop.agentEnvironment
            let sent = AgentStore.now()
            let scheduled = try await toastkit(
                ["send", "--in", "1s", "-d", "30", "--id", "cita", "Cita"], environment: env)
            #expect(scheduled.status == 0, "\(scheduled.error)")
            let (notify, _) = try await watcher.nextNotifyAndReply()
            #expect(notify.summary == "Cita")
            #expect(AgentStore.now() >= sent + 0.95, "not before its time")
            try await desktop.clear()

            let waiting = try ToolProcess.start(
                ["send", "--wait", "-A", "later=1s", "-d", "30", "--id", "cafe", "Café"].map { Array($0.utf8) },
                environment: env)
            let (first, _) = try await watcher.nextNotifyAndReply()
            #expect(first.summary == "Café" && first.actionList == ["later", "Later"], "\(first.actionList)")
            try await desktop.waitUntilDisplayed(1)
            let pressed = AgentStore.now()
            try await desktop.dunstctl("action", "0")
            let result = await waiting.finish()
            #expect(result.status == 5, "deferred: \(result.output) \(result.error)")
            let (again, _) = try await watcher.nextNotifyAndReply()
            #expect(again.summary == "Café")
            #expect(AgentStore.now() >= pressed + 0.95, "after its snooze")
        }
    }

    @Test func whatASchedulesCommandLineMayHold() throws {
        func parsed(_ arguments: String...) throws -> SendOptions {
            guard case .send(let options) = try CommandLineParser.parse(["send"] + arguments) else {
                throw CommandFailure(.software, "not send")
            }
            return options
        }
        func failure(_ arguments: String...) -> String? {
            do {
                _ = try CommandLineParser.parse(["send"] + arguments)
                return nil
            } catch {
                return error.line
            }
        }
        let now = AgentStore.now()
        let inTen = try #require(try parsed("--in", "10m", "x").due)
        #expect(abs(inTen - (now + 600)) < 5)
        #expect(try parsed("-A", "later=10m", "x").snooze == 600)
        #expect(try parsed("-A", "later=10m", "x").actions.first?.label == nil, "the built-in label")
        #expect(try parsed("-A", "later=Luego", "x").snooze == nil, "a label, not a time")
        #expect(failure("--in", "soon", "x") == "toastkit: --in soon: expected a duration (90s, 10m, 1h30m) or seconds")
        #expect(failure("--at", "25:00", "x")?.contains("expected a time") == true)
        #expect(failure("--at", "2021-01-01 10:00", "x") == "toastkit: --at 2021-01-01 10:00: that time has passed")
        #expect(failure("--in", "1m", "--at", "23:59", "x") == "toastkit: --in and --at cannot be used together")
        #expect(
            failure("--in", "1m", "--wait", "x")?.hasPrefix("toastkit: --wait cannot be used with --in/--at") == true)
        #expect(failure("--in", "1m", "-p", "x")?.hasPrefix("toastkit: -p/--print-id cannot be used with") == true)
        #expect(failure("--in", "1m", "-A", "ok=OK", "x")?.contains("-A/--tap without --on-action") == true)
        #expect(failure("--in", "1m", "--no-agent", "x")?.contains("needs the toast agent") == true)
        #expect(failure("-A", "later=1m", "--no-agent", "x")?.contains("needs the toast agent") == true)
    }

    @Test func timesOfDayAndDatesReadAsTheySay() {
        let now = 1_767_225_600.0  // 2026-01-01 00:00:00 UTC
        #expect(TimeText.seconds("2026-01-01T10:00Z", now: now) == now + 36_000)
        #expect(TimeText.seconds("2026-01-01 10:00:30+01:00", now: now) == now + 32_430)
        #expect(TimeText.seconds("2026-01-01T10:00-0500", now: now) == now + 54_000)
        // A time of day: the next such moment, within a day.
        for text in ["00:30", "23:59", "12:00:01"] {
            let due = TimeText.seconds(text, now: now)
            #expect(due.map { $0 > now && $0 <= now + 86_400 + 3600 } == true, "\(text): \(String(describing: due))")
        }
        for bad in ["24:00", "10:60", "2026-02-30 10:00", "2026-13-01 10:00", "mañana", "10", ""] {
            #expect(TimeText.seconds(bad, now: now) == nil, "\(bad)")
        }
    }
}
