// How a started program ended, read once for every program ToastKit starts (sound players, reply prompts, the
// agent, `--on-action` commands, `toastkit run`, `--user`): real processes, their real wait statuses.
import Glibc
import Testing

@testable import FreedesktopNotifications

@Suite("How a started program ended")
struct SpawnTests {
    /// Starts `/bin/sh -c script` (a failure to start throws its errno).
    private func start(_ script: String) throws -> Int32 {
        try Spawn.start(["/bin/sh", "-c", script], environment: [:], output: nil, newSession: true).get()
    }

    @Test func anExitCodeIsReadAsTheShellGivesIt() throws {
        let end = Spawn.wait(try start("exit 3"))
        #expect(end == .ended(.exited(3)))
        guard case .ended(let program) = end else { return }
        #expect(program.description == "exit 3")
        #expect(program.shellStatus == 3)
    }

    @Test func aSignalIsReadAsTheShellGivesIt() throws {
        let end = Spawn.wait(try start("kill -TERM $$"))
        #expect(end == .ended(.signaled(SIGTERM)))
        guard case .ended(let program) = end else { return }
        #expect(program.description == "signal \(SIGTERM)")
        #expect(program.shellStatus == 128 + SIGTERM)
    }

    @Test func aWaitThatDoesNotBlockSeesItRunThenItsEndOnceThenNothing() throws {
        let pid = try start("exec sleep 3600")
        #expect(Spawn.wait(pid, blocking: false) == .running)
        kill(pid, SIGKILL)
        #expect(Spawn.wait(pid) == .ended(.signaled(SIGKILL)))
        // Reaped already: a second wait sees no end rather than inventing one.
        #expect(Spawn.wait(pid) == .notSeen)
    }
}
