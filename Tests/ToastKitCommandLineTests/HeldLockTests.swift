import Foundation
import Glibc
import TestSupport
import Testing

@testable import ToastModel

/// Issue 39: no lock held by another process (a `toastkit` stopped with Ctrl-Z, a slow disk) stops the agent or a
/// command for good: a lock is waited for at most a bound, and a refusal says so in one line.
@Suite(.timeLimit(.minutes(2))) struct HeldLockTests {
    /// Holds an exclusive `flock` on `path` as another process would (another open file description).
    private func hold(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else {
            throw TestEnvironmentError("cannot hold \(path): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    @Test func aHeldLockIsWaitedForAtMostItsBound() throws {
        let folder = try Tools.makeTemporaryDirectory(prefix: "toastkit-lock")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/x.lock"
        let held = try hold(path)
        let started = ContinuousClock.now
        #expect {
            _ = try PrivateFiles.Lock(path, within: .milliseconds(200))
        } throws: { error in
            (error as? PrivateFileError)?.description
                == "cannot lock \(path): it stayed locked for 200 ms (by another process: a stopped or hung toastkit, a slow disk?)"
        }
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        close(held)
        // Released: taken at once.
        let lock = try PrivateFiles.Lock(path, within: .milliseconds(200))
        lock.unlock()
    }

    @Test func aHeldScheduleLockCostsTheScheduleALineAndNeverTheAgent() async throws {
        try await withFakeServer { environment, server in
            let env = environment.agentEnvironment
            let first = try await toastkit(["send", "-d", "60", "Hola"], environment: env)
            #expect(first.status == 0, "\(first.error)")
            _ = try await server.nextNotification()
            // Another process of the user holds the schedules' lock and never lets go.
            let folder = "\(environment.directory)/state/toastkit"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let held = try hold("\(folder)/scheduled.lock")
            defer { close(held) }
            let scheduled = try await toastkit(["send", "--in", "1h", "--id", "te", "Té"], environment: env)
            #expect(scheduled.status == 69, "\(scheduled.error)")
            #expect(
                scheduled.error.contains("scheduled.lock: it stayed locked for 5 s"), "\(scheduled.error)")
            // The agent answers everyone else meanwhile and after.
            let list = try await toastkit(["list"], environment: env)
            #expect(list.status == 0 && list.output.contains("Hola"), "\(list.output)\(list.error)")
        }
    }
}
