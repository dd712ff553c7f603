import Synchronization

/// The reply slot of one method call: resumed exactly once, whoever completes it first.
///
/// `@unchecked Sendable` invariant: `call` is touched only on the I/O thread; everything else is in Mutexes.
final class PendingReply: @unchecked Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<DBusMessage, any Error>)
        case done(Result<DBusMessage, any Error>)
        case finished
    }

    private let state = Mutex(State.idle)
    private let cancelled = Atomic(false)
    /// For callback-style calls: run with the result instead of resuming a continuation (exactly once).
    private let handler: (@Sendable (Result<DBusMessage, any Error>) -> Void)?
    private let handled = Atomic(false)
    var call: RawConnection.PendingCall?

    init(handler: (@Sendable (Result<DBusMessage, any Error>) -> Void)? = nil) {
        self.handler = handler
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    func markCancelled() { cancelled.store(true, ordering: .releasing) }

    func complete(_ result: Result<DBusMessage, any Error>) {
        if let handler {
            if !handled.exchange(true, ordering: .acquiringAndReleasing) { handler(result) }
            return
        }
        let waiting: CheckedContinuation<DBusMessage, any Error>? = state.withLock { state in
            switch state {
            case .idle:
                state = .done(result)
                return nil
            case .waiting(let continuation):
                state = .finished
                return continuation
            case .done, .finished:
                return nil
            }
        }
        waiting?.resume(with: result)
    }

    func wait(_ continuation: CheckedContinuation<DBusMessage, any Error>) {
        let result: Result<DBusMessage, any Error>? = state.withLock { state in
            switch state {
            case .idle:
                state = .waiting(continuation)
                return nil
            case .done(let result):
                state = .finished
                return result
            case .waiting, .finished:
                return nil
            }
        }
        if let result { continuation.resume(with: result) }
    }
}
