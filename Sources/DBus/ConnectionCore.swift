internal import CDBus
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
/// `@unchecked Sendable` invariant: `raw`, `watches`, `timeouts`, `pending` and `closing` are touched only on the
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

    private struct Watch {
        let watch: OpaquePointer
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
    private var raw: OpaquePointer?
    private var watches: [Watch] = []
    private var timeouts = DeadlineQueue<OpaquePointer>()
    private var pending: [ObjectIdentifier: PendingReply] = [:]
    private var closing: DBusError?
    private let thread = Mutex<pthread_t?>(nil)
    /// The I/O thread's `pthread_self()`, set when it starts: what ``assertOnIOThread(_:)`` compares with.
    private let ioThread = Atomic<UInt>(0)

    /// Runs Swift tasks on the I/O thread (see ``DBusConnection/executor``). Set once in `init`.
    private(set) var executor: IOTaskExecutor!

    init(
        deliver: @escaping @Sendable (ConnectionCore, DBusMessage) -> Bool,
        onClose: @escaping @Sendable (DBusError) -> Void
    ) throws(DBusError) {
        let fd = cdbus_eventfd()
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
        cdbus_set_thread_name("dbus-io")
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        guard let connection = dbus_connection_open_private(address, &error) else {
            let failure = DBusError.take(&error) ?? DBusError(name: DBusError.Name.noServer, message: "cannot connect")
            finishBeforeRunning(started: started, failure: failure)
            return
        }
        // A lost bus must never end the process (the default for bus connections is `_exit(1)`).
        dbus_connection_set_exit_on_disconnect(connection, 0)
        // Read ahead no more than this of messages not yet handled (libdbus's default is 63 MiB): a stranger's huge
        // signals are then read one at a time, whatever the scheduling, so the memory they cost is bounded.
        dbus_connection_set_max_received_size(connection, Limits.maxReadAhead)
        guard dbus_bus_register(connection, &error) != 0 else {
            let failure = DBusError.take(&error) ?? DBusError.disconnected("the bus refused Hello")
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            finishBeforeRunning(started: started, failure: failure)
            return
        }
        raw = connection
        let uniqueName = dbus_bus_get_unique_name(connection).map { String(cString: $0) } ?? ""
        installCallbacks(connection)
        started.resume(returning: uniqueName)
        run()
    }

    private func finishBeforeRunning(started: CheckedContinuation<String, any Error>, failure: DBusError) {
        let leftovers = inbox.withLock { inbox in
            inbox.closed = failure
            defer { inbox.operations = [] }
            return inbox.operations
        }
        for operation in leftovers { refuse(operation, because: failure) }
        started.resume(throwing: failure)
    }

    private func installCallbacks(_ connection: OpaquePointer) {
        assertOnIOThread()
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = dbus_connection_add_filter(
            connection,
            { _, message, data in
                let core = Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue()
                return core.filter(message!)
            }, me, nil)
        _ = dbus_connection_set_watch_functions(
            connection,
            { watch, data in
                Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue().addWatch(watch!)
            },
            { watch, data in
                Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue().removeWatch(watch!)
            },
            { watch, data in
                Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue().toggleWatch(watch!)
            }, me, nil)
        _ = dbus_connection_set_timeout_functions(
            connection,
            { timeout, data in
                Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue().addTimeout(timeout!)
            },
            { timeout, data in
                Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue().removeTimeout(timeout!)
            },
            { timeout, data in
                Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue().toggleTimeout(timeout!)
            }, me, nil)
        // No wake-up function: libdbus calls it only from this thread, which dispatches before it polls again.
    }

    private func run() {
        assertOnIOThread()
        var pollFDs: [pollfd] = []
        var polled: [OpaquePointer?] = []
        while true {
            processInbox()
            dispatchAll()
            if closing != nil { break }

            pollFDs.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            polled.append(nil)
            for entry in watches where entry.enabled {
                let flags = dbus_watch_get_flags(entry.watch)
                var events: Int16 = 0
                if flags & CDBUS_WATCH_READABLE != 0 { events |= Int16(POLLIN) }
                if flags & CDBUS_WATCH_WRITABLE != 0 { events |= Int16(POLLOUT) }
                pollFDs.append(pollfd(fd: dbus_watch_get_unix_fd(entry.watch), events: events, revents: 0))
                polled.append(entry.watch)
            }
            sleeping.store(true, ordering: .sequentiallyConsistent)
            // Re-check after announcing sleep: a post made before the store did not write the eventfd.
            let busy = inbox.withLock { !$0.operations.isEmpty }
            let result = poll(&pollFDs, nfds_t(pollFDs.count), busy ? 0 : nextTimeoutMilliseconds())
            sleeping.store(false, ordering: .sequentiallyConsistent)
            if result < 0 && errno != EINTR {
                closing = DBusError(name: DBusError.Name.failed, message: "poll failed: \(errnoText())")
                break
            }
            if pollFDs[0].revents != 0 {
                var value: UInt64 = 0
                _ = read(wakeFD, &value, 8)
            }
            for index in 1..<pollFDs.count where pollFDs[index].revents != 0 {
                guard let watch = polled[index], watches.contains(where: { $0.watch == watch && $0.enabled })
                else { continue }
                let revents = Int32(pollFDs[index].revents)
                var flags: UInt32 = 0
                if revents & Int32(POLLIN) != 0 { flags |= CDBUS_WATCH_READABLE }
                if revents & Int32(POLLOUT) != 0 { flags |= CDBUS_WATCH_WRITABLE }
                if revents & Int32(POLLERR) != 0 { flags |= CDBUS_WATCH_ERROR }
                if revents & Int32(POLLHUP) != 0 { flags |= CDBUS_WATCH_HANGUP }
                _ = dbus_watch_handle(watch, flags)
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
        guard let raw else { return }
        for operation in operations {
            if let closing {
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
                var call: OpaquePointer?
                let sent = dbus_connection_send_with_reply(raw, message.raw, &call, timeout)
                message.release()
                guard sent != 0, let call else {
                    reply.complete(.failure(sent == 0 ? DBusError.noMemory : DBusError.disconnected()))
                    continue
                }
                reply.call = call
                pending[ObjectIdentifier(reply)] = reply
                let box = Unmanaged.passRetained(NotifyBox(core: self, reply: reply)).toOpaque()
                _ = dbus_pending_call_set_notify(
                    call,
                    { call, data in
                        let box = Unmanaged<NotifyBox>.fromOpaque(data!).takeUnretainedValue()
                        box.core.completed(call!, box.reply)
                    }, box, { data in Unmanaged<NotifyBox>.fromOpaque(data!).release() })
                // Completed before the notify function was set (cannot happen on this thread, but cheap to check).
                if dbus_pending_call_get_completed(call) != 0 { completed(call, reply) }
            case .send(let message):
                let sent = dbus_connection_send(raw, message.raw, nil)
                message.release()
                if sent == 0 { closing = .noMemory }
            case .cancel(let reply):
                guard let call = reply.call, pending.removeValue(forKey: ObjectIdentifier(reply)) != nil else {
                    continue
                }
                dbus_pending_call_cancel(call)
                dbus_pending_call_unref(call)
                reply.call = nil
                reply.complete(.failure(CancellationError()))
            case .close:
                closing = .disconnected("the connection was closed")
            }
        }
    }

    private final class NotifyBox {
        let core: ConnectionCore
        let reply: PendingReply
        init(core: ConnectionCore, reply: PendingReply) {
            self.core = core
            self.reply = reply
        }
    }

    private func completed(_ call: OpaquePointer, _ reply: PendingReply) {
        assertOnIOThread()
        guard pending.removeValue(forKey: ObjectIdentifier(reply)) != nil else { return }
        reply.call = nil
        reply.complete(DBusMessage.reply(of: call).mapError { $0 as any Error })
    }

    private func dispatchAll() {
        assertOnIOThread()
        guard let raw else { return }
        while dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS {
            _ = dbus_connection_dispatch(raw)
        }
    }

    private func filter(_ message: OpaquePointer) -> DBusHandlerResult {
        assertOnIOThread()
        if dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
            if closing == nil { closing = .disconnected("the bus closed the connection") }
            return DBUS_HANDLER_RESULT_HANDLED
        }
        let decoded = DBusMessage(decoding: message)
        return deliver(self, decoded) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }

    private func shutDown() {
        assertOnIOThread()
        let reason = closing ?? .disconnected()
        let leftovers = inbox.withLock { inbox in
            inbox.closed = reason
            defer { inbox.operations = [] }
            return inbox.operations
        }
        for operation in leftovers { refuse(operation, because: reason) }
        if let raw {
            dbus_connection_close(raw)
            // Lets libdbus complete what it still holds (pending calls get their Disconnected errors).
            dispatchAll()
            for reply in pending.values {
                if let call = reply.call {
                    dbus_pending_call_cancel(call)
                    dbus_pending_call_unref(call)
                    reply.call = nil
                }
                reply.complete(.failure(reason))
            }
            pending = [:]
            dbus_connection_unref(raw)
            self.raw = nil
        }
        watches = []
        timeouts.removeAll()
        thread.withLock { $0 = nil }
        onClose(reason)
    }

    // MARK: - Watches and timeouts (called by libdbus on the I/O thread)

    private func addWatch(_ watch: OpaquePointer) -> dbus_bool_t {
        assertOnIOThread()
        watches.append(Watch(watch: watch, enabled: dbus_watch_get_enabled(watch) != 0))
        return 1
    }

    private func removeWatch(_ watch: OpaquePointer) {
        assertOnIOThread()
        watches.removeAll { $0.watch == watch }
    }

    private func toggleWatch(_ watch: OpaquePointer) {
        assertOnIOThread()
        if let index = watches.firstIndex(where: { $0.watch == watch }) {
            watches[index].enabled = dbus_watch_get_enabled(watch) != 0
        }
    }

    private static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    private static func deadline(for timeout: OpaquePointer) -> UInt64 {
        now() + UInt64(max(0, dbus_timeout_get_interval(timeout))) * 1_000_000
    }

    private func addTimeout(_ timeout: OpaquePointer) -> dbus_bool_t {
        assertOnIOThread()
        timeouts.set(timeout, enabled: dbus_timeout_get_enabled(timeout) != 0, deadline: Self.deadline(for: timeout))
        return 1
    }

    private func removeTimeout(_ timeout: OpaquePointer) {
        assertOnIOThread()
        timeouts.remove(timeout)
    }

    private func toggleTimeout(_ timeout: OpaquePointer) {
        assertOnIOThread()
        guard timeouts.contains(timeout) else { return }
        timeouts.set(timeout, enabled: dbus_timeout_get_enabled(timeout) != 0, deadline: Self.deadline(for: timeout))
    }

    private func nextTimeoutMilliseconds() -> Int32 {
        assertOnIOThread()
        guard let nearest = timeouts.nearest() else { return -1 }
        let now = Self.now()
        guard nearest > now else { return 0 }
        // Round up so the timeout has really passed when poll returns.
        return Int32(clamping: (nearest - now + 999_999) / 1_000_000)
    }

    private func handleExpiredTimeouts() {
        assertOnIOThread()
        guard let nearest = timeouts.nearest() else { return }
        let now = Self.now()
        guard nearest <= now else { return }
        for timeout in timeouts.takeDue(now: now) {
            // An earlier handler may have removed it.
            guard timeouts.contains(timeout) else { continue }
            timeouts.set(
                timeout, enabled: dbus_timeout_get_enabled(timeout) != 0, deadline: Self.deadline(for: timeout))
            _ = dbus_timeout_handle(timeout)
        }
    }
}
