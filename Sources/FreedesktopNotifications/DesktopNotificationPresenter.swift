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
/// Timing: the center closes each toast with `CloseNotification` when its time is up. The server is told the
/// same thing: `expire_timeout` is the remaining time while the toast's timer runs, and 0 (never) while it is
/// covered, paused or the screen is locked; when the timer starts or stops, the notification is replaced in place
/// with the new timeout (docs/decisions/0004-server-time.md). Updates of one toast that come faster than the
/// server answers collapse into the newest. What the server cannot do (no actions, no body, no markup) degrades
/// and is reported as a `degraded` event.
///
/// Server lifecycle: with no server, presenting reports a recoverable failure and the center keeps the toast;
/// when a server appears or is replaced (`NameOwnerChanged`), the center is asked to show its live toasts again
/// with their remaining time. While the screen saver is active, the center's timers are paused.
///
/// The rules live in a plain state machine (`DesktopPresenterMachine`); this class feeds it one event at a time
/// under one lock and carries out what it returns: D-Bus calls outside the lock, reports to the center in order
/// on a task of their own (never on the connection's I/O thread, where replies and signals arrive).
public final class DesktopNotificationPresenter: ToastPresenter {
    /// The configuration.
    public let configuration: DesktopPresenterConfiguration

    private struct State {
        var machine: DesktopPresenterMachine
        var events: ToastPresenterEvents?
        var link: ServerLink?
        var linkTask: Task<ServerLink, any Error>?
        var waiters: [DesktopPresenterMachine.WaiterID: CheckedContinuation<UInt32, any Error>] = [:]
        var nextWaiter: DesktopPresenterMachine.WaiterID = 0
    }

    private let state: Mutex<State>

    /// Reports to the center, in order, off the I/O thread.
    private let reports = ReportQueue()

    /// A presenter for the desktop's session bus (or the bus in `configuration`); it connects at first use.
    public init(configuration: DesktopPresenterConfiguration = DesktopPresenterConfiguration()) {
        self.configuration = configuration
        state = Mutex(State(machine: DesktopPresenterMachine(configuration: configuration)))
    }

    deinit {
        reports.finish()
        state.withLock { $0.link?.connection }?.close()
    }

    // MARK: - ToastPresenter

    /// Keeps the center's sink.
    public func connect(_ events: ToastPresenterEvents) {
        state.withLock { $0.events = events }
    }

    /// Forgets the center and closes the connection.
    public func disconnect() {
        let (connection, actions) = state.withLock { state in
            let connection = state.link?.connection
            let actions = queueReports(state.machine.handle(.reset), state: state)
            state.events = nil
            state.link = nil
            state.linkTask = nil
            return (connection, actions)
        }
        carryOut(actions)
        connection?.close()
    }

    /// Sends `Notify` for a toast that is not on screen (or queues it behind the one on its way).
    public func show(_ presentation: ToastPresentation) {
        handle(.show(presentation))
    }

    /// Sends `Notify` with `replaces_id` for a toast on screen; updates that come faster than the server answers
    /// collapse into the newest.
    public func update(_ presentation: ToastPresentation) {
        handle(.show(presentation))
    }

    /// Sends `CloseNotification` (once the server has answered the toast's `Notify`, if it is on its way).
    public func close(id: String, reason: ToastCloseReason) {
        handle(.close(id: id, expired: reason == .expired))
    }

    /// Replaces the notification in place with the new `expire_timeout`: the remaining time while the timer runs,
    /// 0 (never) while it does not.
    public func timerChanged(id: String, remaining: Duration?, isRunning: Bool) {
        handle(.timer(id: id, remaining: remaining, isRunning: isRunning))
    }

    // MARK: - Queries

    /// What the current server can do (read once per server and cached).
    public func serverCapabilities() async throws -> ServerCapabilities {
        if let known = state.withLock({ $0.machine.capabilities }) { return known }
        return try await link().readCapabilities(timeout: configuration.callTimeout)
    }

    /// The server id of a toast on screen, if it has one (for tests and tools).
    public func serverID(ofToast id: String) -> UInt32? {
        state.withLock { $0.machine.serverID(ofToast: id) }
    }

    /// Treats `serverID` as the server's notification for toast `id`, so the toast's next `Notify` replaces it
    /// (`replaces_id`) instead of adding another. For tools that remember server ids across runs; a stale id is
    /// harmless (the server then shows a new notification).
    public func adopt(serverID: UInt32, forToast id: String) {
        handle(.adopt(serverID: serverID, toastID: id))
    }

    /// Waits until the server has answered every `Notify` sent or queued so far for toast `id`, and returns its
    /// server id.
    ///
    /// - Throws: ``DesktopPresentationError`` when the latest `Notify` failed (no server, refused, invalid input)
    ///   or the toast was closed before the server accepted it.
    public func accepted(_ id: String) async throws -> UInt32 {
        try await withCheckedThrowingContinuation { continuation in
            let actions = state.withLock { state -> [DesktopPresenterMachine.Action] in
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                return queueReports(
                    state.machine.handle(.awaitAccepted(id: id, waiter: state.nextWaiter)), state: state)
            }
            carryOut(actions)
        }
    }

    /// Returns once every call to the server is answered and no toast waits for the connection — everything shown
    /// so far is on the server, or has failed — and every report that produced has been handed to the center.
    public func flush() async {
        _ = try? await withCheckedThrowingContinuation { continuation in
            let actions = state.withLock { state -> [DesktopPresenterMachine.Action] in
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                return queueReports(state.machine.handle(.awaitSettled(waiter: state.nextWaiter)), state: state)
            }
            carryOut(actions)
        }
        await reportsDelivered()
    }

    /// Returns once every report made so far (failures, degradations, actions, closes) has been handed to the
    /// center, without waiting for calls in flight: a service that has just seen a toast accepted uses it to know
    /// that what the server's answer set off has reached the center.
    public func reportsDelivered() async {
        await reports.delivered()
    }

    // MARK: - The shell

    /// Feeds one event to the machine under the lock and carries out what it returns.
    private func handle(_ event: DesktopPresenterMachine.Event) {
        let (actions, link) = state.withLock { state in
            (queueReports(state.machine.handle(event), state: state), state.link)
        }
        carryOut(actions, link: link)
    }

    /// Queues the reports among `actions` for the center, under the lock, so they keep the machine's order
    /// whichever thread carries out the rest. Returns what is left to do outside the lock.
    private func queueReports(
        _ actions: [DesktopPresenterMachine.Action], state: State
    ) -> [DesktopPresenterMachine.Action] {
        reports.queueReports(actions, to: state.events) { action in
            if case .report(let report) = action { report } else { nil }
        }
    }

    /// Carries out actions outside the lock.
    private func carryOut(_ actions: [DesktopPresenterMachine.Action], link: ServerLink? = nil) {
        for action in actions {
            switch action {
            case .connect(let generation):
                Task { await self.makeLink(generation: generation) }
            case .notify(let id, let call, let arguments):
                send(arguments, for: id, call: call, on: link)
            case .close(let id, let call, let serverID):
                close(serverID, on: link) { self.handle(.closeAnswered(id: id, call: call)) }
            case .discard(let serverID):
                close(serverID, on: link) {}
            case .resume(let ids, let result):
                let continuations = state.withLock { state in ids.compactMap { state.waiters.removeValue(forKey: $0) } }
                for continuation in continuations { continuation.resume(with: result.mapError { $0 as any Error }) }
            case .report:
                break  // queued under the lock
            }
        }
    }

    /// Sends `Notify`; its answer, on the connection's I/O thread, goes back into the machine.
    private func send(_ arguments: NotifyCall, for id: String, call: UInt64, on link: ServerLink?) {
        let timeout = configuration.callTimeout
        guard let link else {
            let lost = DesktopPresentationError(.busUnavailable, reason: "the session bus connection was lost")
            handle(.notifyAnswered(id: id, call: call, .failure(lost)))
            return
        }
        do {
            try link.connection.call(NotificationsClient.call("Notify", arguments.arguments), timeout: timeout) {
                reply in
                let result = reply.flatMap { message in
                    Result { try NotificationsClient.notifyResult(message) }
                }
                .map { DesktopPresenterMachine.NotifyReply(serverID: $0.id, sender: $0.server) }
                .mapError { DesktopPresentationError(any: $0, timeout: timeout) }
                self.handle(.notifyAnswered(id: id, call: call, result))
            }
        } catch {
            handle(.notifyAnswered(id: id, call: call, .failure(DesktopPresentationError(error, timeout: timeout))))
        }
    }

    /// Sends `CloseNotification`; `answered` runs once the server answered (whatever it answered), or at once
    /// when there is no connection to send it on.
    private func close(_ serverID: UInt32, on link: ServerLink?, answered: @escaping @Sendable () -> Void) {
        guard let link else { return answered() }
        do {
            try link.connection.call(
                NotificationsClient.call("CloseNotification", [.uint32(serverID)]), timeout: configuration.callTimeout
            ) { _ in answered() }
        } catch {
            answered()
        }
    }

    // MARK: - The link to the server

    private func link() async throws -> ServerLink {
        if let link = state.withLock({ $0.link }) { return link }
        let task = state.withLock { state -> Task<ServerLink, any Error> in
            if let task = state.linkTask { return task }
            let task = Task { try await self.openLink() }
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

    private func openLink() async throws -> ServerLink {
        let weak = WeakPresenter(self)
        let link = try await ServerLink.open(configuration: configuration) { event in
            weak.value?.handle(event)
        } lost: { connection, reason in
            weak.value?.lost(connection, reason: reason)
        }
        state.withLock { $0.link = link }
        return link
    }

    /// Opens the link if needed and reads the server's capabilities and owner, for the machine's `connect`.
    private func makeLink(generation: UInt64) async {
        do {
            let link = try await link()
            let (capabilities, owner) = try await link.readServer(timeout: configuration.callTimeout)
            handle(.linkReady(generation: generation, capabilities: capabilities, owner: owner))
        } catch {
            let failure = DesktopPresentationError(any: error, timeout: configuration.callTimeout)
            handle(.linkFailed(generation: generation, failure))
        }
    }

    private func lost(_ connection: DBusConnection, reason: DBusError) {
        let current = state.withLock { state -> Bool in
            guard state.link?.connection === connection else { return false }
            state.link = nil
            state.linkTask = nil
            return true
        }
        if current { handle(.connectionLost(DesktopPresentationError(reason, timeout: configuration.callTimeout))) }
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
