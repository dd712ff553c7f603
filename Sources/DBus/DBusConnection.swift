import Synchronization

/// A private connection to a D-Bus bus, with its own I/O thread.
///
/// ```swift
/// let bus = try await DBusConnection.connect(to: .session)
/// let reply = try await bus.call(
///     destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
///     interface: "org.freedesktop.Notifications", member: "GetCapabilities")
/// let capabilities = try reply.arguments("as")[0].stringsValue
/// ```
///
/// Connections are always private (never libdbus's shared per-process connection), never end the process when the
/// bus goes away, and are closed before their last reference is dropped. A lost bus fails every pending call with
/// a `Disconnected` error and ends every signal sequence with that error. Closing happens on ``close()`` or when
/// the connection is deinitialized. Exported method handlers that capture the connection keep it alive: call
/// ``close()`` when done.
public final class DBusConnection: Sendable {
    let core: ConnectionCore
    let router: MessageRouter
    private let closeWaiters: CloseWaiters
    /// The unique name the bus gave this connection, such as `:1.42`.
    public let uniqueName: String

    private init(core: ConnectionCore, router: MessageRouter, closeWaiters: CloseWaiters, uniqueName: String) {
        self.core = core
        self.router = router
        self.closeWaiters = closeWaiters
        self.uniqueName = uniqueName
    }

    deinit { core.post(.close) }

    /// Connects to a bus and registers with it. Blocking work (socket connect, authentication, `Hello`) happens on
    /// the connection's own thread, never on Swift's cooperative pool.
    public static func connect(to bus: BusAddress = .session) async throws -> DBusConnection {
        let address = try bus.resolve()
        let router = MessageRouter()
        let waiters = CloseWaiters()
        let core = try ConnectionCore(
            deliver: { core, message in router.route(message, core: core) },
            onClose: { reason in
                router.close(reason)
                waiters.fire(reason)
            })
        let name = try await core.start(address: address)
        return DBusConnection(core: core, router: router, closeWaiters: waiters, uniqueName: name)
    }

    /// A task executor that runs Swift code on this connection's I/O thread.
    ///
    /// Code that makes many calls in a row can run there to avoid two thread switches per call (the reply is
    /// handled and the next call is made on the same thread):
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(bus.executor) {
    ///     for item in items { _ = try await bus.call(…) }
    /// }
    /// ```
    ///
    /// While such code runs, the connection does no I/O: keep it short, and never block in it (a synchronous wait
    /// for a reply there would deadlock).
    public var executor: some TaskExecutor { core.executor }

    /// Closes the connection. Pending calls fail with a `Disconnected` error; signal sequences end.
    public func close() { core.post(.close) }

    /// False once the connection is closed or the bus went away.
    public var isConnected: Bool { core.closedReason == nil }

    /// Waits until the connection is closed or lost, and returns why.
    public func waitUntilClosed() async -> DBusError {
        await closeWaiters.wait()
    }

    /// Whether the caller runs on this connection's I/O thread (where completions, exported methods and the
    /// executor's jobs run). Library code that must or must not run there checks it.
    package var isOnIOThread: Bool { core.isOnIOThread }

    /// CPU time used so far by the connection's I/O thread, for tests that prove an idle connection does not spin.
    @_spi(Testing) public var ioThreadCPUTime: Duration? { core.ioThreadCPUTime }

    // MARK: Method calls

    /// Calls a method and waits for its reply.
    ///
    /// - Returns: the reply message; check its body with ``DBusMessage/arguments(_:)``.
    /// - Throws: `DBusError` — the peer's error reply, `NoReply` after `timeout`, `Disconnected`, or `InvalidArgs`
    ///   for an argument libdbus would not accept (nothing is sent then). `CancellationError` if the task is
    ///   cancelled while waiting.
    public func call(_ call: DBusMethodCall, timeout: Duration = .seconds(25)) async throws -> DBusMessage {
        let milliseconds = try timeout.dbusMilliseconds()
        let message = try call.message()
        let reply = PendingReply()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                reply.wait(continuation)
                core.post(.call(message, timeoutMilliseconds: milliseconds, reply))
            }
        } onCancel: {
            reply.markCancelled()
            core.post(.cancel(reply))
        }
    }

    /// Calls a method and waits for its reply: ``call(_:timeout:)`` with the call's parts spelled out.
    public func call(
        destination: BusName?,
        path: ObjectPath,
        interface: InterfaceName?,
        member: MemberName,
        arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws -> DBusMessage {
        try await call(
            DBusMethodCall(
                destination: destination, path: path, interface: interface, member: member, arguments: arguments),
            timeout: timeout)
    }

    /// Calls a method and hands the outcome to `completion` without a task or a continuation: for library code
    /// that makes many calls and keeps its own state machine (the desktop presenter).
    ///
    /// `completion` runs exactly once, on the connection's I/O thread — or at once on the calling thread when the
    /// connection is already closed. While it runs the connection does no I/O: it must be short, must never block,
    /// and must never run app code (hand such work to a task). An error reply arrives as a `DBusError` failure.
    ///
    /// - Throws: `DBusError.invalidArgs` for an argument libdbus would not accept (nothing is sent, `completion`
    ///   is not called).
    package func call(
        _ call: DBusMethodCall,
        timeout: Duration = .seconds(25),
        completion: @escaping @Sendable (Result<DBusMessage, any Error>) -> Void
    ) throws(DBusError) {
        let milliseconds = try timeout.dbusMilliseconds()
        let message = try call.message()
        core.post(.call(message, timeoutMilliseconds: milliseconds, PendingReply(handler: completion)))
    }

    /// Sends a method call without waiting for (or asking for) a reply.
    public func send(
        destination: BusName?,
        path: ObjectPath,
        interface: InterfaceName?,
        member: MemberName,
        arguments: [DBusValue] = []
    ) throws {
        let message = try OutgoingMessage.methodCall(
            destination: destination, path: path, interface: interface, member: member, body: arguments,
            noReply: true)
        if let error = core.post(.send(message)) { throw error }
    }

    /// Emits a signal: broadcast to every matching subscriber, or unicast to `destination` alone.
    public func emitSignal(
        path: ObjectPath,
        interface: InterfaceName,
        member: MemberName,
        arguments: [DBusValue] = [],
        destination: BusName? = nil
    ) throws {
        let message = try OutgoingMessage.signal(
            path: path, interface: interface, member: member, destination: destination, body: arguments)
        if let error = core.post(.send(message)) { throw error }
    }

    // MARK: Signals

    /// Subscribes to the messages that match `rule`.
    ///
    /// The match rule is added on the bus before this returns, so no matching broadcast signal sent afterwards is
    /// missed; it is removed when the sequence ends: when the consuming task is cancelled, when the
    /// ``SignalSubscription`` is dropped or ``SignalSubscription/cancel()``ed. If the connection is lost, the
    /// sequence throws the `Disconnected` error.
    public func signals(matching rule: MatchRule) async throws -> SignalSubscription {
        try await signals(matchingAny: [rule])
    }

    /// Subscribes to the messages that match any of `rules`, in one sequence that keeps their arrival order
    /// (for example a service's signals and its `NameOwnerChanged`, which must be seen in order).
    ///
    /// A rule whose ``MatchRule/sender`` is a well-known name (such as `org.freedesktop.Notifications`) accepts only
    /// messages from that name's current owner: the connection follows the owner from the moment it subscribes, and
    /// drops anything else before its body is decoded, unicast signals from other connections included.
    public func signals(matchingAny rules: [MatchRule]) async throws -> SignalSubscription {
        let (stream, continuation) = AsyncThrowingStream<DBusMessage, any Error>.makeStream(
            bufferingPolicy: .unbounded)
        do {
            try await subscribe(rules, .stream(continuation)) { end in
                continuation.onTermination = { _ in end.run() }
            }
        } catch {
            continuation.finish()
            throw error
        }
        return SignalSubscription(stream: stream, continuation: continuation)
    }

    /// Subscribes to the messages that match any of `rules`, as ``signals(matchingAny:)`` does, but delivers them
    /// to `handler` on the connection's I/O thread, where replies are delivered too: in arrival order with them, and
    /// without a hop to another task. The handler must not block; it gets the reason once the connection ends.
    ///
    /// The match rules stay until ``SignalHandler/cancel()`` or the connection's end.
    package func signals(
        matchingAny rules: [MatchRule],
        handler: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) async throws -> SignalHandler {
        SignalHandler(end: try await subscribe(rules, .handler(handler)) { _ in })
    }

    /// Adds `rules` to the router with `sink`, then on the bus (with the owners of the well-known senders they
    /// name) in one round trip; `registered` gets what removes them before the bus is asked, and so does the
    /// caller once they are added (a failure runs it).
    @discardableResult
    private func subscribe(_ rules: [MatchRule], _ sink: SignalSink, registered: (SubscriptionEnd) -> Void)
        async throws -> SubscriptionEnd
    {
        let core = self.core
        let router = self.router
        // Well-known senders are followed here too: the bus filters broadcasts by owner, but a unicast signal from
        // any other connection would pass a rule that names a well-known sender.
        let followed = Array(Set(rules.compactMap(\.sender).filter(\.isFollowedOwner).map(\.rawValue)))
        let id = try router.subscribe(rules, sink)
        let tracking = followed.map { ($0, router.track($0)) }
        let end = SubscriptionEnd {
            if router.unsubscribe(id) {
                for rule in rules { Self.removeMatch(rule, core: core) }
            }
            for name in followed where router.untrack(name) {
                if let busName = try? BusName(validating: name) {
                    Self.removeMatch(.nameOwnerChanged(of: busName), core: core)
                }
            }
        }
        registered(end)
        do {
            // One round trip for all rules and owners, not one after another.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for rule in rules {
                    group.addTask { try await self.bus.addMatch(rule) }
                }
                for (name, (changes, isNew)) in tracking {
                    let busName = try BusName(validating: name)
                    group.addTask {
                        if isNew { try await self.bus.addMatch(.nameOwnerChanged(of: busName)) }
                        let owner = try await self.bus.nameOwner(of: busName)
                        router.setOwner(owner, of: name, ifUnchangedSince: changes)
                    }
                }
                try await group.waitForAll()
            }
        } catch {
            end.run()
            throw error
        }
        return end
    }

    /// Turns this connection into a bus monitor (`org.freedesktop.DBus.Monitoring.BecomeMonitor`) and returns
    /// every message that matches one of `rules` — method calls, replies and signals between any peers.
    ///
    /// A monitor can no longer call methods or own names: use a connection of its own for it. Use rules with
    /// `kind: nil` or a kind to match calls as well as signals.
    public func monitor(_ rules: [MatchRule]) async throws -> SignalSubscription {
        let (stream, continuation) = AsyncThrowingStream<DBusMessage, any Error>.makeStream(
            bufferingPolicy: .unbounded)
        let router = self.router
        let id = try router.subscribe(rules.isEmpty ? [MatchRule(kind: nil)] : rules, .stream(continuation))
        continuation.onTermination = { _ in _ = router.unsubscribe(id) }
        router.startMonitoring()
        do {
            _ = try await call(
                DBusMethodCall(
                    destination: BusDaemon.name, path: BusDaemon.path, interface: "org.freedesktop.DBus.Monitoring",
                    member: "BecomeMonitor", arguments: [.strings(rules.map(\.ruleString)), .uint32(0)]))
        } catch {
            continuation.finish()
            throw error
        }
        return SignalSubscription(stream: stream, continuation: continuation)
    }

    private static func removeMatch(_ rule: MatchRule, core: ConnectionCore) {
        guard let message = try? BusDaemon.call("RemoveMatch", [.string(rule.ruleString)]).message(noReply: true)
        else { return }
        core.post(.send(message))
    }

    // MARK: Exporting objects

    /// Serves `object`'s methods at `path`. Replaces an object exported earlier at the same path and interface.
    public func export(_ object: DBusObject, at path: ObjectPath) {
        router.export(object, at: path)
    }

    /// Stops serving `interface` at `path`.
    public func unexport(_ interface: InterfaceName, at path: ObjectPath) {
        router.unexport(interface, at: path)
    }

    // MARK: The bus's own methods

    /// The bus daemon's own methods (`org.freedesktop.DBus`), called on this connection.
    public var bus: BusDaemon { BusDaemon(connection: self) }
}

/// Resumes everyone waiting for the connection to close.
final class CloseWaiters: Sendable {
    private let state = Mutex<(reason: DBusError?, waiting: [CheckedContinuation<DBusError, Never>])>((nil, []))

    func fire(_ reason: DBusError) {
        let waiting = state.withLock { state in
            state.reason = reason
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: reason) }
    }

    func wait() async -> DBusError {
        await withCheckedContinuation { continuation in
            let reason = state.withLock { state in
                if state.reason == nil { state.waiting.append(continuation) }
                return state.reason
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }
}

extension Duration {
    /// The timeout in libdbus's milliseconds, saturating at `Int32.max`; negative durations are an error.
    func dbusMilliseconds() throws(DBusError) -> Int32 {
        guard self >= .zero else { throw .invalidArgs("timeout: \(self) is negative") }
        return Int32(clamping: milliseconds())
    }

    /// This duration in whole milliseconds, rounded toward zero (or, with `roundingUp`, a positive fraction up to
    /// the next millisecond), saturating at `Int64`'s bounds: the one conversion for libdbus timeouts, `poll`, and
    /// the notification `expire_timeout`.
    package func milliseconds(roundingUp: Bool = false) -> Int64 {
        let perMillisecond: Int64 = 1_000_000_000_000_000
        let (seconds, attoseconds) = components
        var fraction = attoseconds / perMillisecond
        if roundingUp, attoseconds % perMillisecond > 0 { fraction += 1 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (total, carry) = whole.addingReportingOverflow(fraction)
        guard !overflow, !carry else { return seconds < 0 ? .min : .max }
        return total
    }
}
