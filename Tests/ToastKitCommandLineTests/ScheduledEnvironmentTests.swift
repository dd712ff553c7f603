import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// What a scheduled toast with `--on-action` keeps of its sender's environment (issue 40), end to end: the state
/// folder, which outlives the session and a reboot, gets only the kept variables; the rest waits in the runtime
/// folder, and a click in the same session runs the command with all of it; after a reboot (the runtime folder
/// emptied, a new agent) the command runs with the kept variables, and the actions log says so.
@Suite(.timeLimit(.minutes(2))) struct ScheduledEnvironmentTests {
    private static func text(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(none)"
    }

    /// The text `path` holds once a command has written its line to it, within 10 s.
    private func written(_ path: String) async throws -> String {
        try await Deadline.run(within: .seconds(10), "the action's command") { () -> String? in
            while true {
                if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") { return text }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Every regular file under `folder`, with its text and mode.
    private func files(under folder: String) -> [(path: String, text: String, mode: mode_t)] {
        let names = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
        return names.map { "\(folder)/\($0)" }.compactMap { path in
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return (path, Self.text(path), info.st_mode & 0o777)
        }
    }

    /// `send --in 1h --id ID -A x=X --shell --on-action 'x=…' TITLE`: the command writes `[$API_TOKEN] [$PATH]` to
    /// `output`.
    private func schedule(_ id: String, _ title: String, output: String, environment: [String: String]) async throws {
        let sent = try await toastkit(
            [
                "send", "--in", "1h", "--id", id, "-A", "x=X", "--shell",
                "--on-action", "x=echo \"[$API_TOKEN] [$PATH]\" > '\(output)'", title,
            ], environment: environment)
        #expect(sent.status == 0, "\(sent.error)")
    }

    @Test func theStateFolderKeepsNoSecretAndTheCommandGetsItInTheSameSessionOnly() async throws {
        try await withFakeServer { session, server in
            var environment = session.agentEnvironment
            environment["API_TOKEN"] = "s3cr3t"
            let path = try #require(environment["PATH"])
            let state = "\(session.directory)/state"
            let runtime = "\(session.directory)/runtime/toastkit"

            // Scheduled: on disk for the user, without the secret; the secret in the runtime folder only.
            try await schedule("cita", "Cita", output: "\(session.directory)/cita.txt", environment: environment)
            let stateFiles = files(under: state)
            let schedules = try #require(
                stateFiles.first { $0.path.hasSuffix("/scheduled/cita.json") }, "\(stateFiles)")
            #expect(schedules.text.contains("\"PATH\":\"\(path)\""), "\(schedules.text)")
            for file in stateFiles {
                #expect(!file.text.contains("s3cr3t"), "\(file.path): \(file.text)")
                #expect(file.mode & 0o077 == 0, "\(file.path): \(String(file.mode, radix: 8))")
            }
            let setAside = files(under: runtime).filter { $0.path.contains("/scheduled-env-") }
            #expect(setAside.count == 1 && setAside.allSatisfy { $0.text.contains("s3cr3t") && $0.mode == 0o600 })

            // Its time comes in the same session: a click runs the command with the sender's whole environment.
            try makeSchedulesDue(state)
            let cita = try await server.nextNotification(
                summary: "Cita", log: "\(session.directory)/state/toastkit/agent.log")
            try server.emitActionInvoked(id: cita.id, key: "x")
            #expect(try await written("\(session.directory)/cita.txt") == "[s3cr3t] [\(path)]\n")
            #expect(files(under: runtime).allSatisfy { !$0.path.contains("/scheduled-env-") }, "gone with its schedule")

            // A reboot: the agent stops (its schedules stay the user's), the runtime folder is emptied, a new agent.
            try await schedule("tarde", "Tarde", output: "\(session.directory)/tarde.txt", environment: environment)
            let bus = try await session.bus.connect()
            let agent = try await bus.agentPID()
            bus.close()
            kill(agent, SIGTERM)
            #expect(try await processEnds(agent, within: 30), "the agent \(agent) ignored SIGTERM")
            try FileManager.default.removeItem(atPath: runtime)
            try makeSchedulesDue(state)
            let ping = try await toastkit(["send", "--id", "ping", "-d", "5", "Hola"], environment: environment)
            #expect(ping.status == 0, "\(ping.error)")
            let tarde = try await server.nextNotification(
                summary: "Tarde", log: "\(session.directory)/state/toastkit/agent.log")
            try server.emitActionInvoked(id: tarde.id, key: "x")
            // The kept variables only: never the secret, not even from the new agent's own environment.
            #expect(try await written("\(session.directory)/tarde.txt") == "[] [\(path)]\n")
            let log = Self.text("\(state)/toastkit/actions.log")
            #expect(
                log.contains("toast tarde: the runtime file of its sender's environment is gone")
                    && log.contains("its commands run with the kept variables only"), "\(log)")
            for file in files(under: state) { #expect(!file.text.contains("s3cr3t"), "\(file.path): \(file.text)") }
        }
    }
}
