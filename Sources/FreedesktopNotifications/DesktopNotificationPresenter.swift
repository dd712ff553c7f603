import DBus
import Synchronization
public import ToastModel

/// Shows a center's toasts as desktop notifications through `org.freedesktop.Notifications`, and turns the
/// server's signals back into the center's actions and closes.
///
/// One private session-bus connection (made at first use) both sends `Notify` and listens, because dunst sends
/// its signals only to the connection that called `Notify`. Signals are accepted only from the current owner of
/// `org.freedesktop.Notifications` and only for ids this presenter created: a look-alike `ActionInvoked` from
/// another connection changes nothing.
///
/// The center owns timing: it closes each toast with `CloseNotification` when its time is up, and the presenter
/// also sends the remaining time as `expire_timeout`, a safety net for when the process is gone. What the server
/// cannot do (no actions, no body, no markup) degrades and is reported as a `degraded` event.
///
/// Server lifecycle: with no server, presenting reports a recoverable failure and the center keeps the toast;
/// when a server appears or is replaced (`NameOwnerChanged`), the center is asked to show its live toasts again
/// with their remaining time. While the screen saver is active, the center's timers are paused.
public final class DesktopNotificationPresenter: ToastPresenter {
    /// The configuration.
    public let configuration: DesktopPresenterConfiguration
    private let state = Mutex(State())

    /// Reports to the center, in order, delivered by one task on the shared pool: the toasts' queues run on the
    /// connection's I/O thread, and what a report sets off (the center's events, action handlers, observers) is
    /// app code that must never run there.
    private let reports: AsyncStream<@Sendable () -> Void>.Continuation

    /// A presenter for the desktop's session bus (or the bus in `configuration`); it connects at first use.
    public init(configuration: DesktopPresenterConfiguration = DesktopPresenterConfiguration()) {
        self.configuration = configuration
        let (stream, continuation) = AsyncStream<@Sendable () -> Void>.makeStream(bufferingPolicy: .unbounded)
        reports = continuation
        Task.detached {
            for await report in stream { report() }
        }
    }

    deinit {
        reports.finish()
        state.withLock { $0.link?.connection }?.close()
    }

    private func report(_ body: @escaping @Sendable () -> Void) {
        reports.yield(body)
    }

    // MARK: - ToastPresenter

    /// Keeps the center's sink.
    public func connect(_ events: ToastPresenterEvents) {
        state.withLock { $0.events = events }
    }

    /// Forgets the center and closes the connection.
    public func disconnect() {
        let connection = state.withLock { state -> DBusConnection? in
            defer { state = State() }
            return state.link?.connection
        }
        connection?.close()
    }

    /// Queues `Notify` for a toast that is not on screen.
    public func show(_ presentation: ToastPresentation) {
        enqueue(presentation.id, .show(presentation))
    }

    /// Queues `Notify` with `replaces_id` for a toast on screen.
    public func update(_ presentation: ToastPresentation) {
        enqueue(presentation.id, .show(presentation))
    }

    /// Queues `CloseNotification`.
    public func close(id: String, reason: ToastCloseReason) {
        enqueue(id, .close)
    }

    // MARK: - Queries

    /// What the current server can do (read once per server and cached).
    public func serverCapabilities() async throws -> ServerCapabilities {
        try await capabilities(link())
    }

    /// The server id of a toast on screen, if it has one (for tests and tools).
    public func serverID(ofToast id: String) -> UInt32? {
        state.withLock { $0.entries[id]?.serverID }
    }

    /// Treats `serverID` as the server's notification for toast `id`, so the toast's next `Notify` replaces it
    /// (`replaces_id`) instead of adding another. For tools that remember server ids across runs; a stale id is
    /// harmless (the server then shows a new notification).
    public func adopt(serverID: UInt32, forToast id: String) {
        state.withLock { state in
            state.entries[id, default: Entry()].serverID = serverID
            state.toastForServerID[serverID] = id
        }
    }

    /// Waits until the server has answered every `Notify` queued so far for toast `id`, and returns its server id.
    ///
    /// - Throws: ``DesktopPresentationError`` when the latest `Notify` failed (no server, refused, invalid input)
    ///   or the toast was closed before the server accepted it.
    public func accepted(_ id: String) async throws -> UInt32 {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<UInt32, DesktopPresentationError>? = state.withLock { state in
                guard var entry = state.entries[id] else { return .failure(.notPresented(id)) }
                let showsPending =
                    entry.running || entry.operations.contains { if case .show = $0 { true } else { false } }
                if !showsPending {
                    if let serverID = entry.serverID { return .success(serverID) }
                    return .failure(entry.lastFailure ?? .notPresented(id))
                }
                entry.waiters.append(continuation)
                state.entries[id] = entry
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    // MARK: - State

    private enum Operation {
        case show(ToastPresentation)
        case close
    }

    private struct Entry {
        var serverID: UInt32?
        var operations: [Operation] = []
        var running = false
        var closed = false
        var actionKeys: [String: String] = [:]
        var reported: Set<String> = []
        var lastFailure: DesktopPresentationError?
        var waiters: [CheckedContinuation<UInt32, any Error>] = []
    }

    private struct Link {
        let connection: DBusConnection
        let client: NotificationsClient
    }

    private struct State {
        var events: ToastPresenterEvents?
        var link: Link?
        var linkTask: Task<Link, any Error>?
        var owner: String?
        var capabilitiesTask: Task<ServerCapabilities, any Error>?
        /// The current server's capabilities once known (cleared with `capabilitiesTask` when the server changes).
        var capabilities: ServerCapabilities?
        var entries: [String: Entry] = [:]
        var toastForServerID: [UInt32: String] = [:]
        var tokens: [UInt32: String] = [:]
        var notifiesInFlight = 0
        /// Signals for ids not known yet, kept while a `Notify` reply may still bring the id.
        var orphans: [UInt32: [NotificationSignal]] = [:]
    }

    // MARK: - Per-toast queues

    /// Each toast's operations run in order (a close waits for the `Notify` that gives the id); different toasts'
    /// operations run concurrently, so a burst of toasts is pipelined.
    ///
    /// No task per toast: once the connection and the server's capabilities are known, an operation is sent from
    /// the caller's thread and its reply, on the connection's I/O thread, records the result, resumes
    /// ``accepted(_:)``'s waiters and starts the queue's next operation. What a reply sets off for the center goes
    /// through ``report(_:)``, never on the I/O thread.
    private func enqueue(_ id: String, _ operation: Operation) {
        let start = state.withLock { state -> Bool in
            var entry = state.entries[id] ?? Entry()
            entry.operations.append(operation)
            if case .show = operation { entry.closed = false }
            defer { state.entries[id] = entry }
            guard !entry.running else { return false }
            entry.running = true
            return true
        }
        if start { runQueue(id) }
    }

    /// Carries out toast `id`'s operations until the queue is empty or one waits for the server (its completion
    /// calls this again). Only whoever holds the queue's `running` claim calls it.
    private func runQueue(_ id: String) {
        while let operation = nextOperation(for: id) {
            let next: @Sendable () -> Void = { self.runQueue(id) }
            let waits =
                switch operation {
                case .show(let presentation): startNotify(presentation, then: next)
                case .close: startClose(id, then: next)
                }
            if waits { return }
        }
    }

    private func nextOperation(for id: String) -> Operation? {
        typealias Waiters = [CheckedContinuation<UInt32, any Error>]
        let (operation, waiters, result) = state.withLock {
            state -> (Operation?, Waiters, Result<UInt32, DesktopPresentationError>?) in
            guard var entry = state.entries[id] else { return (nil, [], nil) }
            guard !entry.operations.isEmpty else {
                entry.running = false
                let waiters = entry.waiters
                entry.waiters = []
                let result: Result<UInt32, DesktopPresentationError> =
                    entry.serverID.map { .success($0) } ?? .failure(entry.lastFailure ?? .notPresented(id))
                state.entries[id] = entry.closed && entry.serverID == nil ? nil : entry
                return (nil, waiters, result)
            }
            let operation = entry.operations.removeFirst()
            state.entries[id] = entry
            return (operation, [], nil)
        }
        // Outside the lock: waking a waiting task is a system call, and the caller's thread wants the lock next.
        if let result {
            for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
        }
        return operation
    }

    // MARK: - Notify and close

    /// Starts `Notify` for `presentation`; returns true when `next` will be called once it is done, false when it
    /// is done already (nothing to send, or it failed before anything was sent).
    private func startNotify(_ presentation: ToastPresentation, then next: @escaping @Sendable () -> Void) -> Bool {
        let id = presentation.id
        let known = state.withLock { state -> (ToastPresenterEvents, Link?, ServerCapabilities?)? in
            guard let events = state.events else { return nil }
            return (events, state.link, state.capabilities)
        }
        guard let (events, link, capabilities) = known else { return false }
        if let link, let capabilities {
            return sendNotify(presentation, link: link, capabilities: capabilities, events: events, then: next)
        }
        // The first toast (or the first after a change of server): connect and ask for the capabilities first.
        Task {
            do {
                let link = try await self.link()
                let capabilities = try await self.capabilities(link)
                if self.sendNotify(presentation, link: link, capabilities: capabilities, events: events, then: next) {
                    return
                }
            } catch {
                self.fail(id, self.failure(error), events: events)
            }
            next()
        }
        return true
    }

    /// Maps and sends `Notify`; returns true when `next` will be called once the reply is handled.
    private func sendNotify(
        _ presentation: ToastPresentation,
        link: Link,
        capabilities: ServerCapabilities,
        events: ToastPresenterEvents,
        then next: @escaping @Sendable () -> Void
    ) -> Bool {
        let id = presentation.id
        let replaces = state.withLock { $0.entries[id]?.serverID ?? 0 }
        let mapped: MappedNotification
        do {
            mapped = try NotificationMapping.notify(
                presentation.request, replacesID: replaces, capabilities: capabilities, configuration: configuration)
        } catch {
            fail(id, DesktopPresentationError(.invalidInput, reason: error.description), events: events)
            return false
        }
        let fresh = state.withLock { state -> [String] in
            let new = mapped.degradations.filter { !(state.entries[id]?.reported.contains($0) ?? true) }
            state.entries[id]?.reported.formUnion(new)
            state.notifiesInFlight += 1
            return new
        }
        for reason in fresh { report { events.degraded(toastID: id, reason: reason) } }
        do {
            try call(NotificationsClient.call("Notify", mapped.call.arguments), on: link) { reply in
                // On the connection's I/O thread: bookkeeping only, then the queue's next operation.
                if self.notifyAnswered(id, reply, mapped: mapped, link: link, events: events, then: next) { return }
                next()
            }
        } catch {
            state.withLock { $0.notifiesInFlight -= 1 }
            fail(id, failure(error), events: events)
            return false
        }
        return true
    }

    /// Records the server's answer to `Notify`; returns true when `next` will be called later (a close that had
    /// to wait for the id).
    private func notifyAnswered(
        _ id: String,
        _ reply: Result<DBusMessage, any Error>,
        mapped: MappedNotification,
        link: Link,
        events: ToastPresenterEvents,
        then next: @escaping @Sendable () -> Void
    ) -> Bool {
        let result: (id: UInt32, server: String?)
        do {
            result = try NotificationsClient.notifyResult(try reply.get())
        } catch {
            state.withLock { $0.notifiesInFlight -= 1 }
            fail(id, failure(error), events: events)
            return false
        }
        enum Fate { case kept([NotificationSignal]), unwanted, serverGone }
        let fate = state.withLock { state -> Fate in
            state.notifiesInFlight -= 1
            defer { if state.notifiesInFlight == 0 { state.orphans = [:] } }
            if state.owner == nil { state.owner = result.server }
            // Answered by a server that has since been replaced: its id means nothing to the new one (the
            // owner change already asked the center to show the toast again).
            guard result.server == nil || result.server == state.owner else { return .serverGone }
            guard var entry = state.entries[id], !entry.closed else {
                // Closed or forgotten while Notify was on its way: the close found no id, so close it now.
                return .unwanted
            }
            if let old = entry.serverID, old != result.id { state.toastForServerID[old] = nil }
            entry.serverID = result.id
            entry.lastFailure = nil
            entry.actionKeys = mapped.actionKeys
            state.entries[id] = entry
            state.toastForServerID[result.id] = id
            return .kept(state.orphans.removeValue(forKey: result.id) ?? [])
        }
        switch fate {
        case .kept(let early):
            for signal in early { handle(signal) }
            return false
        case .unwanted:
            return closeNotification(result.id, on: link, then: next)
        case .serverGone:
            return false
        }
    }

    /// Sends `call` on the link's connection; `completion` runs on the connection's I/O thread.
    private func call(
        _ call: DBusMethodCall, on link: Link,
        completion: @escaping @Sendable (Result<DBusMessage, any Error>) -> Void
    ) throws(DBusError) {
        try link.connection.call(
            destination: call.destination, path: call.path, interface: call.interface, member: call.member,
            arguments: call.arguments, timeout: configuration.callTimeout, completion: completion)
    }

    /// What a failed `Notify` means for the toast.
    private func failure(_ error: any Error) -> DesktopPresentationError {
        switch error {
        case let error as ToastValidationError: DesktopPresentationError(.invalidInput, reason: error.description)
        case let error as DBusError: Self.describe(error, timeout: configuration.callTimeout)
        default: DesktopPresentationError(.refused, reason: "\(error)")
        }
    }

    private func fail(_ id: String, _ error: DesktopPresentationError, events: ToastPresenterEvents) {
        state.withLock { $0.entries[id]?.lastFailure = error }
        report { events.failed(toastID: id, reason: error.reason, recoverable: error.kind == .noServer) }
    }

    /// Says what a D-Bus failure means for a toast (only `.noServer` can be fixed by a server appearing later).
    static func describe(_ error: DBusError, timeout: Duration) -> DesktopPresentationError {
        switch error.name {
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner:
            DesktopPresentationError(
                .noServer, reason: "no notification server is running (org.freedesktop.Notifications has no owner)")
        case DBusError.Name.noReply:
            DesktopPresentationError(.timedOut, reason: "the notification server did not answer within \(timeout)")
        case DBusError.Name.badAddress, DBusError.Name.noServer, DBusError.Name.fileNotFound:
            DesktopPresentationError(.busUnavailable, reason: "cannot reach the session bus: \(error.message)")
        case DBusError.Name.disconnected:
            DesktopPresentationError(.busUnavailable, reason: "the session bus connection was lost: \(error.message)")
        case "org.freedesktop.Notifications.Error.ExcessNotificationGeneration":
            // KDE Plasma refuses a notification identical to the one before it within about a second.
            DesktopPresentationError(
                .refused,
                reason: "the notification server refused a toast identical to one it showed less than a second ago "
                    + "(\(error.name)): change its title or message, or present it again after a second")
        default:
            DesktopPresentationError(.refused, reason: "the notification server refused the toast: \(error)")
        }
    }

    /// Starts `CloseNotification` for the toast's server id, if it has one; returns true when `next` will be
    /// called once the server answered.
    private func startClose(_ id: String, then next: @escaping @Sendable () -> Void) -> Bool {
        let (serverID, link) = state.withLock { state -> (UInt32?, Link?) in
            guard var entry = state.entries[id] else { return (nil, nil) }
            entry.closed = true
            let serverID = entry.serverID
            entry.serverID = nil
            state.entries[id] = entry
            if let serverID {
                // Forget the id first: the NotificationClosed(3) that answers our own close is not news.
                state.toastForServerID[serverID] = nil
                state.tokens[serverID] = nil
            }
            return (serverID, state.link)
        }
        guard let serverID, let link else { return false }
        return closeNotification(serverID, on: link, then: next)
    }

    /// Sends `CloseNotification(serverID)`; returns true when `next` will be called once the server answered
    /// (whatever it answered).
    private func closeNotification(
        _ serverID: UInt32,
        on link: Link,
        then next: @escaping @Sendable () -> Void
    ) -> Bool {
        do {
            try call(NotificationsClient.call("CloseNotification", [.uint32(serverID)]), on: link) { _ in next() }
            return true
        } catch {
            return false
        }
    }

    // MARK: - Connection, capabilities, signals

    private func link() async throws -> Link {
        if let link = state.withLock({ $0.link }) { return link }
        let task = state.withLock { state -> Task<Link, any Error> in
            if let task = state.linkTask { return task }
            let task = Task { try await self.makeLink() }
            state.linkTask = task
            return task
        }
        do {
            return try await task.value
        } catch {
            state.withLock { if $0.linkTask == task { $0.linkTask = nil } }
            throw error
        }
    }

    private func makeLink() async throws -> Link {
        let connection = try await DBusConnection.connect(to: configuration.bus)
        do {
            var rules = NotificationsClient.signalRules
            if configuration.pausesWhileScreenLocked {
                rules.append(MatchRule(interface: "org.freedesktop.ScreenSaver", member: "ActiveChanged"))
            }
            let signals: SignalSubscription?
            let owner: String?
            if configuration.listensForSignals {
                signals = try await connection.signals(matchingAny: rules)
                owner = try await connection.nameOwner(of: NotificationsClient.busName)
            } else {
                (signals, owner) = (nil, nil)  // the owner is learned from the first Notify reply
            }
            let link = Link(
                connection: connection,
                client: NotificationsClient(connection: connection, timeout: configuration.callTimeout))
            state.withLock { state in
                state.link = link
                if state.owner == nil { state.owner = owner }
            }
            let weak = WeakPresenter(self)
            if let signals { Task { await Self.listen(to: signals, on: connection, presenter: weak) } }
            Task {
                let reason = await connection.waitUntilClosed()
                weak.value?.lost(connection, reason: reason)
            }
            return link
        } catch {
            connection.close()
            throw error
        }
    }

    private func capabilities(_ link: Link) async throws -> ServerCapabilities {
        if let known = state.withLock({ $0.capabilities }) { return known }
        let task = state.withLock { state -> Task<ServerCapabilities, any Error> in
            if let task = state.capabilitiesTask { return task }
            let task = Task {
                async let names = link.client.capabilities()
                async let information = try? link.client.serverInformation()
                return ServerCapabilities(try await names, information: await information)
            }
            state.capabilitiesTask = task
            return task
        }
        do {
            let capabilities = try await task.value
            state.withLock { if $0.capabilitiesTask == task { $0.capabilities = capabilities } }
            return capabilities
        } catch {
            state.withLock { if $0.capabilitiesTask == task { $0.capabilitiesTask = nil } }
            throw error
        }
    }

    private static func listen(to signals: SignalSubscription, on connection: DBusConnection, presenter: WeakPresenter)
        async
    {
        do {
            for try await message in signals {
                guard let presenter = presenter.value else { return }
                await presenter.receive(message, on: connection)
            }
        } catch {
            // The connection ended; `lost(_:reason:)` reports it.
        }
    }

    private func receive(_ message: DBusMessage, on connection: DBusConnection) async {
        if message.interface == "org.freedesktop.DBus", message.member == "NameOwnerChanged" {
            guard let values = try? message.arguments("sss"), message.sender == "org.freedesktop.DBus" else { return }
            let newOwner = values[2].stringValue.flatMap { $0.isEmpty ? nil : $0 }
            ownerChanged(to: newOwner)
            return
        }
        if message.interface == "org.freedesktop.ScreenSaver", message.member == "ActiveChanged" {
            guard let active = (try? message.arguments("b"))?[0].boolValue,
                let owner = try? await connection.nameOwner(of: "org.freedesktop.ScreenSaver"),
                owner == message.sender
            else { return }
            let events = state.withLock { $0.events }
            report { if active { events?.pause() } else { events?.resume() } }
            return
        }
        guard let signal = NotificationSignal(message) else { return }
        // Only the real server may speak.
        guard let sender = message.sender, state.withLock({ $0.owner == sender }) else { return }
        handle(signal)
    }

    private func handle(_ signal: NotificationSignal) {
        let report: (@Sendable () -> Void)? = state.withLock { state in
            guard let events = state.events else { return nil }
            guard let toastID = state.toastForServerID[signal.id] else {
                // Not ours — or ours, with the Notify reply still on its way: keep it until that reply is in.
                if state.notifiesInFlight > 0, state.orphans.count < 1024 {
                    state.orphans[signal.id, default: []].append(signal)
                }
                return nil
            }
            switch signal {
            case .activationToken(let id, let token):
                state.tokens[id] = token
                return nil
            case .actionInvoked(let id, let key):
                let token = state.tokens.removeValue(forKey: id)
                let presenterKey = state.entries[toastID]?.actionKeys[key] ?? key
                return { events.actionInvoked(toastID: toastID, key: presenterKey, activationToken: token) }
            case .closed(let id, let reason):
                state.toastForServerID[id] = nil
                state.tokens[id] = nil
                if state.entries[toastID]?.serverID == id { state.entries[toastID]?.serverID = nil }
                let closeReason = Self.closeReason(reason)
                return { events.closed(toastID: toastID, reason: closeReason) }
            }
        }
        if let report { self.report(report) }
    }

    static func closeReason(_ reason: NotificationCloseReason) -> ToastPresenterCloseReason {
        switch reason {
        case .expired: .expired
        case .dismissedByUser: .dismissedByUser
        case .closedByCall: .closedByCall
        case .undefined: .other("closed by the notification server (reason 4, undefined)")
        case .unknown(let value): .other("closed by the notification server with unknown reason \(value)")
        }
    }

    private func ownerChanged(to newOwner: String?) {
        let events = state.withLock { state -> ToastPresenterEvents? in
            guard state.owner != newOwner else { return nil }
            state.owner = newOwner
            state.capabilitiesTask = nil
            state.capabilities = nil
            state.toastForServerID = [:]
            state.tokens = [:]
            state.orphans = [:]
            for key in state.entries.keys { state.entries[key]?.serverID = nil }
            return state.events
        }
        guard let events else { return }
        report { Self.serverChanged(to: newOwner, events) }
    }

    private static func serverChanged(to newOwner: String?, _ events: ToastPresenterEvents) {
        if newOwner == nil {
            events.failed(
                toastID: nil, reason: "the notification server left the bus; toasts come back when a server starts",
                recoverable: true)
        } else {
            events.reshowAll()
        }
    }

    private func lost(_ connection: DBusConnection, reason: DBusError) {
        let events = state.withLock { state -> ToastPresenterEvents? in
            guard state.link?.connection === connection else { return nil }
            state.link = nil
            state.linkTask = nil
            state.capabilitiesTask = nil
            state.capabilities = nil
            state.owner = nil
            state.toastForServerID = [:]
            state.tokens = [:]
            for key in state.entries.keys { state.entries[key]?.serverID = nil }
            return state.entries.isEmpty ? nil : state.events
        }
        let failure = Self.describe(reason, timeout: configuration.callTimeout)
        if let events { report { events.failed(toastID: nil, reason: failure.reason, recoverable: false) } }
    }
}

/// A weak reference that can cross into tasks, so the listening task never keeps the presenter alive.
private final class WeakPresenter: Sendable {
    private struct Box {
        weak var value: DesktopNotificationPresenter?
    }
    private let storage: Mutex<Box>
    init(_ presenter: DesktopNotificationPresenter) { storage = Mutex(Box(value: presenter)) }
    var value: DesktopNotificationPresenter? { storage.withLock { $0.value } }
}

/// Why the desktop presenter could not show a toast.
public struct DesktopPresentationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: Sendable, Hashable {
        /// No notification server owns `org.freedesktop.Notifications` (the center keeps the toast).
        case noServer
        /// The session bus cannot be reached or was lost.
        case busUnavailable
        /// The server did not answer in time.
        case timedOut
        /// The server answered with an error.
        case refused
        /// The toast's content cannot be sent (a NUL byte, a bad image).
        case invalidInput
        /// The toast is not on the presenter (never shown, or closed before the server accepted it).
        case notPresented
    }

    /// The kind of failure.
    public var kind: Kind
    /// What went wrong, in words.
    public var reason: String

    /// Creates the error.
    public init(_ kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The toast was never presented, or was closed before the server accepted it.
    public static func notPresented(_ id: String) -> DesktopPresentationError {
        DesktopPresentationError(.notPresented, reason: "toast \"\(id)\" is not on the presenter")
    }

    /// The reason.
    public var description: String { reason }
}
