// The one race in the package: some work, or a time limit, whichever comes first, without waiting for the other.
import Synchronization

/// Waits for work or for a limit, whichever comes first.
///
/// Not a task group: a group waits for every child at its end, and the work may await something that does not heed
/// cancellation (a call to a process that is stopped, a sound still playing), which would make every limit that long.
/// Here the caller goes on at the first of the two; the other finishes, or sleeps out, on its own (the work is
/// cancelled at the limit).
package enum FirstOf {
    /// `work`'s result, or nil once `deadline` has passed, whichever comes first.
    package static func value<T: Sendable>(
        until deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async -> T
    ) async -> T? {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let once = Once(continuation)
            let worker = Task { once.resume(returning: await work()) }
            Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                worker.cancel()
                once.resume(returning: nil)
            }
        }
    }

    /// `work`'s result, or nil once `limit` has passed, whichever comes first.
    package static func value<T: Sendable>(
        orAfter limit: Duration, _ work: @escaping @Sendable () async -> T
    ) async -> T? {
        await value(until: .now + limit, work)
    }

    /// Waits for `work`, or for `limit` to pass, whichever comes first.
    package static func wait(for work: @escaping @Sendable () async -> Void, orAfter limit: Duration) async {
        _ = await value(until: .now + limit, work)
    }

    /// A continuation resumed by whichever answer comes first.
    private final class Once<T: Sendable>: Sendable {
        private let continuation: Mutex<CheckedContinuation<T?, Never>?>

        init(_ continuation: CheckedContinuation<T?, Never>) {
            self.continuation = Mutex(continuation)
        }

        func resume(returning value: T?) {
            continuation.withLock { $0.take() }?.resume(returning: value)
        }
    }
}
