import ToastModel

/// Reports to the center, in order, delivered by one task on the shared pool — for both presenters: replies and
/// signals arrive on the connection's I/O thread, and what a report sets off (the center's events, action handlers,
/// observers) is app code that must never run there.
struct ReportQueue: Sendable {
    private let continuation: AsyncStream<@Sendable () -> Void>.Continuation

    /// Starts the delivering task.
    init() {
        let (stream, continuation) = AsyncStream<@Sendable () -> Void>.makeStream(bufferingPolicy: .unbounded)
        self.continuation = continuation
        Task.detached {
            for await report in stream { report() }
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
                if let events { continuation.yield { events.send(report) } }
            } else {
                rest.append(action)
            }
        }
        return rest
    }

    /// Returns once every report queued so far has been handed to the center (one more report, behind them, marks
    /// that they are through).
    func delivered() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            continuation.yield { done.resume() }
        }
    }
}
