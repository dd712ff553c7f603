internal import CDBus
import Glibc

// The one file that calls libdbus on a connection — `dbus_connection_*`, `dbus_bus_*`, `dbus_pending_call_*`,
// `dbus_watch_*`, `dbus_timeout_*` — and the C shims the I/O thread needs, in the shape of swift-system's
// `Internals/Syscalls.swift`: thin wrappers that say in Swift what each call does, so ``ConnectionCore`` and
// ``BlockingDBusConnection`` read as Swift, and the private open is written once. Building and reading messages keeps
// its own calls (DBusMessage, MessageEncoder, MessageDecoder).

/// A private libdbus connection this package opened and owns (see LIBDBUS-NOTES: never a shared one).
struct RawConnection {
    let pointer: OpaquePointer

    /// Opens a private connection to `address`, which a lost bus never turns into the end of the process (the
    /// default for bus connections is `_exit(1)`). Blocks while the socket connects and authenticates.
    static func openPrivate(_ address: String) throws(DBusError) -> RawConnection {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        guard let pointer = dbus_connection_open_private(address, &error) else {
            throw DBusError.take(&error) ?? DBusError(name: DBusError.Name.noServer, message: "cannot connect")
        }
        dbus_connection_set_exit_on_disconnect(pointer, 0)
        return RawConnection(pointer: pointer)
    }

    /// Registers with the bus (`Hello`, blocking) and returns the unique name it gave.
    func register() throws(DBusError) -> String {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        guard dbus_bus_register(pointer, &error) != 0 else {
            throw DBusError.take(&error) ?? DBusError.disconnected("the bus refused Hello")
        }
        return dbus_bus_get_unique_name(pointer).map { String(cString: $0) } ?? ""
    }

    /// Records the unique name a `Hello` sent as an ordinary call was given: what `register()` would have recorded,
    /// so libdbus knows the connection is registered.
    func recordUniqueName(_ name: String) {
        _ = dbus_bus_set_unique_name(pointer, name)
    }

    /// Reads ahead no more than `bytes` of messages not yet handled (one larger message is still read whole).
    func limitReadAhead(to bytes: Int) {
        dbus_connection_set_max_received_size(pointer, bytes)
    }

    /// Queues `message` for the bus; false when libdbus is out of memory.
    func send(_ message: OutgoingMessage) -> Bool {
        dbus_connection_send(pointer, message.raw, nil) != 0
    }

    /// Queues `message` with its reply awaited for `timeoutMilliseconds`: the pending call, `NoMemory`, or
    /// `Disconnected` (libdbus gives no pending call for a connection that is gone).
    func sendWithReply(_ message: OutgoingMessage, timeoutMilliseconds: Int32) -> Result<PendingCall, DBusError> {
        var call: OpaquePointer?
        guard dbus_connection_send_with_reply(pointer, message.raw, &call, timeoutMilliseconds) != 0 else {
            return .failure(.noMemory)
        }
        guard let call else { return .failure(.disconnected()) }
        return .success(PendingCall(pointer: call))
    }

    /// Writes out whatever is queued (blocking).
    func flush() { dbus_connection_flush(pointer) }

    /// Writes out whatever is queued, for at most `limit` (a peer that reads nothing cannot hold the caller).
    func flush(within limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while dbus_connection_has_messages_to_send(pointer) != 0, ContinuousClock.now < deadline {
            // Reads and writes without dispatching; false once the connection is gone.
            guard dbus_connection_read_write(pointer, 50) != 0 else { return }
        }
    }

    /// Reads, writes and dispatches for up to `timeoutMilliseconds` (blocking); false once the connection is gone.
    func readWriteDispatch(timeoutMilliseconds: Int32) -> Bool {
        dbus_connection_read_write_dispatch(pointer, timeoutMilliseconds) != 0
    }

    /// Dispatches every message already read: filters and pending-call notifications run, here.
    func dispatchAll() {
        while dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS {
            _ = dbus_connection_dispatch(pointer)
        }
    }

    /// Whether the connection is still up.
    var isConnected: Bool { dbus_connection_get_is_connected(pointer) != 0 }

    /// Closes the socket (what libdbus still holds completes on the next dispatch).
    func close() { dbus_connection_close(pointer) }

    /// Drops this package's reference: the last use of the connection.
    func release() { dbus_connection_unref(pointer) }

    /// Closes and releases it.
    func closeAndRelease() {
        close()
        release()
    }

    /// Lets `core` drive the connection: its filter gets every message (the bus's local `Disconnected` as
    /// `nil`), and its watch and timeout tables follow libdbus's. libdbus calls them on the thread that dispatches
    /// and handles the watches, which is the core's I/O thread; `core` must outlive the connection.
    func install(_ core: ConnectionCore) {
        let me = Unmanaged.passUnretained(core).toOpaque()
        _ = dbus_connection_add_filter(
            pointer,
            { _, message, data in
                let message = message!
                let handled =
                    dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0
                    ? Self.core(data).filter(nil) : Self.core(data).filter(message)
                return handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            }, me, nil)
        _ = dbus_connection_set_watch_functions(
            pointer,
            { watch, data in
                Self.core(data).addWatch(Watch(pointer: watch!))
                return 1
            },
            { watch, data in Self.core(data).removeWatch(Watch(pointer: watch!)) },
            { watch, data in Self.core(data).toggleWatch(Watch(pointer: watch!)) }, me, nil)
        _ = dbus_connection_set_timeout_functions(
            pointer,
            { timeout, data in
                Self.core(data).addTimeout(Timeout(pointer: timeout!))
                return 1
            },
            { timeout, data in Self.core(data).removeTimeout(Timeout(pointer: timeout!)) },
            { timeout, data in Self.core(data).toggleTimeout(Timeout(pointer: timeout!)) }, me, nil)
        // No wake-up function: libdbus calls it only from the I/O thread, which dispatches before it polls again.
    }

    private static func core(_ data: UnsafeMutableRawPointer?) -> ConnectionCore {
        Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue()
    }

    /// A file descriptor libdbus wants polled.
    struct Watch: Hashable {
        let pointer: OpaquePointer

        /// Whether libdbus wants it polled now.
        var isEnabled: Bool { dbus_watch_get_enabled(pointer) != 0 }

        /// What to poll: its descriptor and `poll` events.
        var pollFD: pollfd {
            let flags = dbus_watch_get_flags(pointer)
            var events: Int16 = 0
            if flags & CDBUS_WATCH_READABLE != 0 { events |= Int16(POLLIN) }
            if flags & CDBUS_WATCH_WRITABLE != 0 { events |= Int16(POLLOUT) }
            return pollfd(fd: dbus_watch_get_unix_fd(pointer), events: events, revents: 0)
        }

        /// Tells libdbus what `poll` saw on it.
        func handle(revents: Int16) {
            let revents = Int32(revents)
            var flags: UInt32 = 0
            if revents & Int32(POLLIN) != 0 { flags |= CDBUS_WATCH_READABLE }
            if revents & Int32(POLLOUT) != 0 { flags |= CDBUS_WATCH_WRITABLE }
            if revents & Int32(POLLERR) != 0 { flags |= CDBUS_WATCH_ERROR }
            if revents & Int32(POLLHUP) != 0 { flags |= CDBUS_WATCH_HANGUP }
            _ = dbus_watch_handle(pointer, flags)
        }
    }

    /// A timer libdbus wants run (a call's reply timeout, for one).
    struct Timeout: Hashable {
        let pointer: OpaquePointer

        /// Whether it runs now.
        var isEnabled: Bool { dbus_timeout_get_enabled(pointer) != 0 }

        /// Its interval, in milliseconds.
        var intervalMilliseconds: Int { Int(max(0, dbus_timeout_get_interval(pointer))) }

        /// Tells libdbus its time has come.
        func handle() { _ = dbus_timeout_handle(pointer) }
    }

    /// A call waiting for its reply.
    struct PendingCall {
        let pointer: OpaquePointer

        /// Whether its reply (or its timeout's error) is in.
        var isCompleted: Bool { dbus_pending_call_get_completed(pointer) != 0 }

        /// Runs `completed` when it completes (on the thread that dispatches); the action is released with the call.
        func onCompletion(_ completed: @escaping () -> Void) {
            final class Action {
                let run: () -> Void
                init(_ run: @escaping () -> Void) { self.run = run }
            }
            _ = dbus_pending_call_set_notify(
                pointer, { _, data in Unmanaged<Action>.fromOpaque(data!).takeUnretainedValue().run() },
                Unmanaged.passRetained(Action(completed)).toOpaque(),
                { data in Unmanaged<Action>.fromOpaque(data!).release() })
        }

        /// Gives up waiting and releases it.
        func cancelAndRelease() {
            dbus_pending_call_cancel(pointer)
            dbus_pending_call_unref(pointer)
        }

        /// Its outcome once completed, the reply or the error it carries; releases it.
        func takeReply() -> Result<DBusMessage, DBusError> {
            defer { dbus_pending_call_unref(pointer) }
            return DBusMessage.outcome(ofReply: dbus_pending_call_steal_reply(pointer))
        }
    }
}

/// The C shims the I/O thread needs (`CDBus/shim.h`).
enum IOThreadShims {
    /// A new eventfd (non-blocking, close-on-exec), or -1.
    static func eventFD() -> Int32 { cdbus_eventfd() }

    /// Names the calling thread (what `top -H` and `/proc/…/comm` show).
    static func nameThisThread(_ name: String) { cdbus_set_thread_name(name) }
}
