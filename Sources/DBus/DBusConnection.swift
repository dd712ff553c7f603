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

    /// CPU time used so far by the connection's I/O thread, for tests that prove an idle connection does not spin.
    @_spi(Testing) public var ioThreadCPUTime: Duration? { core.ioThreadCPUTime }

    // MARK: Method calls

    /// Calls a method and waits for its reply.
    ///
    /// - Returns: the reply message; check its body with ``DBusMessage/arguments(_:)``.
    /// - Throws: `DBusError` — the peer's error reply, `NoReply` after `timeout`, `Disconnected`, or `InvalidArgs`
    ///   for an argument libdbus would not accept (nothing is sent then). `CancellationError` if the task is
    ///   cancelled while waiting.
    public func call(
        destination: BusName?,
        path: ObjectPath,
        interface: InterfaceName?,
        member: MemberName,
        arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws -> DBusMessage {
        let milliseconds = try timeout.dbusMilliseconds()
        let message = try OutgoingMessage.methodCall(
            destination: destination, path: path, interface: interface, member: member, body: arguments)
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

    /// Calls a method and hands the outcome to `completion` without a task or a continuation: for library code
    /// that makes many calls and keeps its own state machine (the desktop presenter's per-toast queues).
    ///
    /// `completion` runs exactly once, on the connection's I/O thread — or at once on the calling thread when the
    /// connection is already closed. While it runs the connection does no I/O: it must be short, must never block,
    /// and must never run app code (hand such work to a task). An error reply arrives as a `DBusError` failure.
    ///
    /// - Throws: `DBusError.invalidArgs` for an argument libdbus would not accept (nothing is sent, `completion`
    ///   is not called).
    package func call(
        destination: BusName?,
        path: ObjectPath,
        interface: InterfaceName?,
        member: MemberName,
        arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25),
        completion: @escaping @Sendable (Result<DBusMessage, any Error>) -> Void
    ) throws(DBusError) {
        let milliseconds = try timeout.dbusMilliseconds()
        let message = try OutgoingMessage.methodCall(
            destination: destination, path: path, interface: interface, member: member, body: arguments)
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
    public func signals(matchingAny rules: [MatchRule]) async throws -> SignalSubscription {
        let (stream, continuation) = AsyncThrowingStream<DBusMessage, any Error>.makeStream(
            bufferingPolicy: .unbounded)
        let core = self.core
        let router = self.router
        let id = try router.subscribe(rules, continuation)
        continuation.onTermination = { _ in
            if router.unsubscribe(id) {
                for rule in rules { Self.removeMatch(rule, core: core) }
            }
        }
        do {
            // One round trip for all rules, not one after another.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for rule in rules {
                    group.addTask { _ = try await self.callBus("AddMatch", [.string(rule.ruleString)]) }
                }
                try await group.waitForAll()
            }
        } catch {
            continuation.finish()
            throw error
        }
        return SignalSubscription(stream: stream, continuation: continuation)
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
        let id = try router.subscribe(rules.isEmpty ? [MatchRule(kind: nil)] : rules, continuation)
        continuation.onTermination = { _ in _ = router.unsubscribe(id) }
        router.startMonitoring()
        do {
            _ = try await call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus.Monitoring", member: "BecomeMonitor",
                arguments: [.strings(rules.map(\.ruleString)), .uint32(0)])
        } catch {
            continuation.finish()
            throw error
        }
        return SignalSubscription(stream: stream, continuation: continuation)
    }

    private static func removeMatch(_ rule: MatchRule, core: ConnectionCore) {
        guard
            let message = try? OutgoingMessage.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "RemoveMatch", body: [.string(rule.ruleString)], noReply: true)
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

    func callBus(_ member: MemberName, _ arguments: [DBusValue]) async throws -> DBusMessage {
        try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: member, arguments: arguments)
    }

    /// The names on the bus (`ListNames`).
    public func listNames() async throws -> [String] {
        try await callBus("ListNames", []).arguments("as")[0].stringsValue ?? []
    }

    /// The unique name that owns `name`, or nil when nobody does (`GetNameOwner`).
    public func nameOwner(of name: BusName) async throws -> String? {
        do {
            return try await callBus("GetNameOwner", [.string(name.rawValue)]).arguments("s")[0].stringValue
        } catch let error as DBusError where error.name == DBusError.Name.nameHasNoOwner {
            return nil
        }
    }

    /// Asks the bus for a well-known name (`RequestName`).
    public func requestName(_ name: BusName, flags: NameRequestFlags = []) async throws -> NameRequestReply {
        let reply = try await callBus("RequestName", [.string(name.rawValue), .uint32(flags.rawValue)])
        let code = try reply.arguments("u")[0].uint32Value ?? 0
        guard let result = NameRequestReply(rawValue: code) else {
            throw DBusError(name: DBusError.Name.failed, message: "RequestName answered unknown code \(code)")
        }
        return result
    }

    /// Gives a well-known name back (`ReleaseName`).
    public func releaseName(_ name: BusName) async throws -> NameReleaseReply {
        let reply = try await callBus("ReleaseName", [.string(name.rawValue)])
        let code = try reply.arguments("u")[0].uint32Value ?? 0
        guard let result = NameReleaseReply(rawValue: code) else {
            throw DBusError(name: DBusError.Name.failed, message: "ReleaseName answered unknown code \(code)")
        }
        return result
    }

    /// Follows the owner of `name`: every `NameOwnerChanged` for it from the bus, from now on.
    public func nameOwnerChanges(of name: BusName) async throws -> NameOwnerChanges {
        let rule = MatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
            path: "/org/freedesktop/DBus", arguments: [0: name.rawValue])
        return NameOwnerChanges(base: try await signals(matching: rule))
    }
}

/// Flags for ``DBusConnection/requestName(_:flags:)``.
public struct NameRequestFlags: OptionSet, Sendable, Hashable {
    /// The raw flag bits.
    public let rawValue: UInt32
    /// Creates flags from raw bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Let another connection take the name with ``replaceExisting``.
    public static let allowReplacement = NameRequestFlags(rawValue: 0x1)
    /// Take the name from its owner if the owner allowed replacement.
    public static let replaceExisting = NameRequestFlags(rawValue: 0x2)
    /// Fail instead of waiting in the name's queue.
    public static let doNotQueue = NameRequestFlags(rawValue: 0x4)
}

/// The bus's answer to `RequestName`.
public enum NameRequestReply: UInt32, Sendable {
    /// This connection now owns the name.
    case primaryOwner = 1
    /// Queued behind the current owner.
    case inQueue = 2
    /// Someone else owns it and ``NameRequestFlags/doNotQueue`` was given.
    case exists = 3
    /// This connection already owned it.
    case alreadyOwner = 4
}

/// The bus's answer to `ReleaseName`.
public enum NameReleaseReply: UInt32, Sendable {
    /// Released.
    case released = 1
    /// Nobody owned it.
    case nonExistent = 2
    /// Someone else owns it.
    case notOwner = 3
}

/// One `NameOwnerChanged` signal.
public struct NameOwnerChange: Sendable, Hashable {
    /// The name whose owner changed.
    public var name: String
    /// The unique name that owned it before, or nil.
    public var oldOwner: String?
    /// The unique name that owns it now, or nil when it has no owner any more.
    public var newOwner: String?
    /// Creates a change record.
    public init(name: String, oldOwner: String?, newOwner: String?) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }
}

/// The `NameOwnerChanged` signals for one name, as an `AsyncSequence`.
public struct NameOwnerChanges: AsyncSequence, Sendable {
    /// Each change of owner.
    public typealias Element = NameOwnerChange
    let base: SignalSubscription

    /// Ends the sequence and removes its match rule.
    public func cancel() { base.cancel() }

    /// Makes an iterator.
    public func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }

    /// The iterator.
    public struct Iterator: AsyncIteratorProtocol {
        var base: SignalSubscription.Iterator
        /// The next change; skips malformed signals.
        public mutating func next() async throws -> NameOwnerChange? {
            while let message = try await base.next() {
                guard let values = try? message.arguments("sss") else { continue }
                let old = values[1].stringValue ?? ""
                let new = values[2].stringValue ?? ""
                return NameOwnerChange(
                    name: values[0].stringValue ?? "", oldOwner: old.isEmpty ? nil : old,
                    newOwner: new.isEmpty ? nil : new)
            }
            return nil
        }
    }
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
        let (seconds, attoseconds) = components
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return Int32.max }
        return Int32(clamping: total.partialValue + attoseconds / 1_000_000_000_000_000)
    }
}
