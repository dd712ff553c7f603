// The agent's one time source (the ledger's time and every timer's sleep), its waiters as ids, and the queue its
// blocking file work runs on.
import Dispatch
import Synchronization

/// The time every rule of the agent is told (``AgentLedger``, ``AgentMachine``) and every timer sleeps on: one clock,
/// counted from the agent's start.
package struct AgentTime: Sendable {
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant

    /// Time that starts now.
    package init() {
        origin = clock.now
    }

    /// The time now, since the start.
    package func now() -> Duration { clock.now - origin }

    /// Sleeps until `deadline` (a time since the start); throws when the task is cancelled.
    package func sleep(until deadline: Duration) async throws {
        try await clock.sleep(until: origin + deadline)
    }
}

/// The agent's waiters, by the ids its rules name: each resumed once, by whoever the rules say.
final class Waiters: Sendable {
    private let state = Mutex((next: UInt64(0), waiting: [UInt64: CheckedContinuation<Void, Never>]()))

    /// Waits until ``resume(_:)`` names the id `register` is given (called once the continuation is in place, so the
    /// rules may name it at once).
    func wait(_ register: (UInt64) -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = state.withLock { state in
                state.next &+= 1
                state.waiting[state.next] = continuation
                return state.next
            }
            register(id)
        }
    }

    /// Resumes the waiters `ids` (an id no longer waiting is passed over).
    func resume(_ ids: [UInt64]) {
        let continuations = state.withLock { state in ids.compactMap { state.waiting.removeValue(forKey: $0) } }
        for continuation in continuations { continuation.resume() }
    }
}

/// Runs blocking work (a file lock another process may hold, a slow disk) on a queue of its own, one job at a time,
/// and awaits it: the cooperative pool that serves the agent's calls is never held by it.
final class BlockingIO: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the queue, after what is queued, blocking the caller until it is done (the agent's last steps,
    /// which must follow every job on the queue).
    func runNow<Value>(_ body: () throws -> Value) rethrows -> Value {
        try queue.sync(execute: body)
    }

    /// Runs `body` on the queue and returns what it returned, or throws what it threw.
    func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
