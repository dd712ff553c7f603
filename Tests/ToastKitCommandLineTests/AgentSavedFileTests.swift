// The agent's saved toasts (issue 18, point 5), end to end on dunst: they are the session bus's own, and a hostile
// file is set aside, never adopted.
import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

@Suite(.timeLimit(.minutes(3))) struct AgentSavedFileTests {
    /// Before: every agent read one `agent.json`, so an agent of a new session showed the toasts of another
    /// session's bus. Now each bus has its file: two buses sharing one runtime folder never see each other's.
    @Test func anAgentNeverAdoptsAnotherBussToasts() async throws {
        let first = try await NotificationEnvironment.start(server: .dunst)
        defer { first.stop() }
        let second = try await NotificationEnvironment.start(server: .dunst)
        defer { second.stop() }
        var envA = first.agentEnvironment
        var envB = second.agentEnvironment
        // One runtime folder for both (as without XDG_RUNTIME_DIR, or one /run/user/UID across two logins).
        envA["XDG_RUNTIME_DIR"] = "\(first.directory)/runtime"
        envB["XDG_RUNTIME_DIR"] = "\(first.directory)/runtime"
        let busA = try await first.bus.connect()
        defer { busA.close() }
        let sent = try await toastkit(["send", "--id", "mine", "-d", "indefinite", "Sesión A"], environment: envA)
        #expect(sent.status == 0 && sent.error.isEmpty, "\(sent.error)")
        try await killAgent(try await busA.agentPID(), busA)
        let other = try await toastkit(["send", "--id", "other", "-d", "indefinite", "Sesión B"], environment: envB)
        #expect(other.status == 0 && other.error.isEmpty, "\(other.error)")
        let listB = try await toastkit(["list"], environment: envB)
        #expect(listB.lines == ["other\tfront\tindefinite\tSesión B", ""] || listB.output.hasPrefix("other\t"))
        #expect(!listB.output.contains("mine"), "\(listB.output)")
        // Session A's next agent still has its own toast.
        _ = try await toastkit(["send", "--id", "again", "-d", "0.1", "A otra vez"], environment: envA)
        let listA = try await toastkit(["list"], environment: envA)
        #expect(listA.output.hasPrefix("mine\tfront\t"), "\(listA.output)")
        #expect(!listA.output.contains("other"), "\(listA.output)")
    }

    /// Before: an `agent.json` planted by another user in a world-writable folder was adopted, and its command ran
    /// as the agent's user on a click; a FIFO hung the agent for good; a `saved_at` of -1e17 crashed every agent;
    /// a 1 GB file cost 2 GB of memory. Now each is set aside as `.refused` with one line in the log, and the agent
    /// shows the next toast at once.
    @Test func hostileSavedFilesAreSetAsideAndNeverAdopted() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let env = desktop.agentEnvironment
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            let busID = try await bus.bus.id()
            let folder = "\(desktop.directory)/runtime/toastkit"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let path = "\(folder)/agent-\(busID).json"
            let flag = "\(desktop.directory)/planted-command-ran"
            func saved(savedAt: Double, remaining: String = "5") -> String {
                """
                {"bus_id":"\(busID)","format":"toastkit-agent-journal","version":2}
                {"at":\(savedAt),"op":"put","toast":{"id":"planted","running":true,"remaining":\(remaining),\
                "request":{"title":"Planted","actions":[{"id":"open","label":"Abrir"}],\
                "on_action":{"open":["/bin/sh","-c","touch \(flag)"]}}}}

                """
            }
            let now = Date().timeIntervalSince1970
            let cases: [(String, () throws -> Void, String)] = [
                (
                    "another user's file",
                    {
                        chmod(folder, 0o777)
                        try saved(savedAt: now).write(toFile: path, atomically: false, encoding: .utf8)
                        chown(path, 65534, 65534)
                    }, "it belongs to uid 65534"
                ),
                ("a FIFO", { mkfifo(path, 0o600) }, "it is not a regular file"),
                (
                    "a time from long ago",
                    { try saved(savedAt: -1e17).write(toFile: path, atomically: false, encoding: .utf8) },
                    "is not one this agent can believe"
                ),
                (
                    "a remaining time out of range",
                    {
                        try saved(savedAt: now, remaining: "-5").write(toFile: path, atomically: false, encoding: .utf8)
                    },
                    "remaining -5.0 is out of range"
                ),
                (
                    "a file of 1 GB (sparse)",
                    {
                        let descriptor = open(path, O_WRONLY | O_CREAT, 0o600)
                        ftruncate(descriptor, 1 << 30)
                        close(descriptor)
                    }, "more than the"
                ),
            ]
            for (index, (name, plant, reason)) in cases.enumerated() {
                try plant()
                let send = try await toastkit(
                    ["send", "--id", "t\(index)", "-d", "indefinite", name], environment: env)
                #expect(send.status == 0 && send.error.isEmpty, "\(name): \(send.error)")
                let (notify, _) = try await watcher.nextNotifyAndReply()
                #expect(notify.summary == name, "\(name): the planted toast is not shown")
                #expect(access(path + ".refused", F_OK) == 0, "\(name): set aside")
                let log =
                    (try? String(contentsOfFile: "\(desktop.directory)/state/toastkit/agent.log", encoding: .utf8))
                    ?? ""
                #expect(
                    log.components(separatedBy: "\n").filter { $0.contains("not adopted") && $0.contains(reason) }
                        .count == 1, "\(name): one line naming the reason\n\(log)")
                var info = stat()
                #expect(stat(folder, &info) == 0 && info.st_mode & 0o777 == 0o700, "\(name): the folder made private")
                try await killAgent(try await bus.agentPID(), bus)
                unlink(path + ".refused")
                try? FileManager.default.removeItem(atPath: "\(desktop.directory)/state/toastkit/agent.log")
                unlink(path)
                _ = try await desktop.dunstctl("close-all")
            }
            #expect(access(flag, F_OK) != 0, "the planted command never ran")
        }
    }
}
