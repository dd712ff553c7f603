import Synchronization
import ToastModel

/// Reports to the center, in order, delivered by one task on the shared pool — for both presenters: replies and
/// signals arrive on the connection's I/O thread, and what a report sets off (the center's events, action handlers,
/// observers) is app code that must never run there.
struct ReportQueue: Sendable {
    /// How many reports are queued and not yet handed over.
    private final class Pending: Sendable {
        let count = Atomic(0)
    }

    private let continuation: AsyncStream<@Sendable () -> Void>.Continuation
    /// Reports queued and not yet handed over: with none, ``delivered()`` returns at once (no trip through the
    /// delivering task on the path of every toast a service answers for).
    private let pending = Pending()

    /// Starts the delivering task.
    init() {
        let (stream, continuation) = AsyncStream<@Sendable () -> Void>.makeStream(bufferingPolicy: .unbounded)
        self.continuation = continuation
        Task.detached { [pending] in
            for await report in stream {
                report()
                pending.count.subtract(1, ordering: .releasing)
            }
        }
    }

    /// Ends the delivering task once what is queued is delivered.
    func finish() {
        continuation.finish()
    }

    /// Queues the reports among a machine's `actions` for `events`, keeping the machine's order (the caller holds its
    /// lock), and returns the other actions, to be carried out outside the lock.
    func queueReports<Action>(
        _ actions: [Action], to events: ToastPresenterEvents?, report: (Action) -> ToastPresenterReport?
    ) -> [Action] {
        guard !actions.isEmpty else { return [] }
        var rest: [Action] = []
        for action in actions {
            if let report = report(action) {
                if let events {
                    pending.count.add(1, ordering: .relaxed)
                    continuation.yield { events.send(report) }
                }
            } else {
                rest.append(action)
            }
        }
        return rest
    }

    /// Returns once every report queued so far has been handed to the center (one more report, behind them, marks
    /// that they are through).
    func delivered() async {
        guard pending.count.load(ordering: .acquiring) > 0 else { return }
        pending.count.add(1, ordering: .relaxed)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            continuation.yield { done.resume() }
        }
    }
}
