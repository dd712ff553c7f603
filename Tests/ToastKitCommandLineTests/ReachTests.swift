import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// Issue 20, "find the person's session", first step: a job without a session environment — cron's `env -i`, a
/// systemd service with a runtime folder of its own — finds the user's bus where logind puts it,
/// `/run/user/UID/bus` (here a private folder that stands for `/run/user`, `TOASTKIT_USER_RUNTIME_ROOT`), and never
/// another user's.
@Suite(.timeLimit(.minutes(2))) struct ReachTests {
    @Test func aCronJobAndAServiceFindTheUsersBusAtRunUser() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let server = try await FakeNotificationServer.start(on: environment.bus)
        defer { server.stop() }
        let root = "\(environment.directory)/run-user"
        try FileManager.default.createDirectory(
            atPath: "\(root)/\(geteuid())", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // The private daemon's socket, at the place a logged-in user's bus is (a hard link: the same socket).
        let socket = try #require(
            environment.bus.address.split(separator: ",").first.map { String($0.dropFirst("unix:path=".count)) })
        #expect(link(socket, "\(root)/\(geteuid())/bus") == 0, "\(String(cString: strerror(errno)))")

        // What cron gives a job: HOME, PATH, a shell; no DBUS_SESSION_BUS_ADDRESS, no XDG_RUNTIME_DIR.
        let cron = [
            "HOME": environment.directory, "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh",
            "TOASTKIT_USER_RUNTIME_ROOT": root, "TOASTKIT_NO_AGENT": "1",
        ]
        let fromCron = try await toastkit(["send", "Backup listo"], environment: cron)
        #expect(fromCron.status == 0, "\(fromCron.error)")
        #expect(fromCron.error.isEmpty)
        // A systemd service: its own runtime folder (without a bus in it), an invocation id.
        var service = cron
        service["XDG_RUNTIME_DIR"] = "\(environment.directory)/runtime"
        service["INVOCATION_ID"] = "0123456789abcdef0123456789abcdef"
        let fromService = try await toastkit(["send", "-d", "2", "Servicio listo"], environment: service)
        #expect(fromService.status == 0, "\(fromService.error)")
        #expect(server.notifications.map(\.summary) == ["Backup listo", "Servicio listo"])
    }

    @Test func anotherUsersBusIsRefusedWithOneLine() async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-reach")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = "\(directory)/run-user"
        try FileManager.default.createDirectory(atPath: "\(root)/\(geteuid())", withIntermediateDirectories: true)
        let bus = "\(root)/\(geteuid())/bus"
        let socket = try Tools.bindUnixSocket(at: bus)
        defer { close(socket) }
        // Planted by someone else (nobody, uid 65534): never connected to.
        #expect(chown(bus, 65534, 65534) == 0)
        let cron = [
            "HOME": directory, "PATH": "/usr/bin:/bin", "TOASTKIT_USER_RUNTIME_ROOT": root, "TOASTKIT_NO_AGENT": "1",
        ]
        let sent = try await toastkit(["send", "Hola"], environment: cron)
        #expect(sent.status == 69)
        #expect(
            sent.error
                == "toastkit: cannot reach the session bus: no session bus: refusing \(bus), which belongs to uid "
                + "65534, not \(geteuid())\n")
    }
}
