/// A bus connection for a process that makes a few calls and exits — a command-line tool — with no I/O thread
/// and no tasks: each batch of calls blocks the calling thread until every reply is in (or timed out).
///
/// ```swift
/// let (bus, replies) = try BlockingDBusConnection.connect(
///     to: .session, timeout: .seconds(5), calling: [.bus("GetNameOwner", [.string("org.freedesktop.Notifications")])])
/// let owner = try replies[0].get().arguments("s")[0].stringValue
/// bus.close()
/// ```
///
/// The calls of one batch go out together and their replies are awaited afterwards, so a batch costs one round
/// trip however many calls it holds; ``connect(to:timeout:calling:)`` sends the bus's `Hello` in the same batch
/// as the first calls (the bus handles a connection's messages in order, so they arrive registered).
/// A ``DBusConnection`` needs a thread and the Swift concurrency pool; this needs neither, which is what a
/// process that lives for a few milliseconds wants. It is not `Sendable`: use it on one thread. It receives
/// nothing but replies (signals sent to it are dropped), and like ``DBusConnection`` it never ends the process
/// when the bus goes away. It is closed by ``close()`` or when released.
public final class BlockingDBusConnection {
    private var raw: RawConnection?
    /// The unique name the bus gave this connection, such as `:1.42`.
    public let uniqueName: String

    private init(raw: RawConnection, uniqueName: String) {
        self.raw = raw
        self.uniqueName = uniqueName
    }

    deinit { close() }

    /// Connects to a bus, registers with it and makes `calls`, all in one round trip.
    ///
    /// - Returns: the connection and the result of each call, in order.
    /// - Throws: `DBusError` when the bus cannot be reached or refuses `Hello`. The calls' own errors are in the
    ///   results.
    public static func connect(
        to bus: BusAddress = .session, timeout: Duration = .seconds(25), calling calls: [DBusMethodCall] = []
    ) throws(DBusError) -> (connection: BlockingDBusConnection, replies: [Result<DBusMessage, DBusError>]) {
        let raw = try RawConnection.openPrivate(try bus.resolve())
        let results = Self.exchange(on: raw, [.bus("Hello")] + calls, timeout: timeout)
        let name: String
        do throws(DBusError) {
            guard let value = try results[0].get().arguments("s")[0].stringValue else {
                throw DBusError.disconnected("the bus's Hello reply has no name")
            }
            name = value
        } catch {
            raw.closeAndRelease()
            throw error
        }
        raw.recordUniqueName(name)
        return (BlockingDBusConnection(raw: raw, uniqueName: name), Array(results.dropFirst()))
    }

    /// Makes `calls` in one round trip: sends them all, then waits for every reply; all of them share one deadline,
    /// `timeout` from now.
    ///
    /// - Returns: each call's reply, or its error (the peer's error reply, `NoReply` after the timeout,
    ///   `Disconnected`, or `InvalidArgs` for an argument libdbus would not accept — that call is not sent). A call
    ///   still unanswered at the deadline fails with `NoReply` and the message `no reply within <timeout>`.
    public func call(_ calls: [DBusMethodCall], timeout: Duration = .seconds(25)) -> [Result<DBusMessage, DBusError>] {
        guard let raw else { return calls.map { _ in .failure(.disconnected()) } }
        return Self.exchange(on: raw, calls, timeout: timeout)
    }

    /// Makes one call and waits for its reply.
    public func call(_ call: DBusMethodCall, timeout: Duration = .seconds(25)) throws(DBusError) -> DBusMessage {
        try self.call([call], timeout: timeout)[0].get()
    }

    /// Sends `call` without asking for a reply (the peer is told not to answer); it goes out by ``close()`` at the
    /// latest.
    ///
    /// - Throws: `InvalidArgs` for an argument libdbus would not accept, `Disconnected` for a closed connection.
    public func send(_ call: DBusMethodCall) throws(DBusError) {
        guard let raw else { throw .disconnected() }
        let message = try call.message(noReply: true)
        defer { message.release() }
        guard raw.send(message) else { throw .noMemory }
    }

    /// Closes the connection (also done when it is released).
    public func close() {
        guard let raw else { return }
        self.raw = nil
        // Whatever is still queued for the bus (a call sent without waiting) goes out before the socket closes.
        raw.flush()
        raw.closeAndRelease()
    }

    private static func exchange(
        on raw: RawConnection, _ calls: [DBusMethodCall], timeout: Duration
    ) -> [Result<DBusMessage, DBusError>] {
        let milliseconds: Int32
        do {
            milliseconds = try timeout.dbusMilliseconds()
        } catch {
            return calls.map { _ in .failure(error) }
        }
        // One deadline for the whole batch: the calls are waited for together, not one timeout after another.
        let deadline = ContinuousClock.now + timeout
        var results = [Result<DBusMessage, DBusError>](repeating: .failure(.disconnected()), count: calls.count)
        var pending: [(index: Int, call: RawConnection.PendingCall)] = []
        for (index, call) in calls.enumerated() {
            let message: OutgoingMessage
            do {
                message = try call.message()
            } catch {
                results[index] = .failure(error)
                continue
            }
            let sent = raw.sendWithReply(message, timeoutMilliseconds: milliseconds)
            message.release()
            switch sent {
            case .success(let pendingCall): pending.append((index, pendingCall))
            case .failure(let error): results[index] = .failure(error)
            }
        }
        // Reads, writes and dispatches (which completes the pending calls) until every reply is in, the deadline
        // passes, or the connection is gone (libdbus then completes what is left with `NoReply`).
        while pending.contains(where: { !$0.call.isCompleted }) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            let wait = Int32(clamping: max(1, left.milliseconds(roundingUp: true)))
            if !raw.readWriteDispatch(timeoutMilliseconds: wait) { break }
        }
        for (index, call) in pending {
            guard call.isCompleted else {
                call.cancelAndRelease()
                results[index] =
                    !raw.isConnected
                    ? .failure(.disconnected("the bus closed the connection"))
                    : .failure(DBusError(name: DBusError.Name.noReply, message: "no reply within \(timeout)"))
                continue
            }
            results[index] = call.takeReply()
            // libdbus completes the calls of a lost connection with `NoReply`; say what happened instead.
            if !raw.isConnected, case .failure(let error) = results[index],
                error.name == DBusError.Name.noReply, !error.isRecipientDisconnected
            {
                results[index] = .failure(.disconnected("the bus closed the connection"))
            }
        }
        return results
    }
}
