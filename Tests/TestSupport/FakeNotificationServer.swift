public import DBus
public import FreedesktopNotifications
import Synchronization

/// A notification server written on the project's own D-Bus layer, for what a real server cannot do on demand:
/// activation tokens, missing capabilities, slow replies, crashes and restarts, forged signals.
///
/// It owns `org.freedesktop.Notifications`, answers `Notify`, `CloseNotification`, `GetCapabilities` and
/// `GetServerInformation`, records every call, and emits signals when told to (unicast to the caller, as dunst
/// does, or broadcast, as the GTK servers do).
public final class FakeNotificationServer: Sendable {
    /// How the fake behaves.
    public struct Options: Sendable {
        /// What `GetCapabilities` answers.
        public var capabilities: [String]
        /// `GetServerInformation`'s name.
        public var name: String
        /// `GetServerInformation`'s version (`1.0`; GNOME Shell's quirks follow its version).
        public var version = "1.0"
        /// Signals go only to the connection that called `Notify` (dunst), or to everyone.
        public var unicastSignals: Bool
        /// `Notify` replies are held back this long (beyond a client's timeout to simulate a hung server).
        public var notifyDelay: Duration?
        /// `CloseNotification` is carried out and answered only this long after it arrives (a slow server: a client
        /// that exits before the answer may leave the notification on screen).
        public var closeDelay: Duration?
        /// Report a `Notify` on ``FakeNotificationServer/events`` only once its reply is sent, so that a signal the
        /// test emits on seeing it reaches the caller after the reply, as a person's click does.
        public var reportsAfterReply = false
        /// The first id handed out.
        public var firstID: UInt32
        /// Answer every method wrongly, for fault injection.
        public var misbehavior: Misbehavior?
        /// Own `org.freedesktop.Notifications` first and export the object only this long after, as GNOME Shell 43's
        /// notifications proxy does: calls in between get `UnknownMethod`.
        public var exportsAfterOwning: Duration?

        /// Ways to answer wrongly.
        public enum Misbehavior: Sendable {
            /// Replies with the wrong signature (a string where a number or list belongs).
            case wrongSignatures
            /// Replies with a D-Bus error to every call.
            case errorReplies
            /// Never replies to any call (a hung server); the calls are held until the server stops.
            case silent
        }

        /// The defaults: dunst's capabilities, unicast signals, immediate replies.
        public init(
            capabilities: [String] = [
                "actions", "body", "body-hyperlinks", "body-markup", "icon-static", "persistence",
            ],
            name: String = "fake-notifications",
            unicastSignals: Bool = true,
            notifyDelay: Duration? = nil,
            closeDelay: Duration? = nil,
            firstID: UInt32 = 1,
            misbehavior: Misbehavior? = nil,
            exportsAfterOwning: Duration? = nil
        ) {
            self.misbehavior = misbehavior
            self.closeDelay = closeDelay
            self.exportsAfterOwning = exportsAfterOwning
            self.capabilities = capabilities
            self.name = name
            self.unicastSignals = unicastSignals
            self.notifyDelay = notifyDelay
            self.firstID = firstID
        }
    }

    /// One `Notify` the server received: its arguments (`notification.summary`, `.hints`, …), the id it gave, and
    /// who sent it.
    @dynamicMemberLookup
    public struct Notification: Sendable, Hashable {
        /// The id the server gave it.
        public var id: UInt32
        /// The caller's unique name.
        public var sender: String
        /// The call's arguments.
        public var arguments: NotifyCall

        /// An argument of the call.
        public subscript<Value>(dynamicMember keyPath: KeyPath<NotifyCall, Value>) -> Value {
            arguments[keyPath: keyPath]
        }
    }

    /// A call the server received, as it arrives.
    public enum Event: Sendable, Hashable {
        /// A `Notify`.
        case notify(Notification)
        /// A `CloseNotification` for this id.
        case close(UInt32)
    }

    private struct State {
        var nextID: UInt32
        var live: [UInt32: String] = [:]
        var notifications: [Notification] = []
        var closes: [UInt32] = []
        var held: [IncomingCall] = []
        var delayedReplies: [Task<Void, Never>] = []
    }

    /// The server's connection (its unique name is the owner of `org.freedesktop.Notifications`).
    public let connection: DBusConnection
    /// The options it runs with.
    public let options: Options
    private let state: Mutex<State>
    private let eventStream: AsyncStream<Event>
    private let eventContinuation: AsyncStream<Event>.Continuation
    private static let path: ObjectPath = "/org/freedesktop/Notifications"
    private static let interface: InterfaceName = "org.freedesktop.Notifications"

    private init(connection: DBusConnection, options: Options) {
        self.connection = connection
        self.options = options
        state = Mutex(State(nextID: options.firstID))
        (eventStream, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Starts a server on `bus` and returns once it owns the name.
    public static func start(on bus: PrivateBus, options: Options = Options()) async throws -> FakeNotificationServer {
        let server = FakeNotificationServer(connection: try await bus.connect(), options: options)
        var object = DBusObject(interface: interface)
        switch options.misbehavior {
        case .wrongSignatures?:
            for member: MemberName in ["GetCapabilities", "GetServerInformation", "Notify", "CloseNotification"] {
                object.method(member) { call in call.reply([.string("surprise"), .int64(-1)]) }
            }
        case .errorReplies?:
            for member: MemberName in ["GetCapabilities", "GetServerInformation", "Notify", "CloseNotification"] {
                object.method(member) { call in
                    call.fail(DBusError(name: "org.toastkit.Test.Error.Broken", message: "broken server"))
                }
            }
        case .silent?:
            for member: MemberName in ["GetCapabilities", "GetServerInformation", "Notify", "CloseNotification"] {
                object.method(member) { call in server.state.withLock { $0.held.append(call) } }
            }
        case nil:
            object.method("GetCapabilities") { call in call.reply([.strings(server.options.capabilities)]) }
            object.method("GetServerInformation") { call in
                call.reply([
                    .string(server.options.name), .string("ToastKit tests"), .string(server.options.version),
                    .string("1.2"),
                ])
            }
            object.method("Notify") { call in server.notify(call) }
            object.method("CloseNotification") { call in server.closeNotification(call) }
        }
        if options.exportsAfterOwning == nil { server.connection.export(object, at: path) }
        // A server stopped just before may still own the name until the bus has seen its connection close.
        let changes = try await server.connection.bus.nameOwnerChanges(of: "org.freedesktop.Notifications")
        if try await server.connection.bus.nameOwner(of: "org.freedesktop.Notifications") != nil {
            for try await change in changes where change.newOwner == nil { break }
        }
        changes.cancel()
        let reply = try await server.connection.bus.requestName("org.freedesktop.Notifications", flags: .doNotQueue)
        guard reply == .primaryOwner else {
            throw TestEnvironmentError("fake server could not own org.freedesktop.Notifications: \(reply)")
        }
        if let delay = options.exportsAfterOwning {
            let exported = object
            Task {
                try? await Task.sleep(for: delay)
                server.connection.export(exported, at: path)
            }
        }
        return server
    }

    /// The calls as they arrive (one consumer).
    public var events: AsyncStream<Event> { eventStream }

    /// Waits for the next `Notify`, skipping other calls.
    public func nextNotification() async throws -> Notification {
        for await event in eventStream {
            if case .notify(let notification) = event { return notification }
        }
        throw TestEnvironmentError("the fake server stopped")
    }

    /// Waits for the next `Notify` whose summary is `summary` (others are passed over: a toast sent again in place,
    /// another test step's), for at most `limit`. A failure names the toast and adds the text of `log` (the agent's
    /// log, when an agent was to show it).
    public func nextNotification(
        summary: String, within limit: Duration = .seconds(30), log: String? = nil
    ) async throws -> Notification {
        do {
            return try await Deadline.run(within: limit, "\"\(summary)\" on the server") {
                while true {
                    let notification = try await self.nextNotification()
                    if notification.summary == summary { return notification }
                }
            }
        } catch let error where log != nil {
            let text = log.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "(none)"
            throw TestEnvironmentError("\(error)\nthe agent's log (\(log ?? "")):\n\(text)")
        }
    }

    /// Every `Notify` so far.
    public var notifications: [Notification] { state.withLock { $0.notifications } }
    /// The ids currently shown (notified, not closed).
    public var liveIDs: Set<UInt32> { state.withLock { Set($0.live.keys) } }
    /// Every `CloseNotification` id so far.
    public var closeRequests: [UInt32] { state.withLock { $0.closes } }

    /// Stops serving: the connection closes, as when the server crashes.
    public func stop() {
        connection.close()
        eventContinuation.finish()
        let pending = state.withLock { state in
            defer {
                state.delayedReplies = []
                state.held = []
            }
            return state.delayedReplies
        }
        for reply in pending { reply.cancel() }
    }

    /// Emits `ActionInvoked(id, key)`; `from` lets a test forge it from another connection.
    public func emitActionInvoked(id: UInt32, key: String, from other: DBusConnection? = nil) throws {
        try emit("ActionInvoked", [.uint32(id), .string(key)], id: id, from: other)
    }

    /// Emits `ActivationToken(id, token)`.
    public func emitActivationToken(id: UInt32, token: String) throws {
        try emit("ActivationToken", [.uint32(id), .string(token)], id: id, from: nil)
    }

    /// Emits `NotificationReplied(id, text)`: the person typed in the server's own reply field (Plasma).
    public func emitReplied(id: UInt32, text: String) throws {
        try emit("NotificationReplied", [.uint32(id), .string(text)], id: id, from: nil)
    }

    /// Emits `NotificationClosed(id, reason)` and forgets the id.
    public func emitClosed(id: UInt32, reason: UInt32, from other: DBusConnection? = nil) throws {
        if other == nil { _ = state.withLock { $0.live.removeValue(forKey: id) } }
        try emit("NotificationClosed", [.uint32(id), .uint32(reason)], id: id, from: other)
    }

    private func emit(_ member: MemberName, _ body: [DBusValue], id: UInt32, from other: DBusConnection?) throws {
        let sender = other ?? connection
        let target = state.withLock { $0.live[id] ?? $0.notifications.last { $0.id == id }?.sender }
        let destination = options.unicastSignals ? try target.map { try BusName(validating: $0) } : nil
        try sender.emitSignal(
            path: Self.path, interface: Self.interface, member: member, arguments: body, destination: destination)
    }

    private func notify(_ call: IncomingCall) {
        guard let arguments = try? NotifyCall(call.message) else {
            call.fail(DBusError(name: DBusError.Name.invalidArgs, message: "Notify wants (susssasa{sv}i)"))
            return
        }
        let replaces = arguments.replacesID
        let notification = state.withLock { state -> Notification in
            let id: UInt32
            if replaces != 0, state.live[replaces] != nil {
                id = replaces
            } else {
                id = state.nextID
                state.nextID += 1
            }
            let notification = Notification(id: id, sender: call.message.sender ?? "", arguments: arguments)
            state.live[id] = notification.sender
            state.notifications.append(notification)
            return notification
        }
        if options.reportsAfterReply, options.notifyDelay == nil {
            call.reply([.uint32(notification.id)])
            eventContinuation.yield(.notify(notification))
            return
        }
        eventContinuation.yield(.notify(notification))
        if let delay = options.notifyDelay {
            // Cancelled by `stop()`: a server that stops never answers, and the call is released (a reply task
            // still sleeping when the test process ends would hold the call's message: a leak under valgrind).
            let reply = Task {
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                call.reply([.uint32(notification.id)])
            }
            state.withLock { $0.delayedReplies.append(reply) }
        } else {
            call.reply([.uint32(notification.id)])
        }
    }

    private func closeNotification(_ call: IncomingCall) {
        guard let id = (try? call.message.arguments("u"))?[0].uint32Value else {
            call.fail(DBusError(name: DBusError.Name.invalidArgs, message: "CloseNotification wants (u)"))
            return
        }
        state.withLock { $0.closes.append(id) }
        eventContinuation.yield(.close(id))
        guard let delay = options.closeDelay else {
            carryOutClose(id, call)
            return
        }
        let reply = Task {
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            self.carryOutClose(id, call)
        }
        state.withLock { $0.delayedReplies.append(reply) }
    }

    /// Closes `id` (it is gone before the call is answered, as on a real server), answers, then says so.
    private func carryOutClose(_ id: UInt32, _ call: IncomingCall) {
        let wasLive = state.withLock { $0.live.removeValue(forKey: id) != nil }
        call.reply()
        if wasLive { try? emitClosed(id: id, reason: 3) }
    }
}
