// The agent started by the bus (D-Bus activation) from its installed service file.
import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// D-Bus activation: the installed service file (scripts/dbus, as scripts/install.sh fills it in) lets the bus
/// start the agent for the first `send`, without `toastkit` starting it itself.
@Suite(.timeLimit(.minutes(1))) struct AgentActivationTests {
    @Test func theBusStartsTheAgentFromTheServiceFile() async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-activation")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for folder in ["services", "runtime", "state", "config"] {
            try FileManager.default.createDirectory(
                atPath: "\(directory)/\(folder)", withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        let template = try String(
            contentsOfFile: "\(NotificationEnvironment.repositoryRoot)/scripts/dbus/org.toastkit.Agent1.service.in",
            encoding: .utf8)
        let bindir = URL(fileURLWithPath: ToolProcess.binary).deletingLastPathComponent().path
        try template.replacingOccurrences(of: "@BINDIR@", with: bindir).write(
            toFile: "\(directory)/services/org.toastkit.Agent1.service", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = "\(directory)/runtime"
        environment["XDG_STATE_HOME"] = "\(directory)/state"
        environment["XDG_CONFIG_HOME"] = "\(directory)/config"
        environment["LANGUAGE"] = "en"
        environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        // The daemon's environment is what activated services get: no session address in it, on purpose (the
        // agent connects to the bus that started it).
        let bus = try await PrivateBus.start(serviceDirectory: "\(directory)/services", environment: environment)
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address

        let send = try await toastkit(["send", "-p", "--id", "a", "Activado"], environment: environment)
        #expect(send.status == 0, "\(send.error)")
        let shown = try await server.nextNotification()
        #expect(send.output == "\(shown.id)\n")
        #expect(shown.arguments.summary == "Activado")
        let connection = try await bus.connect()
        defer { connection.close() }
        let info = try await connection.call(AgentInterface.call("GetInfo"))
        let pid = try #require(info.arguments("a{sv}")[0].variantDictionaryValue?["pid"]?.uint32Value)
        // The bus marks what it activates with the address of the bus that started it.
        let variables = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
            .split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        #expect(variables.contains("DBUS_STARTER_ADDRESS=\(bus.address)"), "the bus started the agent")
        #expect(
            !FileManager.default.fileExists(atPath: "\(directory)/state/toastkit/agent.log"),
            "toastkit did not start one itself")
        kill(Int32(pid), SIGTERM)
    }
}
