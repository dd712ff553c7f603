import Synchronization

/// A clock whose time moves only when told to, for deterministic tests of timing code.
///
/// Sleepers wait until ``advance(by:)`` or ``advance(to:)`` passes their deadline. Code under test usually
/// sleeps on another task, so a test first waits until that sleeper is registered —
/// `await clock.sleepers(count: 1)` — then advances: no race, and no real sleeping.
///
/// ```swift
/// let clock = ManualClock()
/// let toasts = ToastCenter(presenter: presenter, clock: clock, laterStore: nil)
/// toasts.present(.normal, title: "Copiado")
/// await clock.sleepers(count: 1)
/// clock.advance(by: .seconds(4))
/// ```
public final class ManualClock: Clock, Sendable {
    /// A point in manual time: an offset from the clock's start.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The time since the clock's start.
        public var offset: Duration

        /// Creates an instant `offset` after the clock's start.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        /// Orders instants by offset.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        /// `"+<offset>"`.
        public var description: String { "+\(offset)" }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Waiter {
        var id: UInt64
        var count: Int
        /// Waits for at least `count` sleepers, or (when true) for at most `count`.
        var atMost = false
        var continuation: CheckedContinuation<Void, any Error>

        func isSatisfied(by sleepers: Int) -> Bool { atMost ? sleepers <= count : sleepers >= count }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Creates a clock at offset zero.
    public init() {}

    /// The current manual time.
    public var now: Instant { state.withLock { $0.now } }

    /// Zero: manual time has no granularity.
    public var minimumResolution: Duration { .zero }

    /// How many sleepers are waiting now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline among waiting sleepers.
    public var nextDeadline: Instant? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    /// Sleeps until ``now`` reaches `deadline`; returns at once if it already has. Throws `CancellationError`
    /// when the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Registration { case resumeNow, cancelled, waiting([CheckedContinuation<Void, any Error>]) }
                let registration: Registration = state.withLock { state in
                    // The cancellation flag is set before the handler runs, so checking it under the lock
                    // closes the window between the handler and this registration.
                    if Task.isCancelled { return .cancelled }
                    if deadline <= state.now { return .resumeNow }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return .waiting(Self.takeSatisfiedWaiters(&state))
                }
                switch registration {
                case .resumeNow: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting(let waiters): for waiter in waiters { waiter.resume() }
                }
            }
        } onCancel: {
            let (sleeper, ready) = state.withLock { state in
                (state.sleepers.removeValue(forKey: id), Self.takeSatisfiedWaiters(&state))
            }
            sleeper?.continuation.resume(throwing: CancellationError())
            for waiter in ready { waiter.resume() }
        }
    }

    /// Moves time forward by `duration` and wakes the sleepers whose deadline has come.
    public func advance(by duration: Duration) {
        let target = now.advanced(by: duration)
        advance(to: target)
    }

    /// Moves time to `instant` (never backwards) and wakes the sleepers whose deadline has come, earliest first.
    public func advance(to instant: Instant) {
        let due: ([Sleeper], [CheckedContinuation<Void, any Error>]) = state.withLock { state in
            if instant > state.now { state.now = instant }
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for key in due.keys { state.sleepers.removeValue(forKey: key) }
            return (due.values.sorted { $0.deadline < $1.deadline }, Self.takeSatisfiedWaiters(&state))
        }
        for sleeper in due.0 { sleeper.continuation.resume() }
        for waiter in due.1 { waiter.resume() }
    }

    /// Waits until at least `count` sleepers are waiting (for example, the code under test armed its timer).
    ///
    /// - Throws: ``ToastTestingTimeout`` when that does not happen within `timeout` of real time (a wrong
    ///   expectation fails the test instead of hanging it).
    public func sleepers(count: Int, timeout: Duration = .seconds(10)) async throws(ToastTestingTimeout) {
        try await wait(for: count, atMost: false, timeout: timeout)
    }

    /// Waits until at most `count` sleepers are left (for example, the code under test cancelled its timer).
    ///
    /// - Throws: ``ToastTestingTimeout`` when that does not happen within `timeout` of real time.
    public func sleepers(atMost count: Int, timeout: Duration = .seconds(10)) async throws(ToastTestingTimeout) {
        try await wait(for: count, atMost: true, timeout: timeout)
    }

    /// Waits until at least one sleeper is waiting, and returns the earliest deadline.
    ///
    /// - Throws: ``ToastTestingTimeout`` when nothing sleeps within `timeout` of real time.
    @discardableResult
    public func waitForSleeper(timeout: Duration = .seconds(10)) async throws(ToastTestingTimeout) -> Instant {
        try await sleepers(count: 1, timeout: timeout)
        return nextDeadline ?? now
    }

    private func wait(for count: Int, atMost: Bool, timeout: Duration) async throws(ToastTestingTimeout) {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let expectation = atMost ? "at most \(count)" : "at least \(count)"
        let deadline = Task { [state = self] in
            try await Task.sleep(for: timeout)
            state.expire(waiter: id)
        }
        defer { deadline.cancel() }
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { state in
                    let waiter = Waiter(id: id, count: count, atMost: atMost, continuation: continuation)
                    if waiter.isSatisfied(by: state.sleepers.count) { return true }
                    state.waiters.append(waiter)
                    return false
                }
                if ready { continuation.resume() }
            }
        } catch {
            throw ToastTestingTimeout(
                "ManualClock: waited \(timeout) for \(expectation) sleeper(s); there are \(sleeperCount), now \(now), "
                    + "next deadline \(nextDeadline.map { "\($0)" } ?? "none")")
        }
    }

    private func expire(waiter id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: CancellationError())
    }

    private static func takeSatisfiedWaiters(_ state: inout State) -> [CheckedContinuation<Void, any Error>] {
        let count = state.sleepers.count
        let ready = state.waiters.filter { $0.isSatisfied(by: count) }.map(\.continuation)
        state.waiters.removeAll { $0.isSatisfied(by: count) }
        return ready
    }
}
