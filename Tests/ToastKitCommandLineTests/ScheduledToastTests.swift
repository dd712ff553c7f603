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
    private func next(_ summary: String, on server: FakeNotificationServer) async throws
        -> FakeNotificationServer.Notification
    {
        while true {
            let notification = try await server.nextNotification()
            if notification.summary == summary { return notification }
        }
    }

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

            let shown = try await next("Reunión", on: server)
            #expect(AgentStore.now() >= started + 0.95, "not before its time")
            #expect(shown.arguments.expireTimeout == 30_000, "with its own duration")

            #expect(try await toastkit(["close", "--id", "tarde"], environment: env).status == 0)
            let after = try await toastkit(["list"], environment: env)
            #expect(!after.output.contains("tarde"), "\(after.output)")
            #expect(!FileManager.default.fileExists(atPath: "\(environment.directory)/state/toastkit/scheduled.json"))
        }
    }

    /// The toast is the user's, not the session's: scheduled in one session whose bus then closed, it comes in the next
    /// session, from that session's agent.
    @Test func aScheduledToastOutlivesItsAgentAndItsSession() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-scheduled-state")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let first = try await BusOnlyEnvironment()
        var envA = first.agentEnvironment
        envA["XDG_STATE_HOME"] = state
        let serverA = try await FakeNotificationServer.start(on: first.bus)
        let sent = try await toastkit(["send", "--in", "2s", "--id", "cita", "Cita"], environment: envA)
        #expect(sent.status == 0, "\(sent.error)")
        // The session ends: its bus, its server and its agent go.
        serverA.stop()
        first.stop()

        try await withFakeServer { second, serverB in
            var envB = second.agentEnvironment
            envB["XDG_STATE_HOME"] = state
            // Any toast starts the new session's agent, which takes up the user's schedules.
            let ping = try await toastkit(["send", "--id", "ping", "-d", "5", "Hola"], environment: envB)
            #expect(ping.status == 0, "\(ping.error)")
            let cita = try await next("Cita", on: serverB)
            #expect(cita.arguments.summary == "Cita")
            let log = (try? String(contentsOfFile: "\(state)/toastkit/agent.log", encoding: .utf8)) ?? ""
            #expect(log.contains("taking up 1 scheduled toast(s): cita"), "\(log)")
        }
    }

    @Test func laterWithATimeBringsTheToastBackByItself() async throws {
        try await withFakeServer { environment, server in
            let env = environment.agentEnvironment
            let waiting = try ToolProcess.start(
                ["send", "--wait", "--json", "-A", "later=1s", "-d", "30", "--id", "cafe", "Café"].map {
                    Array($0.utf8)
                },
                environment: env)
            let first = try await next("Café", on: server)
            #expect(first.arguments.actions.map(\.key) == ["later"])
            #expect(first.arguments.actions.map(\.label) == ["Later"], "the built-in label")
            let pressed = AgentStore.now()
            try server.emitActionInvoked(id: first.id, key: "later")
            let result = await waiting.finish()
            #expect(
                result.status == 5,
                "deferred, as Later: \(result.output) \(result.error) \((try? String(contentsOfFile: "\(environment.directory)/state/toastkit/agent.log", encoding: .utf8)) ?? "")"
            )
            let again = try await next("Café", on: server)
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
