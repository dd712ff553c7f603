import DBus
import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 40: root's `toastkit --user` gives the user nothing of root's, and no user can hold root's command. Real
/// second Unix users (TestUsers), each with a desktop of its own (a private bus every user may join, linked at the
/// place that stands for `/run/user/UID/bus` and owned by the user, with a fake notification server on it).
@Suite(.timeLimit(.minutes(2))) struct AsUserSafetyTests {
    /// The users' desktops: one bus and server each, and root's environment that reaches them.
    struct Desktops {
        var environment: [String: String]
        var servers: [FakeNotificationServer]
        var buses: [PrivateBus]
        var directory: String
    }

    private func withDesktops(
        of users: [TestUsers.User], _ body: (Desktops) async throws -> Void
    ) async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-as-user-safety")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chmod(directory, 0o755) == 0)
        let root = "\(directory)/run-user"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        #expect(chmod(root, 0o755) == 0)
        var servers: [FakeNotificationServer] = []
        var buses: [PrivateBus] = []
        defer {
            for server in servers { server.stop() }
            for bus in buses { bus.stop() }
        }
        for user in users {
            let bus = try await PrivateBus.start(everyUser: true)
            buses.append(bus)
            servers.append(try await FakeNotificationServer.start(on: bus))
            let folder = "\(root)/\(user.uid)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            #expect(chown(folder, user.uid, user.gid) == 0 && chmod(folder, 0o700) == 0)
            #expect(link(try bus.socketPath, "\(folder)/bus") == 0, "\(String(cString: strerror(errno)))")
            #expect(chown("\(folder)/bus", user.uid, user.gid) == 0)
        }
        let environment = [
            "HOME": directory, "PATH": "/usr/bin:/bin", "LANGUAGE": "en", "TOASTKIT_USER_RUNTIME_ROOT": root,
            "TOASTKIT_NO_AGENT": "1", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(directory)/no-system-bus",
        ]
        try await body(Desktops(environment: environment, servers: servers, buses: buses, directory: directory))
    }

    /// The pid of the process behind a bus connection.
    private func processID(of sender: String, on bus: PrivateBus) async throws -> pid_t {
        let connection = try await bus.connect()
        defer { connection.close() }
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID", arguments: [.string(sender)])
        return pid_t(try #require(reply.arguments("u")[0].uint32Value))
    }

    @Test func theUsersCommandHasNoTerminalAndNoDescriptorOfRoots() async throws {
        let ana = try TestUsers.user("as-tty")
        try await withDesktops(of: [ana]) { desktops in
            // Root runs toastkit in a terminal of its own (script(1) makes a pseudo-terminal and gives it as the
            // controlling terminal), as `sudo toastkit --user ana …` typed at a shell.
            let probe = """
                for fd in 0 1 2; do [ -t $fd ] && echo "fd $fd is a terminal"; done
                if (: </dev/tty) 2>/dev/null; then echo "a controlling terminal"; fi
                for link in /proc/$$/fd/*; do
                  target=$(readlink "$link"); case "$target" in /dev/pts/*|/dev/tty*) echo "open: $target";; esac
                done
                echo "in $(pwd)"
                printf '\\033]0;title of the user\\007\\033[2Jchecked as %s\\n' "$(id -un)"
                """
            let command = [ToolProcess.binary, "--user", ana.name, "run", "--", "sh", "-c", probe]
                .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            let output = try PipePair()
            let script = try ChildProcess.spawn(
                "/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"], environment: desktops.environment,
                fileDescriptors: [1: output.writeEnd, 2: output.writeEnd])
            output.closeWriteEnd()
            let (text, status) = try await onOwnThread {
                (String(decoding: output.readAll(), as: UTF8.self), script.wait())
            }
            #expect(status == 0, "\(text)")
            // The terminal ends its lines with "\r\n", which Swift reads as one Character.
            let lines = text.replacingOccurrences(of: "\r", with: "").split(separator: "\n").map(String.init)
            #expect(lines.contains { $0.hasSuffix("checked as \(ana.name)") }, "\(text)")
            #expect(!lines.contains { $0.hasPrefix("fd ") || $0.hasPrefix("open: ") }, "\(text)")
            #expect(!lines.contains("a controlling terminal"), "\(text)")
            // Root's own folder is not handed over either: the command starts in the user's home.
            #expect(lines.contains("in \(ana.home)"), "\(text)")
            // No escape sequence of the user's reaches root's terminal (a title, a clear screen, a clipboard write).
            #expect(!text.unicodeScalars.contains("\u{1B}") && !text.unicodeScalars.contains("\u{07}"), "\(text)")
            #expect(desktops.servers[0].notifications.count == 1, "run's toast, on ana's desktop")
        }
    }

    @Test func getentIsNeverTakenFromTheCallersPath() async throws {
        try await withDesktops(of: []) { desktops in
            // A service whose PATH a user can write to: a `getent` planted there must not run as root.
            let planted = "\(desktops.directory)/bin"
            try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: true)
            let marker = "\(desktops.directory)/planted-getent-ran"
            try "#!/bin/sh\ntouch \(marker)\n".write(toFile: "\(planted)/getent", atomically: true, encoding: .utf8)
            #expect(chmod("\(planted)/getent", 0o755) == 0)
            var environment = desktops.environment
            environment["PATH"] = "\(planted):/usr/bin:/bin"
            let run = try await toastkit(["--user", "no-such-user-xyz", "send", "x"], environment: environment)
            #expect(run.status == 64, "\(run.error)")
            #expect(run.error == "toastkit: --user no-such-user-xyz: no such user\n", "\(run.error)")
            #expect(!FileManager.default.fileExists(atPath: marker), "root ran the getent on the caller's PATH")
        }
    }

    @Test func aStoppedUserCannotHoldRootAndTheOthersStillGetTheToast() async throws {
        let (ana, ben) = (try TestUsers.user("as-stop-a"), try TestUsers.user("as-stop-b"))
        try await withDesktops(of: [ana, ben]) { desktops in
            let root = try ToolProcess.start(
                ["--user", "all", "send", "--wait", "-d", "indefinite", "Reinicio a las 12"].map { Array($0.utf8) },
                environment: desktops.environment)
            let shownToAna = try await desktops.servers[0].nextNotification()
            let shownToBen = try await desktops.servers[1].nextNotification()
            #expect(shownToAna.summary == "Reinicio a las 12" && shownToBen.summary == "Reinicio a las 12")
            // Ana stops her process (a process of hers: she may).
            let anasProcess = try await processID(of: shownToAna.sender, on: desktops.buses[0])
            #expect(kill(anasProcess, SIGSTOP) == 0)
            let line = await root.nextErrorLine()
            #expect(
                line == "toastkit: --user all: toastkit as \(ana.name) was stopped (SIGSTOP); it was ended", "\(line)")
            // Ben's toast is still his to answer.
            try desktops.servers[1].emitClosed(id: shownToBen.id, reason: 2)
            let result = await root.finish()
            #expect(result.status == 0, "one user reached: \(result.error)")
            #expect(result.error == "toastkit: --user all: reached 1 of 2 users\n", "\(result.error)")
        }
    }

    @Test func standardInputIsReadOnceAndEveryUserGetsIt() async throws {
        let (ana, ben) = (try TestUsers.user("as-stdin-a"), try TestUsers.user("as-stdin-b"))
        try await withDesktops(of: [ana, ben]) { desktops in
            let run = try await toastkit(
                ["--user", "all", "send", "Aviso", "-"], environment: desktops.environment,
                stdin: Array("El servidor se reinicia a las 12\n".utf8))
            #expect(run.status == 0, "\(run.error)")
            #expect(run.error.isEmpty, "\(run.error)")
            for server in desktops.servers {
                #expect(server.notifications.map(\.arguments.body) == ["El servidor se reinicia a las 12"])
            }
        }
    }

    @Test func everyUsersExpiredToastCountsAsReached() async throws {
        let (ana, ben) = (try TestUsers.user("as-exp-a"), try TestUsers.user("as-exp-b"))
        try await withDesktops(of: [ana, ben]) { desktops in
            let root = try ToolProcess.start(
                ["--user", "all", "send", "--wait", "-d", "indefinite", "Listo"].map { Array($0.utf8) },
                environment: desktops.environment)
            for server in desktops.servers {
                let shown = try await server.nextNotification()
                try server.emitClosed(id: shown.id, reason: 1)
            }
            let result = await root.finish()
            #expect(result.status == 3, "both expired: \(result.error)")
            #expect(result.error.isEmpty, "both were reached: \(result.error)")
        }
    }

    @Test func ctrlCEndsRootAtOnceAndTheUsersToastIsClosed() async throws {
        let ana = try TestUsers.user("as-int")
        try await withDesktops(of: [ana]) { desktops in
            let root = try ToolProcess.start(
                ["--user", ana.name, "send", "--wait", "-d", "indefinite", "Esperando"].map { Array($0.utf8) },
                environment: desktops.environment)
            let shown = try await desktops.servers[0].nextNotification()
            root.signal(SIGINT)
            let result = await root.finish()
            #expect(result.status == 130, "\(result.error)")
            // The user's command got the Ctrl-C and closed its toast before it ended.
            _ = try await Deadline.run(within: .seconds(10), "the toast's CloseNotification") { () -> Bool? in
                for await event in desktops.servers[0].events {
                    if case .close(let id) = event, id == shown.id { return true }
                }
                return nil
            }
        }
    }
}
