import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import ToastModel

/// Issue 39: no lock held by another process (a `toastkit` stopped with Ctrl-Z, a slow disk) stops a command or the
/// agent for good: a lock is waited for in turn, at most a bound, and a refusal says so in one line.
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

    @Test func aLockLetGoIsTakenByTheOneThatWaited() async throws {
        let folder = try Tools.makeTemporaryDirectory(prefix: "toastkit-lock")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/x.lock"
        let held = try hold(path)
        let taken = Mutex<Bool?>(nil)
        let thread = Thread {
            let lock = try? PrivateFiles.Lock(path, within: .seconds(20))
            taken.withLock { $0 = lock != nil }
            lock?.unlock()
        }
        thread.start()
        try await Task.sleep(for: .milliseconds(100))
        #expect(taken.withLock { $0 } == nil, "it waits while the lock is held")
        close(held)
        let result = try await Deadline.run(within: .seconds(10), "the waiter's lock") { () -> Bool? in
            while true {
                if let value = taken.withLock({ $0 }) { return value }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(result, "taken once let go")
    }

    /// Before: the agent waited for the schedules' lock on the threads that serve its calls; three `send --in` held
    /// by another process's lock (a stopped toastkit) took both of a 2-core machine's, and no other `send` was
    /// answered until the lock was let go or its bound ran out. Now the store is changed on a queue of its own: an
    /// ordinary toast is shown at once meanwhile, and the scheduled ones are kept once the lock is let go.
    @Test func theAgentAnswersOthersWhileTheSchedulesLockIsHeld() async throws {
        let state = try Tools.makeTemporaryDirectory(prefix: "toastkit-lock-agent")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let session = try await BusOnlyEnvironment()
        let server = try await FakeNotificationServer.start(on: session.bus)
        defer {
            server.stop()
            session.stop()
        }
        var environment = session.agentEnvironment
        environment["XDG_STATE_HOME"] = state
        let first = try await toastkit(["send", "--id", "uno", "-d", "600", "Uno"], environment: environment)
        #expect(first.status == 0, "\(first.error)")
        #expect(try await server.nextNotification().summary == "Uno")
        try FileManager.default.createDirectory(atPath: "\(state)/toastkit", withIntermediateDirectories: true)
        let held = try hold("\(state)/toastkit/scheduled.lock")
        var heldOpen = true
        defer { if heldOpen { close(held) } }
        let scheduled = try (1...3).map { index in
            try ToolProcess.start(
                ["send", "--in", "1h", "--id", "luego\(index)", "Luego \(index)"].map { Array($0.utf8) },
                environment: environment)
        }
        // Another application's: not behind Uno in its lane.
        let now = try await toastkit(
            ["send", "-a", "otra", "--id", "ahora", "-d", "600", "Ahora"], environment: environment)
        #expect(now.status == 0, "\(now.error)")
        let shown = try await server.nextNotification(summary: "Ahora", within: .seconds(15))
        #expect(shown.summary == "Ahora")
        close(held)
        heldOpen = false
        for process in scheduled {
            let result = await process.finish()
            #expect(result.status == 0, "kept once the lock was let go: \(result.error)")
        }
        let list = try await toastkit(["list"], environment: environment)
        #expect(
            (1...3).allSatisfy { index in list.lines.contains { $0.hasPrefix("luego\(index)\t") } }, "\(list.output)")
    }
}
