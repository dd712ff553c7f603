import DBus
import Foundation
import Glibc
import TestSupport
import Testing

/// `toastkit --user NAME|UID|all` (issue 20 §1): root reaches another user's desktop as that user — a real second
/// Unix user (`nobody`, uid 65534), its bus at the place that stands for `/run/user/65534/bus`, logind's sessions
/// from a stand-in on a private system bus — and the server sees a connection of that user, never root's.
@Suite(.timeLimit(.minutes(2))) struct AsUserTests {
    static let nobody: uid_t = 65534

    /// A desktop of `nobody`: a bus that lets every user in, linked at `ROOT/65534/bus` and owned by nobody, with a
    /// fake notification server on it; no logind (the system bus address leads nowhere) unless `sessions` are given.
    private func withNobodysDesktop(
        sessions: [FakeLogind.Session]? = nil,
        _ body: (_ environment: [String: String], _ server: FakeNotificationServer, _ bus: PrivateBus) async throws ->
            Void
    ) async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-as-user")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chmod(directory, 0o755) == 0)
        let bus = try await PrivateBus.start(everyUser: true)
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let root = "\(directory)/run-user"
        let folder = "\(root)/\(Self.nobody)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(chmod(root, 0o755) == 0 && chown(folder, Self.nobody, Self.nobody) == 0 && chmod(folder, 0o700) == 0)
        let socket = try #require(
            bus.address.split(separator: ",").first.map { String($0.dropFirst("unix:path=".count)) })
        #expect(link(socket, "\(folder)/bus") == 0, "\(String(cString: strerror(errno)))")
        #expect(chown("\(folder)/bus", Self.nobody, Self.nobody) == 0)
        var environment = [
            "HOME": directory, "PATH": "/usr/bin:/bin", "LANGUAGE": "en", "TOASTKIT_USER_RUNTIME_ROOT": root,
            "TOASTKIT_NO_AGENT": "1", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(directory)/no-system-bus",
        ]
        var system: PrivateBus?
        var logind: FakeLogind?
        if let sessions {
            system = try await PrivateBus.start()
            logind = try await FakeLogind.start(on: system!, sessions: sessions)
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = system!.address
        }
        defer {
            logind?.stop()
            system?.stop()
        }
        try await body(environment, server, bus)
    }

    @Test func rootReachesAnotherUsersDesktopAsThatUser() async throws {
        try await withNobodysDesktop { environment, server, bus in
            for user in ["nobody", "\(Self.nobody)"] {
                let run = try await toastkit(["--user", user, "send", "Hola \(user)"], environment: environment)
                #expect(run.status == 0, "\(run.error)")
                #expect(run.error.isEmpty, "\(run.error)")
            }
            #expect(server.notifications.map(\.summary) == ["Hola nobody", "Hola 65534"])
            // The server is called by nobody's own connection (asked while it waits): privileges were dropped before
            // connecting.
            let waiting = try ToolProcess.start(
                ["--user", "nobody", "send", "--wait", "-d", "indefinite", "Esperando"].map { Array($0.utf8) },
                environment: environment)
            var shown = try await server.nextNotification()
            while shown.summary != "Esperando" { shown = try await server.nextNotification() }
            let connection = try await bus.connect()
            defer { connection.close() }
            #expect(try await connection.bus.connectionUnixUser(of: shown.sender) == Self.nobody)
            try server.emitClosed(id: shown.id, reason: 2)
            let dismissed = await waiting.finish()
            #expect(dismissed.status == 2, "\(dismissed.error)")
            let all = try await toastkit(["--user=all", "send", "A todos"], environment: environment)
            #expect(all.status == 0, "\(all.error)")
            #expect(server.notifications.last?.summary == "A todos", "every user with a bus under /run/user")
        }
    }

    @Test func logindsGraphicalSessionGivesTheCommandItsDisplay() async throws {
        let sessions = [
            FakeLogind.Session(id: "1", uid: Self.nobody, user: "nobody", type: "tty", display: ""),
            FakeLogind.Session(id: "2", uid: Self.nobody, user: "nobody", type: "x11", display: ":7"),
        ]
        try await withNobodysDesktop(sessions: sessions) { environment, server, _ in
            let run = try await toastkit(
                ["--user", "nobody", "run", "--", "sh", "-c", #"echo "$(id -u) $USER $DISPLAY $XDG_RUNTIME_DIR""#],
                environment: environment)
            #expect(run.status == 0, "\(run.error)")
            let root = try #require(environment["TOASTKIT_USER_RUNTIME_ROOT"])
            #expect(run.output == "65534 nobody :7 \(root)/65534\n", "\(run.output)")
            #expect(server.notifications.count == 1, "run's toast, on nobody's desktop")
        }
    }

    /// `toastkit --user nobody doctor` (issue 43): the report says the bus is nobody's own, at the place that stands
    /// for /run/user/65534/bus, where `--user` found it; nobody set a DBUS_SESSION_BUS_ADDRESS, and it never says so.
    @Test func doctorAsTheUserSaysTheBusIsTheUsersOwn() async throws {
        try await withNobodysDesktop { environment, _, _ in
            let run = try await toastkit(["--user", "nobody", "doctor"], environment: environment)
            #expect(run.status == 0, "\(run.output)\(run.error)")
            let root = try #require(environment["TOASTKIT_USER_RUNTIME_ROOT"])
            #expect(
                run.lines.first
                    == "[ok] bus: unix:path=\(root)/\(Self.nobody)/bus (from nobody's own bus at \(root)/\(Self.nobody)/bus)",
                "\(run.output)")
            #expect(!run.output.contains("from DBUS_SESSION_BUS_ADDRESS"), "\(run.output)")
        }
    }

    @Test func whatCannotBeReachedFailsAtOnceWithOneLine() async throws {
        try await withNobodysDesktop { environment, _, _ in
            let unknown = try await toastkit(["--user", "no-such-user-xyz", "send", "x"], environment: environment)
            #expect(unknown.status == 64)
            #expect(unknown.error == "toastkit: --user no-such-user-xyz: no such user\n", "\(unknown.error)")
            // uid 65533 (nogroup's neighbour) has no bus under the runtime root.
            var others = environment
            others["TOASTKIT_USER_RUNTIME_ROOT"] = "\(environment["HOME"]!)/empty"
            let absent = try await toastkit(["--user", "nobody", "send", "x"], environment: others)
            #expect(absent.status == 69)
            #expect(
                absent.error
                    == "toastkit: --user nobody: no session bus of nobody at \(environment["HOME"]!)/empty/65534/bus; "
                    + "is nobody logged in to a desktop?\n", "\(absent.error)")
            let nobodyAtAll = try await toastkit(["--user", "all", "send", "x"], environment: others)
            #expect(nobodyAtAll.status == 69)
            #expect(nobodyAtAll.error.contains("nobody is logged in to a desktop"), "\(nobodyAtAll.error)")
        }
    }

    @Test func onlyRootMayActAsAnotherUser() async throws {
        try await withNobodysDesktop { environment, _, _ in
            let stderr = try PipePair()
            let child = try ChildProcess.spawn(
                "/usr/bin/setpriv",
                [
                    "--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", ToolProcess.binary, "--user",
                    "root", "send", "x",
                ],
                environment: environment, fileDescriptors: [2: stderr.writeEnd])
            stderr.closeWriteEnd()
            let (error, status) = try await onOwnThread {
                (String(decoding: stderr.readAll(), as: UTF8.self), child.wait())
            }
            #expect(status == 64)
            #expect(error == "toastkit: --user root: only root can act as another user (run the command as root)\n")
        }
    }
}
