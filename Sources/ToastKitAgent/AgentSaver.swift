import Dispatch
import Synchronization

/// When the agent's journal is written: each change hands its record over and takes a ticket, one writer on a queue
/// of its own appends every record handed over so far in one write and flushes it to disk, and a caller that must
/// not answer before its change is on disk awaits its ticket (``durable(_:)``).
///
/// Group commit: records that arrive while a write is under way all go in the next write, so a burst of `Present`
/// calls costs a write or two, not one each, and no change waits longer than the write in progress plus its own.
/// Nothing is delayed on purpose: a change is on disk within one write of being made.
package final class AgentSaver<Record: Sendable>: Sendable {
    private struct State {
        /// Records handed over and not yet taken by the writer, in order.
        var pending: [Record] = []
        /// The newest change's ticket.
        var changed: UInt64 = 0
        /// The newest ticket whose record is on disk (or whose write failed and was reported).
        var written: UInt64 = 0
        var writing = false
        var waiters: [(ticket: UInt64, continuation: CheckedContinuation<String?, Never>)] = []
        /// The batches whose write failed, newest last (a few): their tickets and why.
        var failures: [(first: UInt64, last: UInt64, reason: String)] = []

        func failure(of ticket: UInt64) -> String? {
            failures.last { $0.first <= ticket && ticket <= $0.last }?.reason
        }
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "org.toastkit.agent.save")
    /// In a struct: a `Mutex` of a bare function type re-abstracts the closure at every access, and the chain of
    /// thunks grows with each call (each write then cost time in the number of writes so far).
    private struct Writer: Sendable {
        var write: @Sendable ([Record]) -> String?
    }
    private let writer = Mutex<Writer?>(nil)

    /// A saver that writes nothing until ``attach(_:)``.
    package init() {}

    /// Sets what a write does with a batch of records (append them, compact when due); it returns why the write
    /// failed, or nil.
    package func attach(_ write: @escaping @Sendable ([Record]) -> String?) {
        writer.withLock { $0 = Writer(write: write) }
    }

    /// Hands `record` over and starts a write if none is running. Returns the change's ticket.
    @discardableResult
    package func changed(_ record: Record) -> UInt64 {
        changed([record])
    }

    /// Hands `records` over (they go in one write) and starts a write if none is running. Returns the change's
    /// ticket.
    @discardableResult
    package func changed(_ records: [Record]) -> UInt64 {
        let (ticket, start) = state.withLock { state in
            state.pending += records
            state.changed += 1
            defer { state.writing = true }
            return (state.changed, !state.writing)
        }
        if start { queue.async { self.run() } }
        return ticket
    }

    /// Returns once the change with `ticket` has been written: nil, or why its write failed (the change is then not
    /// on disk, and the caller says so).
    @discardableResult
    package func durable(_ ticket: UInt64) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let done = state.withLock { state -> String?? in
                if state.written >= ticket { return .some(state.failure(of: ticket)) }
                state.waiters.append((ticket, continuation))
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Hands `record` over and returns once it is written: nil, or why the write failed.
    @discardableResult
    package func save(_ record: Record) async -> String? {
        await durable(changed(record))
    }

    /// Hands `records` over and returns once they are written (in one write): nil, or why the write failed.
    @discardableResult
    package func save(_ records: [Record]) async -> String? {
        await durable(changed(records))
    }

    /// Returns once every record handed over so far is written (at exit, and before `GetInfo` answers); blocks the
    /// caller's thread for at most the write in progress and one more.
    package func flush() {
        queue.sync { _ = self.writeBatch() }
    }

    /// Writes what is pending, then runs `body` on the writer's queue, where no other write can run: a compaction
    /// from outside the writer (at exit, after adoption) never races an append.
    package func barrier(_ body: () -> Void) {
        queue.sync {
            _ = writeBatch()
            body()
        }
    }

    private func run() {
        while writeBatch() {}
    }

    /// Writes what is pending; whether more came meanwhile (the writer carries on).
    @discardableResult
    private func writeBatch() -> Bool {
        let (records, first, target) = state.withLock { state in
            defer { state.pending = [] }
            return (state.pending, state.written + 1, state.changed)
        }
        var reason: String?
        if !records.isEmpty, let writer = writer.withLock({ $0 }) { reason = writer.write(records) }
        let (ready, more) = state.withLock { state in
            if let reason {
                state.failures.append((first, target, reason))
                if state.failures.count > 16 { state.failures.removeFirst() }
            }
            state.written = max(state.written, target)
            let ready = state.waiters.filter { $0.ticket <= target }.map {
                ($0.continuation, state.failure(of: $0.ticket))
            }
            state.waiters.removeAll { $0.ticket <= target }
            state.writing = !state.pending.isEmpty
            return (ready, state.writing)
        }
        for (continuation, failure) in ready { continuation.resume(returning: failure) }
        return more
    }
}
