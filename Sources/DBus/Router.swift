import Synchronization

/// Where a subscription's messages go: a sequence a task reads, or a handler called on the I/O thread.
enum SignalSink: Sendable {
    /// The continuation of a ``SignalSubscription``'s stream.
    case stream(AsyncThrowingStream<DBusMessage, any Error>.Continuation)
    /// A handler called on the connection's I/O thread for each message, in order, and once with the reason the
    /// connection ended.
    case handler(@Sendable (Result<DBusMessage, DBusError>) -> Void)

    func yield(_ message: DBusMessage) {
        switch self {
        case .stream(let continuation): continuation.yield(message)
        case .handler(let handler): handler(.success(message))
        }
    }

    func finish(_ reason: DBusError) {
        switch self {
        case .stream(let continuation): continuation.finish(throwing: reason)
        case .handler(let handler): handler(.failure(reason))
        }
    }
}

/// Routes incoming messages (on the I/O thread) to signal subscriptions and exported objects.
final class MessageRouter: Sendable {
    private struct Subscription {
        let rules: [MatchRule]
        let sink: SignalSink
    }

    /// The owner of a well-known name some rule names as its sender, followed through the bus's
    /// `NameOwnerChanged`, so that a message from anyone else is dropped here, before its body is decoded.
    struct TrackedOwner {
        /// The unique name that owns it, when known (`nil`: nobody, or not read yet).
        var owner: String?
        /// Subscriptions whose rules name it.
        var users = 0
        /// Bumped on every change the bus announces, so a `GetNameOwner` answer that raced one is not applied.
        var changes: UInt64 = 0
    }

    private struct State {
        var nextID: UInt64 = 0
        var subscriptions: [UInt64: Subscription] = [:]
        var owners: [String: TrackedOwner] = [:]
        var objects: [ObjectPath: [String: DBusObject]] = [:]
        var closed: DBusError?
        /// After `BecomeMonitor` the connection only watches: every message goes to subscriptions, none is answered.
        var monitoring = false
    }

    private let state = Mutex(State())

    func subscribe(_ rules: [MatchRule], _ sink: SignalSink) throws(DBusError) -> UInt64 {
        try state.withLock { (state) throws(DBusError) -> UInt64 in
            if let closed = state.closed { throw closed }
            state.nextID += 1
            state.subscriptions[state.nextID] = Subscription(rules: rules, sink: sink)
            return state.nextID
        }
    }

    /// Removes a subscription; true if it was still there (so its bus match rule is still to be removed).
    func unsubscribe(_ id: UInt64) -> Bool {
        state.withLock { $0.subscriptions.removeValue(forKey: id) != nil && $0.closed == nil }
    }

    // MARK: - Owners of well-known senders

    /// Starts following `name`'s owner (or counts one more user); returns the change count to pass to
    /// ``setOwner(_:of:ifUnchangedSince:)`` and whether the bus's `NameOwnerChanged` rule must be added.
    func track(_ name: String) -> (changes: UInt64, isNew: Bool) {
        state.withLock { state in
            var tracked = state.owners[name] ?? TrackedOwner()
            tracked.users += 1
            state.owners[name] = tracked
            return (tracked.changes, tracked.users == 1)
        }
    }

    /// Stops following `name` for one user; true when nobody follows it any more (its bus rule can go).
    func untrack(_ name: String) -> Bool {
        state.withLock { state in
            guard var tracked = state.owners[name] else { return false }
            tracked.users -= 1
            state.owners[name] = tracked.users > 0 ? tracked : nil
            return tracked.users <= 0
        }
    }

    /// Records a `GetNameOwner` answer, unless the bus announced a change since it was asked.
    func setOwner(_ owner: String?, of name: String, ifUnchangedSince changes: UInt64) {
        state.withLock { state in
            guard state.owners[name]?.changes == changes else { return }
            state.owners[name]?.owner = owner
        }
    }

    /// The unique name that owns a followed well-known name.
    func owner(of name: String) -> String? {
        state.withLock { $0.owners[name]?.owner }
    }

    func export(_ object: DBusObject, at path: ObjectPath) {
        state.withLock { $0.objects[path, default: [:]][object.interface.rawValue] = object }
    }

    func unexport(_ interface: InterfaceName, at path: ObjectPath) {
        state.withLock { state in
            state.objects[path]?[interface.rawValue] = nil
            if state.objects[path]?.isEmpty == true { state.objects[path] = nil }
        }
    }

    /// Ends every subscription with `reason` and forgets every object.
    func close(_ reason: DBusError) {
        let subscriptions = state.withLock { state in
            state.closed = reason
            state.objects = [:]
            defer { state.subscriptions = [:] }
            return Array(state.subscriptions.values)
        }
        for subscription in subscriptions { subscription.sink.finish(reason) }
    }

    func startMonitoring() {
        state.withLock { $0.monitoring = true }
    }

    /// Handles one incoming message; false leaves it to libdbus (which answers unknown method calls itself).
    func route(_ message: DBusMessage, core: ConnectionCore) -> Bool {
        core.assertOnIOThread()
        let ownerChange = NameOwnerChange(message)
        let monitored: [SignalSink]? = state.withLock { state in
            if let ownerChange, !state.monitoring, var tracked = state.owners[ownerChange.name] {
                tracked.owner = ownerChange.newOwner
                tracked.changes += 1
                state.owners[ownerChange.name] = tracked
            }
            guard state.monitoring else { return nil }
            return state.subscriptions.values.filter { $0.rules.contains { $0.matches(message) } }.map(\.sink)
        }
        if let monitored {
            for sink in monitored { sink.yield(message) }
            return true
        }
        switch message.kind {
        case .signal:
            let targets = state.withLock { state in
                state.subscriptions.values.filter { subscription in
                    subscription.rules.contains { rule in
                        rule.matches(message) && Self.fromOwner(message, of: rule.sender, in: state.owners)
                    }
                }.map(\.sink)
            }
            for sink in targets { sink.yield(message) }
            return true
        case .methodCall:
            guard let path = message.path, let member = message.member else { return false }
            let lookup: (object: DBusObject?, pathKnown: Bool) = state.withLock { state in
                guard let interfaces = state.objects[path] else { return (nil, false) }
                if let name = message.interface {
                    return (interfaces[name].flatMap { $0.methods[member] == nil ? nil : $0 }, true)
                }
                return (interfaces.values.first { $0.methods[member] != nil }, true)
            }
            guard lookup.pathKnown else { return false }
            let call = IncomingCall(message: message, core: core)
            guard let object = lookup.object, let handler = object.methods[member] else {
                call.fail(
                    DBusError(
                        name: DBusError.Name.unknownMethod,
                        message: "no method \(member) in interface \(message.interface ?? "(any)") at \(path)"))
                return true
            }
            if let limit = object.maximumCallSize, let size = message.receivedBodySize, size > limit {
                let interface = object.interface.rawValue
                call.fail(
                    DBusError(
                        name: DBusError.Name.limitsExceeded,
                        message:
                            "\(member): the call's arguments are \(size) bytes; \(interface) takes at most \(limit)"))
                return true
            }
            handler(call)
            return true
        case .methodReturn, .error:
            return true
        }
    }
}

extension MessageRouter {
    /// Whether `message` comes from the owner of `sender` when that is a followed well-known name (the bus
    /// filters broadcasts by owner itself, but a unicast signal reaches us from anyone).
    fileprivate static func fromOwner(_ message: DBusMessage, of sender: BusName?, in owners: [String: TrackedOwner])
        -> Bool
    {
        guard let sender, let tracked = owners[sender.rawValue] else { return true }
        return tracked.owner != nil && message.sender == tracked.owner
    }
}

/// A subscription's messages, as an `AsyncSequence`. The bus match rule lives exactly as long as the
/// subscription: it is removed when the sequence ends, when ``cancel()`` is called, or when the last copy of the
/// subscription and its iterators is gone.
public struct SignalSubscription: AsyncSequence, Sendable {
    /// Each matching message.
    public typealias Element = DBusMessage
    private let lifetime: Lifetime
    private let stream: AsyncThrowingStream<DBusMessage, any Error>

    init(
        stream: AsyncThrowingStream<DBusMessage, any Error>,
        continuation: AsyncThrowingStream<DBusMessage, any Error>.Continuation
    ) {
        self.stream = stream
        self.lifetime = Lifetime(continuation: continuation)
    }

    /// Ends the sequence and removes the match rule.
    public func cancel() { lifetime.continuation.finish() }

    /// Makes an iterator (iterate one at a time: the messages are shared, not copied per iterator).
    public func makeAsyncIterator() -> Iterator {
        Iterator(lifetime: lifetime, base: stream.makeAsyncIterator())
    }

    /// The iterator.
    public struct Iterator: AsyncIteratorProtocol {
        let lifetime: Lifetime
        var base: AsyncThrowingStream<DBusMessage, any Error>.Iterator
        /// The next matching message; nil once the subscription ended; throws `Disconnected` if the bus went away.
        public mutating func next() async throws -> DBusMessage? {
            try await base.next()
        }
    }

    final class Lifetime: Sendable {
        let continuation: AsyncThrowingStream<DBusMessage, any Error>.Continuation
        init(continuation: AsyncThrowingStream<DBusMessage, any Error>.Continuation) {
            self.continuation = continuation
        }
        deinit { continuation.finish() }
    }
}

/// Removes a subscription from the router and its rules from the bus, once however often it is run.
final class SubscriptionEnd: Sendable {
    private let done = Atomic(false)
    private let remove: @Sendable () -> Void

    init(_ remove: @escaping @Sendable () -> Void) { self.remove = remove }

    func run() {
        if !done.exchange(true, ordering: .acquiringAndReleasing) { remove() }
    }
}

/// A subscription whose messages go to a handler on the I/O thread
/// (``DBusConnection/signals(matchingAny:handler:)``). It lasts until ``cancel()`` or the connection's end:
/// dropping it does not end it.
package struct SignalHandler: Sendable {
    let end: SubscriptionEnd

    /// Stops the messages and removes the match rules (a message being delivered may still arrive).
    package func cancel() { end.run() }
}

/// An interface served by an exported object: method handlers keyed by member name.
///
/// Handlers made with ``method(_:_:)`` run on the connection's I/O thread, in the order calls arrive, and must
/// not block: reply at once or keep the ``IncomingCall`` and reply later from anywhere. ``asyncMethod(_:_:)``
/// handlers run in their own task each.
public struct DBusObject: Sendable {
    /// A method handler.
    public typealias Handler = @Sendable (IncomingCall) -> Void
    /// The interface name.
    public let interface: InterfaceName
    /// The largest call the interface takes, in bytes of its arguments on the wire (alignment padding aside); nil
    /// for no limit but the bus's. A larger call is answered `org.freedesktop.DBus.Error.LimitsExceeded` on the I/O
    /// thread, naming its size and the limit, before any handler runs and without decoding its arguments: a peer's
    /// huge call costs the reading of it, never the decoding or the work.
    public var maximumCallSize: Int?
    var methods: [String: Handler] = [:]

    /// An interface with no methods yet.
    public init(interface: InterfaceName) { self.interface = interface }

    /// Adds a method whose handler replies through the call (at once or later).
    public mutating func method(_ member: MemberName, _ handler: @escaping Handler) {
        methods[member.rawValue] = handler
    }

    /// Adds a method whose async handler returns the reply's values or throws (a `DBusError` keeps its name;
    /// any other error becomes `org.freedesktop.DBus.Error.Failed`).
    public mutating func asyncMethod(
        _ member: MemberName,
        _ handler: @escaping @Sendable (DBusMessage) async throws -> [DBusValue]
    ) {
        methods[member.rawValue] = { call in
            Task {
                do {
                    call.reply(try await handler(call.message))
                } catch let error as DBusError {
                    call.fail(error)
                } catch {
                    call.fail(DBusError(name: DBusError.Name.failed, message: "\(error)"))
                }
            }
        }
    }
}

/// A method call received by an exported object, and the means to answer it once.
public struct IncomingCall: Sendable {
    /// The call.
    public let message: DBusMessage
    let core: ConnectionCore

    /// Replies with `values`. A value libdbus would refuse is turned into an `InvalidArgs` error reply instead.
    public func reply(_ values: [DBusValue] = []) {
        send(error: nil, values)
    }

    /// Replies with an error.
    public func fail(_ error: DBusError) {
        send(error: error, [])
    }

    private func send(error: DBusError?, _ values: [DBusValue]) {
        guard !message.noReplyExpected else { return }
        let reply: OutgoingMessage
        do {
            reply = try OutgoingMessage.reply(
                toSerial: message.serial, destination: message.sender, error: error, body: values)
        } catch {
            guard
                let fallback = try? OutgoingMessage.reply(
                    toSerial: message.serial, destination: message.sender, error: error, body: [])
            else { return }
            reply = fallback
        }
        core.post(.send(reply))
    }
}
