// Waiting for some work or for a time limit, whichever comes first, without waiting for the other.
import Synchronization

/// Waits for work or for a limit, whichever comes first.
package enum FirstOf {
    /// Waits for `work`, or for `limit` to pass, whichever comes first.
    ///
    /// Not a task group: a group waits for every child at its end, and `work` may await something that does not
    /// heed cancellation (a call to a process that is stopped, a sound still playing), which would make every limit
    /// that long. Here the caller goes on at the first of the two; the other finishes, or sleeps out, on its own
    /// (`work` is cancelled at the limit).
    package static func wait(for work: @escaping @Sendable () async -> Void, orAfter limit: Duration) async {
        final class Once: Sendable {
            private let done = Mutex(false)
            let continuation: CheckedContinuation<Void, Never>
            init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
            func finish() {
                if done.withLock({ done in
                    defer { done = true }
                    return !done
                }) {
                    continuation.resume()
                }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = Once(continuation)
            let worker = Task {
                await work()
                once.finish()
            }
            Task {
                try? await Task.sleep(for: limit)
                worker.cancel()
                once.finish()
            }
        }
    }
}
