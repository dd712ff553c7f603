import Dispatch
import Synchronization

/// When the agent's saved file is written: each change takes a ticket, one writer on a queue of its own rewrites the
/// file with a fresh snapshot as soon as it can, and a caller that must not answer before its change is on disk
/// awaits its ticket (``durable(_:)``).
///
/// Group commit: changes that arrive while a write is under way are all covered by the next write, so a burst of
/// `Present` calls costs a write or two, not one each, and no change waits longer than the write in progress plus
/// its own. Nothing is delayed on purpose: a change is on disk within one write of being made.
final class AgentSaver: Sendable {
    private struct State {
        /// The newest change's ticket.
        var changed: UInt64 = 0
        /// The newest ticket whose change is on disk (or whose write failed and was reported).
        var written: UInt64 = 0
        var writing = false
        var waiters: [(ticket: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "org.toastkit.agent.save")
    private let writer = Mutex<(@Sendable () -> Void)?>(nil)

    /// A saver that writes nothing until ``attach(_:)``.
    init() {}

    /// Sets what a write does: snapshot the live toasts and write them.
    func attach(_ write: @escaping @Sendable () -> Void) {
        writer.withLock { $0 = write }
    }

    private func write() {
        writer.withLock { $0 }?()
    }

    /// Records a change and starts a write if none is running. Returns the change's ticket.
    @discardableResult
    func changed() -> UInt64 {
        let (ticket, start) = state.withLock { state in
            state.changed += 1
            defer { state.writing = true }
            return (state.changed, !state.writing)
        }
        if start { queue.async { self.run() } }
        return ticket
    }

    /// Returns once the change with `ticket` has been written (its write began after the change).
    func durable(_ ticket: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.written >= ticket { return true }
                state.waiters.append((ticket, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Records a change and returns once it is written.
    func save() async {
        await durable(changed())
    }

    /// Writes now, on the caller's thread's behalf, after any write under way (at exit, and before `GetInfo`
    /// answers).
    func flush() {
        let ticket = state.withLock { $0.changed }
        queue.sync {
            if state.withLock({ $0.written < ticket }) { write() }
        }
    }

    private func run() {
        while true {
            let target = state.withLock { $0.changed }
            write()
            let (ready, more) = state.withLock { state in
                state.written = max(state.written, target)
                let ready = state.waiters.filter { $0.ticket <= target }.map(\.continuation)
                state.waiters.removeAll { $0.ticket <= target }
                state.writing = state.changed > target
                return (ready, state.writing)
            }
            for continuation in ready { continuation.resume() }
            if !more { return }
        }
    }
}
