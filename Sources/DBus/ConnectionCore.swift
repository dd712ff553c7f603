import Glibc
import Synchronization

/// The owner of one libdbus connection and of the thread that does all of its I/O.
///
/// Threading model (see docs/decisions/0001-connection-threading.md): every libdbus call that touches the
/// `DBusConnection*` runs on this object's I/O thread. Other threads only build messages (independent libdbus
/// objects) and post operations to the inbox, then wake the thread through an eventfd. The thread sleeps in
/// `poll()` on the connection's watches and the eventfd, with a timeout from the nearest libdbus timeout, so an
/// idle connection uses no CPU, and no thread ever blocks in `read_write_dispatch` while another sends.
///
/// Every libdbus call on the connection goes through ``RawConnection`` (LibDBusConnection.swift).
///
/// Every message the connection receives is released on this thread too: what leaves it undecoded holds a copy
/// (``MessageBody`` says why).
///
/// `@unchecked Sendable` invariant: `lifecycle`, `watches`, `timeouts` and `pending` are touched only on the
/// I/O thread (libdbus calls the watch/timeout/filter/notify callbacks there too, because nothing else drives the
/// connection); cross-thread state lives in the `inbox` Mutex; `wakeFD` is immutable and closed in `deinit`, after
/// the thread has released its reference.
final class ConnectionCore: @unchecked Sendable {
    enum Operation {
        case call(OutgoingMessage, timeoutMilliseconds: Int32, PendingReply)
        case send(OutgoingMessage)
        case cancel(PendingReply)
        case close
        /// A Swift task job to run on this thread (the connection's task executor).
        case job(UnownedJob)
    }

    private struct Inbox {
        var operations: [Operation] = []
        var closed: DBusError?
    }

    /// Where the connection is in its life (on the I/O thread).
    private enum Lifecycle {
        /// The I/O thread connects and registers.
        case starting
        /// Registered: the loop runs.
        case open(RawConnection)
        /// Closing for this reason (asked to, or the bus went away): the loop ends after this turn.
        case closing(RawConnection, DBusError)
        /// Gone (or never made), for this reason: the inbox refuses everything.
        case closed(DBusError)

        /// The libdbus connection, while there is one.
        var raw: RawConnection? {
            switch self {
            case .open(let raw), .closing(let raw, _): raw
            case .starting, .closed: nil
            }
        }

        /// Why it is closing, once it is.
        var closingReason: DBusError? {
            switch self {
            case .closing(_, let reason), .closed(let reason): reason
            case .starting, .open: nil
            }
        }
    }

    /// Starts closing the connection for `reason`, unless it is already (the first reason is the one told).
    private func beginClosing(_ reason: DBusError) {
        assertOnIOThread()
        if case .open(let raw) = lifecycle { lifecycle = .closing(raw, reason) }
    }

    /// A watch libdbus gave, and whether it is enabled (polled).
    struct Watch {
        let watch: RawConnection.Watch
        var enabled: Bool
    }

    private let inbox = Mutex(Inbox())
    /// True while the I/O thread is about to block in `poll()`: only then does a post need to write the eventfd.
    private let sleeping = Atomic<Bool>(false)
    private let wakeFD: Int32
    /// Receives every incoming message that is not a reply to a pending call; returns whether it was handled.
    private let deliver: @Sendable (ConnectionCore, DBusMessage) -> Bool
    /// Told once, on the I/O thread, when the connection is gone for good.
    private let onClose: @Sendable (DBusError) -> Void

    // I/O thread only.
    private var lifecycle = Lifecycle.starting
    var watches: [Watch] = []
    var timeouts = DeadlineQueue<RawConnection.Timeout>()
    private var pending: [ObjectIdentifier: PendingReply] = [:]
    private let thread = Mutex<pthread_t?>(nil)
    /// The I/O thread's `pthread_self()`, set when it starts: what ``assertOnIOThread(_:)`` compares with.
    private let ioThread = Atomic<UInt>(0)

    /// Runs Swift tasks on the I/O thread (see ``DBusConnection/executor``). Set once in `init`.
    private(set) var executor: IOTaskExecutor!

    init(
        deliver: @escaping @Sendable (ConnectionCore, DBusMessage) -> Bool,
        onClose: @escaping @Sendable (DBusError) -> Void
    ) throws(DBusError) {
        let fd = IOThreadShims.eventFD()
        guard fd >= 0 else { throw DBusError(name: DBusError.Name.failed, message: "eventfd: \(errnoText())") }
        wakeFD = fd
        self.deliver = deliver
        self.onClose = onClose
        executor = IOTaskExecutor(core: self)
    }

    deinit { close(wakeFD) }

    // MARK: - Start

    /// Starts the I/O thread, which connects to `address`, registers with the bus (`Hello`) and then runs the
    /// loop. Returns the unique name once registered. Nothing here blocks the caller's thread.
    func start(address: String) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            let box = StartBox(core: self, address: address, continuation: continuation)
            var tid = pthread_t()
            let result = pthread_create(
                &tid, nil,
                { argument in
                    let box = Unmanaged<StartBox>.fromOpaque(argument!).takeRetainedValue()
                    box.core.threadMain(address: box.address, started: box.continuation)
                    return nil
                }, Unmanaged.passRetained(box).toOpaque())
            if result != 0 {
                Unmanaged.passUnretained(box).release()
                continuation.resume(
                    throwing: DBusError(
                        name: DBusError.Name.failed, message: "cannot start I/O thread: error \(result)"))
            } else {
                pthread_detach(tid)
                thread.withLock { $0 = tid }
            }
        }
    }

    private final class StartBox {
        let core: ConnectionCore
        let address: String
        let continuation: CheckedContinuation<String, any Error>
        init(core: ConnectionCore, address: String, continuation: CheckedContinuation<String, any Error>) {
            self.core = core
            self.address = address
            self.continuation = continuation
        }
    }

    /// The CPU time the I/O thread has used so far (for tests that prove the loop does not spin).
    var ioThreadCPUTime: Duration? {
        guard let tid = thread.withLock({ $0 }) else { return nil }
        var clock = clockid_t()
        guard pthread_getcpuclockid(tid, &clock) == 0 else { return nil }
        var spec = timespec()
        guard clock_gettime(clock, &spec) == 0 else { return nil }
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }

    // MARK: - Posting work (any thread)

    /// Queues an operation for the I/O thread; returns the reason instead when the connection is closed.
    @discardableResult
    func post(_ operation: Operation) -> DBusError? {
        let (rejected, wake): (DBusError?, Bool) = inbox.withLock { inbox in
            if let closed = inbox.closed { return (closed, false) }
            inbox.operations.append(operation)
            return (nil, true)
        }
        if let rejected {
            refuse(operation, because: rejected)
            if case .job = operation { return nil }
            return rejected
        }
        // A busy loop takes the operation on its next turn; only a sleeping one needs the eventfd.
        if wake && sleeping.exchange(false, ordering: .sequentiallyConsistent) { wakeUp() }
        return nil
    }

    func wakeUp() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// What happens to an operation the connection can no longer carry out: a call fails with `reason`, a message
    /// is released, and a task job still runs (here, on the calling thread), because a task must never be lost.
    private func refuse(_ operation: Operation, because reason: DBusError) {
        switch operation {
        case .call(let message, _, let reply):
            message.release()
            reply.complete(.failure(reason))
        case .send(let message): message.release()
        case .cancel, .close: break
        case .job(let job): job.runSynchronously(on: executor.asUnownedTaskExecutor())
        }
    }

    var closedReason: DBusError? { inbox.withLock { $0.closed } }

    // MARK: - The I/O thread

    /// Whether the caller runs on this connection's I/O thread.
    var isOnIOThread: Bool {
        let current = UInt(pthread_self())
        return ioThread.load(ordering: .relaxed) == current
    }

    /// Debug builds stop here when `function` runs anywhere but on the I/O thread, which alone may touch the
    /// `DBusConnection*`, the watch and timeout tables and the pending calls (as swift-nio's
    /// `preconditionInEventLoop`). Release builds check nothing.
    @inline(__always)
    func assertOnIOThread(_ function: StaticString = #function) {
        assert(isOnIOThread, "ConnectionCore.\(function) must run on the connection's I/O thread")
    }

    private func threadMain(address: String, started: CheckedContinuation<String, any Error>) {
        ioThread.store(UInt(pthread_self()), ordering: .relaxed)
        IOThreadShims.nameThisThread("dbus-io")
        let connection: RawConnection
        let uniqueName: String
        do throws(DBusError) {
            connection = try RawConnection.openPrivate(address)
            // Read ahead no more than this of messages not yet handled (libdbus's default is 63 MiB): a stranger's
            // huge signals are then read one at a time, whatever the scheduling, so the memory they cost is bounded.
            connection.limitReadAhead(to: Limits.maxReadAhead)
            do throws(DBusError) {
                uniqueName = try connection.register()
            } catch {
                connection.closeAndRelease()
                throw error
            }
        } catch {
            finishBeforeRunning(started: started, failure: error)
            return
        }
        lifecycle = .open(connection)
        connection.install(self)
        started.resume(returning: uniqueName)
        run()
    }

    private func finishBeforeRunning(started: CheckedContinuation<String, any Error>, failure: DBusError) {
        lifecycle = .closed(failure)
        let leftovers = inbox.withLock { inbox in
            inbox.closed = failure
            defer { inbox.operations = [] }
            return inbox.operations
        }
        for operation in leftovers { refuse(operation, because: failure) }
        started.resume(throwing: failure)
    }

    private func run() {
        assertOnIOThread()
        var pollFDs: [pollfd] = []
        var polled: [RawConnection.Watch?] = []
        while true {
            processInbox()
            dispatchAll()
            if lifecycle.closingReason != nil { break }

            pollFDs.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            polled.append(nil)
            for entry in watches where entry.enabled {
                pollFDs.append(entry.watch.pollFD)
                polled.append(entry.watch)
            }
            sleeping.store(true, ordering: .sequentiallyConsistent)
            // Re-check after announcing sleep: a post made before the store did not write the eventfd.
            let busy = inbox.withLock { !$0.operations.isEmpty }
            let result = poll(&pollFDs, nfds_t(pollFDs.count), busy ? 0 : nextTimeoutMilliseconds())
            sleeping.store(false, ordering: .sequentiallyConsistent)
            if result < 0 && errno != EINTR {
                beginClosing(DBusError(name: DBusError.Name.failed, message: "poll failed: \(errnoText())"))
                break
            }
            if pollFDs[0].revents != 0 {
                var value: UInt64 = 0
                _ = read(wakeFD, &value, 8)
            }
            for index in 1..<pollFDs.count where pollFDs[index].revents != 0 {
                guard let watch = polled[index], watches.contains(where: { $0.watch == watch && $0.enabled })
                else { continue }
                watch.handle(revents: pollFDs[index].revents)
            }
            handleExpiredTimeouts()
        }
        shutDown()
    }

    private func processInbox() {
        assertOnIOThread()
        let operations = inbox.withLock { inbox -> [Operation] in
            defer { inbox.operations.removeAll(keepingCapacity: true) }
            return inbox.operations
        }
        guard let raw = lifecycle.raw else { return }
        for operation in operations {
            if let closing = lifecycle.closingReason {
                refuse(operation, because: closing)
                continue
            }
            switch operation {
            case .job(let job):
                job.runSynchronously(on: executor.asUnownedTaskExecutor())
            case .call(let message, let timeout, let reply):
                if reply.isCancelled {
                    message.release()
                    reply.complete(.failure(CancellationError()))
                    continue
                }
                let sent = raw.sendWithReply(message, timeoutMilliseconds: timeout)
                message.release()
                let call: RawConnection.PendingCall
                switch sent {
                case .success(let pendingCall): call = pendingCall
                case .failure(let error):
                    reply.complete(.failure(error))
                    continue
                }
                reply.call = call
                pending[ObjectIdentifier(reply)] = reply
                call.onCompletion { self.completed(call, reply) }
                // Completed before the notify function was set (cannot happen on this thread, but cheap to check).
                if call.isCompleted { completed(call, reply) }
            case .send(let message):
                let sent = raw.send(message)
                message.release()
                if !sent { beginClosing(.noMemory) }
            case .cancel(let reply):
                guard let call = reply.call, pending.removeValue(forKey: ObjectIdentifier(reply)) != nil else {
                    continue
                }
                call.cancelAndRelease()
                reply.call = nil
                reply.complete(.failure(CancellationError()))
            case .close:
                beginClosing(.disconnected("the connection was closed"))
            }
        }
    }

    private func completed(_ call: RawConnection.PendingCall, _ reply: PendingReply) {
        assertOnIOThread()
        guard pending.removeValue(forKey: ObjectIdentifier(reply)) != nil else { return }
        reply.call = nil
        reply.complete(call.takeReply().mapError { $0 as any Error })
    }

    private func dispatchAll() {
        assertOnIOThread()
        lifecycle.raw?.dispatchAll()
    }

    /// Every incoming message that is not a reply (libdbus's filter); `nil` is the bus's local `Disconnected`.
    /// Returns whether it was handled (libdbus answers an unhandled method call itself).
    func filter(_ message: OpaquePointer?) -> Bool {
        assertOnIOThread()
        guard let message else {
            beginClosing(.disconnected("the bus closed the connection"))
            return true
        }
        var delivered = DBusMessage(decoding: message)
        let handled = deliver(self, delivered)
        // What the delivery kept (a handler's call, a subscriber's signal) keeps a copy: the original is released here.
        delivered.detachFromConnection(onlyIfHeldElsewhere: true)
        return handled
    }

    private func shutDown() {
        assertOnIOThread()
        let reason = lifecycle.closingReason ?? .disconnected()
        let leftovers = inbox.withLock { inbox in
            inbox.closed = reason
            defer { inbox.operations = [] }
            return inbox.operations
        }
        for operation in leftovers { refuse(operation, because: reason) }
        if let raw = lifecycle.raw {
            // What was sent before the close goes out first (a no-reply call right before `close()`: Plasma's job
            // view's end), within a second; on a connection the bus already dropped, this returns at once.
            raw.flush(within: .seconds(1))
            raw.close()
            // Lets libdbus complete what it still holds (pending calls get their Disconnected errors).
            dispatchAll()
            for reply in pending.values {
                if let call = reply.call {
                    call.cancelAndRelease()
                    reply.call = nil
                }
                reply.complete(.failure(reason))
            }
            pending = [:]
            raw.release()
        }
        lifecycle = .closed(reason)
        watches = []
        timeouts.removeAll()
        thread.withLock { $0 = nil }
        onClose(reason)
    }
}
