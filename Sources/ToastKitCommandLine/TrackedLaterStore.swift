import Synchronization
import ToastKit

/// The file store of kept toasts, telling the command when a save has finished: the model reports
/// ``ToastOutcome/deferred`` before it writes the toast, and the process must not exit in between.
final class TrackedLaterStore: LaterStore {
    private let file: FileLaterStore
    private struct State {
        var saves = 0
        var gaveUp = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(_ file: FileLaterStore) {
        self.file = file
    }

    func load() throws(LaterStoreProblem) -> [ToastLaterRecord] {
        try file.load()
    }

    func save(_ records: [ToastLaterRecord]) throws(LaterStoreProblem) {
        defer {
            let waiters = state.withLock { state in
                state.saves += 1
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        try file.save(records)
    }

    /// Waits until at least one save has finished (successfully or not), or `limit` has passed.
    func waitForSave(limit: Duration = .seconds(3)) async {
        let timeout = Task {
            try? await Task.sleep(for: limit)
            self.releaseWaiters()
        }
        defer { timeout.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.saves > 0 || state.gaveUp { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func releaseWaiters() {
        let waiters = state.withLock { state in
            state.gaveUp = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
