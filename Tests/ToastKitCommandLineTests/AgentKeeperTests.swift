// What starts an agent by itself for the user's reminders (issue 39): the agent's keeper (``AgentKeeper``) after the
// agent was killed, and the login's autostart entry (scripts/xdg) after the user was away. Real agents on private
// buses, a fake server, no toastkit command run in between.
import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

@testable import ToastKitCommandLine

@Suite(.timeLimit(.minutes(2))) struct AgentKeeperTests {
    /// A session of the user whose state folder is `state`: its bus, a fake server, and the environment in which
    /// `send` goes through that session's agent.
    private func session(_ state: String) async throws -> (BusOnlyEnvironment, FakeNotificationServer, [String: String])
    {
        let session = try await BusOnlyEnvironment()
        var environment = session.agentEnvironment
        environment["XDG_STATE_HOME"] = state
        return (session, try await FakeNotificationServer.start(on: session.bus), environment)
    }

    private static func log(_ state: String) -> String {
        (try? String(contentsOfFile: "\(state)/toastkit/agent.log", encoding: .utf8)) ?? "(none)"
    }

    /// Before: a reminder due after its agent was SIGKILLed waited for some later `send` to start an agent. Now the
    /// dead agent's keeper starts one, which shows it on time, and says why in the agent's log.
    @Test func aReminderComesOnTimeAfterItsAgentWasKilled() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-keeper")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let (session, server, environment) = try await session(state)
        defer {
            server.stop()
            session.stop()
        }
        let sent = AgentStore.now()
        let scheduled = try await toastkit(["send", "--in", "3s", "--id", "te", "Té"], environment: environment)
        #expect(scheduled.status == 0, "\(scheduled.error)")
        let bus = try await session.bus.connect()
        defer { bus.close() }
        let agent = try await bus.agentPID()
        // The keeper runs before the agent takes its name: an agent killed at any moment it can be reached is seen.
        _ = try agentKeeper(of: agent)
        kill(agent, SIGKILL)
        #expect(try await processEnds(agent, within: 10))
        let shown = try await server.nextNotification(summary: "Té", log: "\(state)/toastkit/agent.log")
        #expect(AgentStore.now() >= sent + 2.9, "not before its time")
        #expect(shown.arguments.summary == "Té")
        #expect(Self.log(state).contains("agent keeper: the agent died without a word"), "\(Self.log(state))")
        let list = try await toastkit(["list"], environment: environment)
        #expect(list.lines.contains { $0.hasPrefix("te\t") }, "shown with its id: \(list.output)")
    }

    /// An agent asked to stop (SIGTERM, as at a logout) says goodbye: its keeper ends and starts nothing, though a
    /// reminder is still scheduled (the next agent of the user takes it up).
    @Test func anAgentThatEndsCleanlyIsNotStartedAgain() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-keeper")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let (session, server, environment) = try await session(state)
        defer {
            server.stop()
            session.stop()
        }
        let scheduled = try await toastkit(["send", "--in", "1h", "--id", "luego", "Luego"], environment: environment)
        #expect(scheduled.status == 0, "\(scheduled.error)")
        let bus = try await session.bus.connect()
        defer { bus.close() }
        let agent = try await bus.agentPID()
        let keeper = try agentKeeper(of: agent)
        kill(agent, SIGTERM)
        #expect(try await processEnds(agent, within: 10))
        #expect(try await processEnds(keeper, within: 10), "the keeper ends with its agent")
        #expect(try await bus.bus.nameOwner(of: "org.toastkit.Agent1") == nil, "no agent was started again")
        #expect(!Self.log(state).contains("agent keeper:"), "\(Self.log(state))")
    }

    /// A reminder that came due while the user was logged out comes at the next login, from the autostart entry the
    /// package installs (its Exec line as the desktop runs it), with no toastkit command run first.
    @Test func aReminderDueWhileAwayComesAtLoginFromTheAutostartEntry() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-login")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let (first, firstServer, firstEnvironment) = try await session(state)
        let scheduled = try await toastkit(
            ["send", "--in", "1h", "--id", "cita", "Cita"], environment: firstEnvironment)
        #expect(scheduled.status == 0, "\(scheduled.error)")
        let firstBus = try await first.bus.connect()
        let firstAgent = try await firstBus.agentPID()
        firstBus.close()
        firstServer.stop()
        first.stop()
        #expect(try await processEnds(firstAgent, within: 30), "the agent follows its bus")
        try makeSchedulesDue(state)

        // The next login: the desktop runs the autostart entry.
        let entry = try String(
            contentsOfFile: "\(NotificationEnvironment.repositoryRoot)/scripts/xdg/toastkit-reminders.desktop.in",
            encoding: .utf8)
        let exec = try #require(entry.split(separator: "\n").first { $0.hasPrefix("Exec=") })
        let argv = exec.dropFirst("Exec=".count).split(separator: " ").map(String.init)
        #expect(argv.first == "@BINDIR@/toastkit", "\(exec)")
        let (second, server, environment) = try await session(state)
        defer {
            server.stop()
            second.stop()
        }
        let autostarted = try ToolProcess.start(argv.dropFirst().map { Array($0.utf8) }, environment: environment)
        let cita = try await server.nextNotification(summary: "Cita", log: "\(state)/toastkit/agent.log")
        #expect(cita.arguments.summary == "Cita")
        kill(autostarted.pid, SIGTERM)
        let ended = await autostarted.finish()
        #expect(ended.status == 0, "\(ended.error)")
    }

    /// With no scheduled toast, the autostart entry's command exits 0 at once and no agent runs.
    @Test func withNothingScheduledTheLoginStartsNoAgent() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-login")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let (session, server, environment) = try await session(state)
        defer {
            server.stop()
            session.stop()
        }
        let result = try await toastkit(["agent", "--if-scheduled"], environment: environment)
        #expect(result.status == 0 && result.error.isEmpty, "\(result.error)")
        let bus = try await session.bus.connect()
        defer { bus.close() }
        #expect(try await bus.bus.nameOwner(of: "org.toastkit.Agent1") == nil)
    }
}
