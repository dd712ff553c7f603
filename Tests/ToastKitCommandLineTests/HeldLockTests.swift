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
}
