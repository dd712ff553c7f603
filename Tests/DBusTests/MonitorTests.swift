import DBus
import TestSupport
import Testing

@Suite(.privateBus) struct MonitorTests {
    @Test func aMonitorSeesCallsAndSignalsBetweenOtherPeers() async throws {
        let server = try await FakeNotificationServer.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        let watcher = try await PrivateBus.shared.connect()
        defer {
            server.stop()
            client.close()
            watcher.close()
        }
        let traffic = try await watcher.monitor([
            MatchRule(kind: .methodCall, interface: "org.freedesktop.Notifications", member: "Notify"),
            MatchRule(kind: .signal, interface: "org.freedesktop.Notifications"),
        ])
        var iterator = traffic.makeAsyncIterator()
        let reply = try await client.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.Notifications", member: "Notify",
            arguments: [
                .string("app"), .uint32(0), .string(""), .string("Hola"), .string("mundo"), .strings([]),
                .variantDictionary([:]), .int32(-1),
            ])
        let id = try #require(try reply.arguments("u")[0].uint32Value)
        let seen = try #require(try await iterator.next())
        #expect(seen.kind == .methodCall)
        #expect(seen.member == "Notify")
        #expect(seen.sender == client.uniqueName)
        #expect(seen.body[3] == .string("Hola"))

        try server.emitClosed(id: id, reason: 2)
        let closed = try #require(try await iterator.next())
        #expect(closed.member == "NotificationClosed")
        #expect(closed.body == [.uint32(id), .uint32(2)])
        #expect(closed.destination == client.uniqueName)
    }
}
