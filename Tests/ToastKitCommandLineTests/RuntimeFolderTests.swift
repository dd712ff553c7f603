// Issue 40, "one runtime folder per user that no one else can take", end to end: a cron job's hand-over lands where
// the agent the bus starts looks, and a `/tmp/toastkit-UID` that another real user planted neither loses a toast nor
// switches the agent off. The folder choice itself: ToastModelTests/RuntimeFolderTests.

import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

@Suite(.timeLimit(.minutes(2))) struct RuntimeFolderTests {
    /// The names in `folder` (none when it does not exist).
    private func names(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    /// The next `CloseNotification` the server gets.
    private func nextClose(_ server: FakeNotificationServer) async -> UInt32? {
        for await event in server.events {
            if case .close(let id) = event { return id }
        }
        return nil
    }

    /// Cron gives a job HOME, PATH and SHELL: `send` finds the bus at `/run/user/UID/bus` (here a stand-in root) and
    /// hands its timed toast over in `/run/user/UID/toastkit`, where the agent the bus starts (D-Bus activation, whose
    /// environment has `XDG_RUNTIME_DIR=/run/user/UID`) finds it and closes the toast on time. Before issue 40 the
    /// hand-over went to `/tmp/toastkit-UID`, which that agent never read: the toast was never closed.
    @Test func aCronJobsHandOverIsTakenByTheAgentTheBusStarts() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let server = try await FakeNotificationServer.start(on: environment.bus)
        defer { server.stop() }
        let root = "\(environment.directory)/run-user"
        let users = "\(root)/\(geteuid())"
        try FileManager.default.createDirectory(
            atPath: users, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let socket = try #require(
            environment.bus.address.split(separator: ",").first.map { String($0.dropFirst("unix:path=".count)) })
        #expect(link(socket, "\(users)/bus") == 0, "\(String(cString: strerror(errno)))")

        let cron = [
            "HOME": environment.directory, "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "LANGUAGE": "en",
            "TOASTKIT_USER_RUNTIME_ROOT": root,
            // The hand-over is written, no agent started: the one the bus would start is started below.
            "TOASTKIT_FAILPOINT_HANDOVER": "no-start",
        ]
        let started = ContinuousClock.now
        let send = try await toastkit(["send", "-d", "2", "Copia lista"], environment: cron)
        #expect(send.status == 0 && send.error.isEmpty, "\(send.error)")
        let shown = try await server.nextNotification()
        #expect(shown.summary == "Copia lista")
        let handOvers = names(in: "\(users)/toastkit").filter { $0.hasPrefix("handover-") }
        #expect(handOvers.count == 1, "the hand-over is in \(users)/toastkit: \(names(in: "\(users)/toastkit"))")

        // The agent as the bus starts it: the bus's own address, the user's runtime folder, no session variables.
        let activated = [
            "HOME": environment.directory, "PATH": "/usr/bin:/bin", "LANGUAGE": "en", "XDG_RUNTIME_DIR": users,
            "DBUS_STARTER_ADDRESS": environment.bus.address, "DBUS_STARTER_BUS_TYPE": "session",
            "TOASTKIT_USER_RUNTIME_ROOT": root,
        ]
        let agent = try ToolProcess.start([Array("agent".utf8)], environment: activated)
        defer { agent.signal(SIGTERM) }
        let closed = try await Deadline.run(within: .seconds(20), "the agent closing the handed-over toast") {
            await nextClose(server)
        }
        #expect(closed == shown.id)
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(1950), "closed after \(elapsed), before its two seconds")
        #expect(names(in: "\(users)/toastkit").filter { $0.hasPrefix("handover-") }.isEmpty, "taken over")
    }

    /// How another user plants `/tmp/toastkit-<victim's uid>`.
    enum Planting: String, CaseIterable, Sendable {
        /// A folder of the planter's, open to all (so that a write into it would succeed).
        case folder
        /// A link, owned by the planter, to such a folder.
        case link
    }

    /// Another local user creates `/tmp/toastkit-UID` before a user that has no `XDG_RUNTIME_DIR` and no
    /// `/run/user/UID` (a cron job on a machine without logind): `send --on-action`, `--in` and `--id` still work —
    /// through the agent, and directly — each run says once on stderr that the folder was refused and where the
    /// files are kept instead (the agent says it in `agent.log`), and nothing is ever written into the planted
    /// folder. Before issue 40 the agent refused to start (exit 74) and the commands that need it exited 69.
    @Test(arguments: Planting.allCases) func aFolderPlantedInTmpByAnotherUserIsRefusedAndNothingIsLost(
        _ planting: Planting
    ) async throws {
        let victim = try TestUsers.user("rt-victim-\(planting.rawValue)")
        let planter = try TestUsers.user("rt-planter")
        let shared = "/tmp/toastkit-\(victim.uid)"
        let planted = "/tmp/toastkit-planted-by-\(planter.uid)-for-\(victim.uid)"
        let cleanUp = {
            for path in [shared, planted] { try? FileManager.default.removeItem(atPath: path) }
        }
        cleanUp()
        defer { cleanUp() }
        // Left by an earlier run of this test: the victim starts with nothing of toastkit's in its home.
        for path in ["\(victim.home)/.cache/toastkit", "\(victim.home)/.local/state/toastkit"] {
            try? FileManager.default.removeItem(atPath: path)
        }
        let folder = planting == .folder ? shared : planted
        #expect(mkdir(folder, 0o777) == 0 && chmod(folder, 0o777) == 0 && chown(folder, planter.uid, planter.gid) == 0)
        if planting == .link {
            #expect(symlink(planted, shared) == 0 && lchown(shared, planter.uid, planter.gid) == 0)
        }

        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-runtime-folder")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bus = try await PrivateBus.start(everyUser: true)
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        // The bus's own folder is root's alone: its socket is linked into one the victim may enter.
        #expect(chmod(directory, 0o755) == 0)
        let socket = try #require(
            bus.address.split(separator: ",").first.map { String($0.dropFirst("unix:path=".count)) })
        #expect(link(socket, "\(directory)/bus") == 0, "\(String(cString: strerror(errno)))")
        let environment = [
            "HOME": victim.home, "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "LANGUAGE": "en",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory)/bus",
            // No /run/user/UID for the victim.
            "TOASTKIT_USER_RUNTIME_ROOT": "\(directory)/no-run-user", "TOASTKIT_AGENT_START_TIMEOUT": "30",
        ]
        let fallback = "\(victim.home)/.cache/toastkit/run"
        let kind = planting == .folder ? "belongs to uid \(planter.uid), not \(victim.uid)" : "is a symbolic link"
        let refusal = "toastkit: refusing \(shared), which \(kind); keeping this user's runtime files in \(fallback)\n"

        let action = try await toastkit(
            as: victim, ["send", "-A", "ok=Vale", "--on-action", "ok=true", "-d", "300", "Con acción"],
            environment: environment)
        #expect(action.status == 0, "\(action.error)")
        #expect(action.error == refusal, "\(action.error)")
        let later = try await toastkit(
            as: victim, ["send", "--in", "1s", "-a", "Recordatorio", "-d", "300", "Luego"], environment: environment)
        #expect(later.status == 0, "\(later.error)")
        #expect(later.error == refusal, "\(later.error)")
        let withID = try await toastkit(
            as: victim, ["send", "--id", "copia", "-d", "300", "Con id"], environment: environment)
        #expect(withID.status == 0, "\(withID.error)")
        #expect(withID.error == refusal, "\(withID.error)")
        var direct = environment
        direct["TOASTKIT_NO_AGENT"] = "1"
        let directID = try await toastkit(as: victim, ["send", "--id", "directo", "Directo"], environment: direct)
        #expect(directID.status == 0, "\(directID.error)")
        #expect(directID.error == refusal, "\(directID.error)")

        // The scheduled one is shown by the agent a second later.
        let expected: Set = ["Con acción", "Luego", "Con id", "Directo"]
        let waitUntil = ContinuousClock.now + .seconds(20)
        while !expected.isSubset(of: Set(server.notifications.map(\.summary))), ContinuousClock.now < waitUntil {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(Set(server.notifications.map(\.summary)) == expected, "\(server.notifications.map(\.summary))")
        #expect(names(in: folder).isEmpty, "nothing written into the planted folder: \(names(in: folder))")
        #expect(names(in: fallback).contains("ids.json"), "the --id store: \(names(in: fallback))")
        #expect(names(in: fallback).contains { $0.hasPrefix("agent-") }, "the agent's journal: \(names(in: fallback))")
        let log = (try? String(contentsOfFile: "\(victim.home)/.local/state/toastkit/agent.log", encoding: .utf8)) ?? ""
        #expect(log.contains(refusal), "the agent's log: \(log)")
        var info = stat()
        #expect(lstat(fallback, &info) == 0 && info.st_uid == victim.uid && info.st_mode & 0o777 == 0o700)
    }
}
