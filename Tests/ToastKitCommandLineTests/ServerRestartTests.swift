import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 39: a server id saved by an agent (its journal) or by `send` (a hand-over) is adopted only while the server
/// that gave it still owns the name. After a restart of the server the same number may be another application's
/// notification: the next agent shows the toast anew, never as an update of that one.
@Suite(.timeLimit(.minutes(2))) struct ServerRestartTests {
    @Test func aKilledAgentsToastIsShownAnewOnARestartedServer() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let env = environment.agentEnvironment
        var server = try await FakeNotificationServer.start(on: environment.bus, options: .init(firstID: 7))
        defer { server.stop() }
        let sent = try await toastkit(["send", "--id", "uno", "-d", "600", "Uno"], environment: env)
        #expect(sent.status == 0, "\(sent.error)")
        #expect(try await server.nextNotification().id == 7)
        // The agent that holds it is killed (its journal names id 7), and the server restarts.
        let bus = try await environment.bus.connect()
        let agent = try await bus.agentPID()
        bus.close()
        // Its keeper too: the next agent is the next command's, started once the new server gave id 7 away.
        try await killAgentAndItsKeeper(agent)
        server.stop()
        server = try await FakeNotificationServer.start(on: environment.bus, options: .init(firstID: 7))
        // Another application's notification gets id 7 from the new server.
        let other = try await toastkit(["send", "--no-agent", "-a", "Otra", "De otra aplicación"], environment: env)
        #expect(other.status == 0, "\(other.error)")
        let othersNotification = try await server.nextNotification()
        #expect(othersNotification.id == 7)
        // The next agent (started by the next send) adopts Uno: shown anew, the other application's left alone.
        let next = try await toastkit(["send", "--id", "dos", "-d", "5", "Dos"], environment: env)
        #expect(next.status == 0, "\(next.error)")
        var uno = try await server.nextNotification()
        while uno.summary != "Uno" { uno = try await server.nextNotification() }
        #expect(uno.arguments.replacesID == 0, "sent as an update of the other application's notification 7")
        #expect(uno.id != 7)
    }
}
