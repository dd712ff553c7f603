import Foundation
import Glibc
import TestSupport
import Testing

@testable import DBus

@Suite struct DisconnectTests {
    @Test func killingTheBusFailsPendingCallsAndEndsSignals() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await TestService.start(on: bus)
        let client = try await bus.connect()
        let subscription = try await client.signals(matching: MatchRule(interface: "org.toastkit.Test"))
        let pending = Task { try await service.call(from: client, "Hold", timeout: .seconds(60)) }
        while service.held.withLock({ $0.isEmpty }) { await Task.yield() }

        bus.kill()

        let error = await #expect(throws: DBusError.self) { try await pending.value }
        #expect(error?.isDisconnected == true)
        let reason = await client.waitUntilClosed()
        #expect(reason.isDisconnected)
        #expect(!client.isConnected)
        await #expect(throws: DBusError.self) {
            for try await _ in subscription {}
        }
        let later = await #expect(throws: DBusError.self) { try await client.bus.listNames() }
        #expect(later?.isDisconnected == true)
        #expect(throws: DBusError.self) {
            try client.emitSignal(path: "/", interface: "org.toastkit.Test", member: "Late")
        }
    }

    @Test func closingFailsPendingCalls() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await TestService.start(on: bus)
        let client = try await bus.connect()
        let pending = Task { try await service.call(from: client, "Hold", timeout: .seconds(60)) }
        while service.held.withLock({ $0.isEmpty }) { await Task.yield() }
        client.close()
        let error = await #expect(throws: DBusError.self) { try await pending.value }
        #expect(error == DBusError(name: DBusError.Name.disconnected, message: "the connection was closed"))
        service.connection.close()
    }

    @Test func connectingToNothingIsAClearError() async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-nobus")
        let error = await #expect(throws: DBusError.self) {
            try await DBusConnection.connect(to: .address("unix:path=\(directory)/missing"))
        }
        #expect(error?.name == DBusError.Name.fileNotFound || error?.name == DBusError.Name.noServer)
        #expect(error?.message.contains("missing") == true, "\(error?.description ?? "")")

        let malformed = await #expect(throws: DBusError.self) {
            try await DBusConnection.connect(to: .address("definitely not an address"))
        }
        #expect(malformed?.name == DBusError.Name.badAddress)
    }

    @Test func aMissingSessionBusIsExplained() throws {
        let root = try Tools.makeTemporaryDirectory(prefix: "toastkit-run-user")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let error = #expect(throws: DBusError.self) {
            try BusAddress.session.resolve(environment: { $0 == "TOASTKIT_USER_RUNTIME_ROOT" ? root : nil })
        }
        #expect(
            error?.message
                == "no session bus: DBUS_SESSION_BUS_ADDRESS is not set, and there is no bus at $XDG_RUNTIME_DIR/bus "
                + "(unset) or \(root)/\(geteuid())/bus; is this user logged in to a desktop? From another user's job, "
                + "run as that user (as root: toastkit --user NAME)")
        let address = try? BusAddress.session.resolve(environment: {
            $0 == "DBUS_SESSION_BUS_ADDRESS" ? "unix:path=/tmp/x" : nil
        })
        #expect(address == "unix:path=/tmp/x")
    }

    @Test func aJobWithoutASessionEnvironmentFindsTheUsersOwnBusAndNoOneElses() throws {
        let root = try Tools.makeTemporaryDirectory(prefix: "toastkit-run-user")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: "\(root)/\(geteuid())", withIntermediateDirectories: true)
        let bus = "\(root)/\(geteuid())/bus"
        let socket = try Tools.bindUnixSocket(at: bus)
        defer { close(socket) }
        let environment: (String) -> String? = { $0 == "TOASTKIT_USER_RUNTIME_ROOT" ? root : nil }
        #expect(try BusAddress.session.resolve(environment: environment) == "unix:path=\(bus)")
        // The same socket handed to another user (nobody, 65534): never used.
        #expect(chown(bus, 65534, 65534) == 0)
        let refused = #expect(throws: DBusError.self) { try BusAddress.session.resolve(environment: environment) }
        #expect(refused?.message == "no session bus: refusing \(bus), which belongs to uid 65534, not \(geteuid())")
    }
}
