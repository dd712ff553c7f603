/// A task executor whose jobs run on a connection's I/O thread, between its polls.
///
/// A task that prefers it makes calls and receives their replies without a single thread switch: the reply's
/// continuation is resumed on the I/O thread and the task's next step runs there too, as a C client's loop would.
public final class IOTaskExecutor: TaskExecutor, @unchecked Sendable {
    // `@unchecked Sendable` invariant: `core` is unowned (the core owns the executor) and itself Sendable.
    private unowned let core: ConnectionCore

    init(core: ConnectionCore) { self.core = core }

    /// Queues a job for the I/O thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        core.post(.job(UnownedJob(job)))
    }
}
