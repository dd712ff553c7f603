import DBus
import Synchronization
public import ToastModel

/// Shows a center's toasts through the notification portal (`org.freedesktop.portal.Notification`), the way Flatpak
/// and Snap apps reach the desktop's notifications, and turns the portal's `ActionInvoked` back into the center's
/// actions.
///
/// `ToastCenter()` uses it by itself when the process runs in a Flatpak or Snap sandbox (``NotificationBackend``); an
/// app can also choose it explicitly.
///
/// One private session-bus connection (made at first use) both calls the portal and listens, because the portal sends
/// `ActionInvoked` only to the connection that added the notification. It is accepted only from the current owner of
/// `org.freedesktop.portal.Desktop`, only for the notification a toast is shown under now, and only for an action name
/// this presenter gave it.
///
/// What the portal cannot do, and what the center reports then (docs/decisions/0005-portal.md):
/// - **No timeout.** The center closes each toast on time with `RemoveNotification` and reports it `.expired`; pause,
///   the screen lock and covered toasts hold that timer as usual. The notification server may still take the
///   notification off the screen earlier by its own default timeout; nobody is told, and the toast ends when its time
///   is up.
/// - **No closed signal.** A toast the person closes is not seen: a timed toast ends `.expired` when its time is up, an
///   indefinite one stays live until the app dismisses it. `.dismissed` is never reported.
/// - **No update in place.** New content for a toast (replace by id, a confirmation) is added under a new portal id
///   and the old id is removed, because xdg-desktop-portal-gtk 1.14.1 crashes when an id added again is removed.
/// - **Version 1** (Debian 12's xdg-desktop-portal 1.16) takes only title, body, icon, priority, default action and
///   buttons, and refuses a whole notification with any other key. The interface's `version` is read once per portal,
///   and version 2 keys (markup, sound, display hints, category, button purpose) go only to a portal that has them.
/// - **Failures it hides.** `AddNotification` answers success before the portal has passed the notification on, so a
///   missing notification server, a refused icon or (before version 2) a denied permission are not reported to the
///   app (NOTES P28). What it does report — no portal, no notification interface, a refused notification — is a
///   `failed` event, recoverable when the portal is missing.
///
/// The rules live in a plain state machine (`PortalPresenterMachine`); this class feeds it one event at a time under
/// one lock and carries out what it returns: D-Bus calls outside the lock, reports to the center in order on a task of
/// their own (never on the connection's I/O thread, where replies and signals arrive).
public final class PortalNotificationPresenter: ToastPresenter {
    /// The configuration (bus, call timeout, markup, message limit, screen-lock pause). The app's name, icon and
    /// desktop entry are not used: the portal names the app itself.
    public let configuration: DesktopPresenterConfiguration

    private struct State {
        var machine: PortalPresenterMachine
        var events: ToastPresenterEvents?
        var link: PortalLink?
        var linkTask: Task<PortalLink, any Error>?
        var waiters: [PortalPresenterMachine.WaiterID: CheckedContinuation<String, any Error>] = [:]
        var nextWaiter: PortalPresenterMachine.WaiterID = 0
        /// The wake-up the timer task sleeps until, if one does.
        var wake: (at: Duration, task: Task<Void, Never>)?
    }

    private let state: Mutex<State>
    private let time: Clockwork
    /// Why the portal is in use, for failure messages ("chosen automatically: /.flatpak-info exists").
    private let choice: String?
    /// The app id the portal knows this process by, when it runs in a sandbox.
    private let sandboxAppID: String?

    /// Reports to the center, in order, off the I/O thread.
    private let reports = ReportQueue()

    /// A presenter for the session bus's notification portal (or the bus in `configuration`); it connects at first
    /// use.
    ///
    /// - Parameters:
    ///   - configuration: The app's identity and options; its bus is the one the portal is looked for on.
    ///   - clock: The clock that times removals (an id is removed no earlier than half a second after the
    ///     portal accepted it); tests pass a manual clock.
    public convenience init(
        configuration: DesktopPresenterConfiguration = DesktopPresenterConfiguration(),
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.init(configuration: configuration, clock: clock, settleTime: PortalPresenterMachine.defaultSettleTime)
    }

    /// A presenter with a given settle time (see `PortalPresenterMachine`).
    package init(
        configuration: DesktopPresenterConfiguration, clock: some Clock<Duration>, settleTime: Duration
    ) {
        self.configuration = configuration
        var generator = SystemRandomNumberGenerator()
        let session = String(generator.next() as UInt32, radix: 16)
        state = Mutex(
            State(
                machine: PortalPresenterMachine(
                    configuration: configuration, idPrefix: "toastkit-\(session)-", settleTime: settleTime)))
        time = Clockwork(clock)
        switch configuration.backend {
        case .automatic: choice = configuration.backend.choice().reason
        case .portal: choice = "chosen explicitly"
        case .notifications: choice = nil
        }
        sandboxAppID = Sandbox.detect()?.appID()
    }

    deinit {
        reports.finish()
        let (connection, wake) = state.withLock { ($0.link?.connection, $0.wake?.task) }
        wake?.cancel()
        connection?.close()
    }

    // MARK: - ToastPresenter

    /// Keeps the center's sink.
    public func connect(_ events: ToastPresenterEvents) {
        state.withLock { $0.events = events }
    }

    /// Forgets the center and closes the connection.
    public func disconnect() {
        let (connection, actions, wake) = state.withLock { state in
            let connection = state.link?.connection
            let actions = queueReports(state.machine.handle(.reset, now: time.now()), state: state)
            let wake = state.wake?.task
            state.events = nil
            state.link = nil
            state.linkTask = nil
            state.wake = nil
            return (connection, actions, wake)
        }
        wake?.cancel()
        carryOut(actions)
        connection?.close()
    }

    /// Adds the toast under a new portal id (the portal has no update in place).
    public func show(_ presentation: ToastPresentation) {
        handle(.show(presentation, iconFile: Self.iconFile(of: presentation)))
    }

    /// Adds the new content under a new portal id and removes the old one; updates that come faster than the portal
    /// answers collapse into the newest.
    public func update(_ presentation: ToastPresentation) {
        handle(.show(presentation, iconFile: Self.iconFile(of: presentation)))
    }

    /// Removes the toast's notification (`RemoveNotification`).
    public func close(id: String, reason: ToastCloseReason) {
        handle(.close(id: id))
    }

    // `timerChanged(id:remaining:isRunning:)`: the default (nothing). The portal has no timeout to keep in step.

    /// Returns once every call to the portal is answered, no toast waits for the connection and no removal is held
    /// until its id settles (at most half a second) — everything handed over so far is on the portal or gone from it,
    /// or has failed — and every report that produced has been handed to the center. A program that exits right
    /// after a toast ended calls it (through ``ToastCenter/flush()``) so the notification does not stay behind.
    public func flush() async {
        _ = try? await withCheckedThrowingContinuation { continuation in
            let actions = state.withLock { state -> [PortalPresenterMachine.Action] in
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                return queueReports(
                    state.machine.handle(.awaitSettled(waiter: state.nextWaiter), now: time.now()), state: state)
            }
            carryOut(actions)
        }
        await reports.delivered()
    }

    // MARK: - Queries

    /// The portal's interface version (read once per portal and cached): 1 for xdg-desktop-portal before 1.20.
    ///
    /// - Throws: ``DesktopPresentationError`` when the portal cannot be reached or has no notification interface.
    public func portalVersion() async throws -> UInt32 {
        if let known = state.withLock({ $0.machine.version }) { return known }
        do {
            return try await link().readVersion(timeout: configuration.callTimeout)
        } catch {
            throw DesktopPresentationError.portal(
                any: error, timeout: configuration.callTimeout, choice: choice)
        }
    }

    /// The portal id a toast is shown under, if it is on the portal (for tests and tools).
    public func portalID(ofToast id: String) -> String? {
        state.withLock { $0.machine.portalID(ofToast: id) }
    }

    /// Treats `portalID` as the notification toast `id` is shown under, so the toast's next content replaces it
    /// (removes it) instead of adding a second one. For tools that remember portal ids across runs.
    public func adopt(portalID: String, forToast id: String) {
        handle(.adopt(portalID: portalID, toastID: id))
    }

    /// Waits until the portal has answered every `AddNotification` sent or queued so far for toast `id`, and returns
    /// the portal id it is shown under.
    ///
    /// - Throws: ``DesktopPresentationError`` when the latest add failed (no portal, refused, invalid input) or the
    ///   toast was closed before the portal accepted it.
    public func accepted(_ id: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            let actions = state.withLock { state -> [PortalPresenterMachine.Action] in
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                return queueReports(
                    state.machine.handle(.awaitAccepted(id: id, waiter: state.nextWaiter), now: time.now()),
                    state: state)
            }
            carryOut(actions)
        }
    }

    // MARK: - The shell

    /// What the toast's icon file holds, read here because the machine does no I/O.
    private static func iconFile(of presentation: ToastPresentation) -> PortalIconFile? {
        guard case .file(let path)? = presentation.request.icon else { return nil }
        return PortalIconFile.read(path)
    }

    /// Feeds one event to the machine under the lock and carries out what it returns.
    private func handle(_ event: PortalPresenterMachine.Event) {
        let (actions, link) = state.withLock { state in
            (queueReports(state.machine.handle(event, now: time.now()), state: state), state.link)
        }
        carryOut(actions, link: link)
    }

    /// Queues the reports among `actions` for the center, under the lock, so they keep the machine's order whichever
    /// thread carries out the rest. Returns what is left to do outside the lock.
    private func queueReports(
        _ actions: [PortalPresenterMachine.Action], state: State
    ) -> [PortalPresenterMachine.Action] {
        reports.queueReports(actions, to: state.events) { action in
            if case .report(let report) = action { report } else { nil }
        }
    }

    /// Carries out actions outside the lock.
    private func carryOut(_ actions: [PortalPresenterMachine.Action], link: PortalLink? = nil) {
        for action in actions {
            switch action {
            case .connect(let generation):
                Task { await self.makeLink(generation: generation) }
            case .add(let id, let call, let portalID, let notification):
                add(notification, portalID: portalID, for: id, call: call, on: link)
            case .remove(let portalID):
                // The answer says nothing (the portal does not know whether the id existed); it tells that the call
                // is through, for flush().
                remove(portalID, on: link)
            case .resume(let ids, let result):
                let continuations = state.withLock { state in ids.compactMap { state.waiters.removeValue(forKey: $0) } }
                for continuation in continuations { continuation.resume(with: result.mapError { $0 as any Error }) }
            case .wake(let at):
                arm(at)
            case .report:
                break  // queued under the lock
            }
        }
    }

    /// Sends `AddNotification`; its answer, on the connection's I/O thread, goes back into the machine.
    private func add(
        _ notification: PortalNotification, portalID: String, for id: String, call: UInt64, on link: PortalLink?
    ) {
        let timeout = configuration.callTimeout
        guard let link else {
            let lost = DesktopPresentationError(.busUnavailable, reason: "the session bus connection was lost")
            handle(.addAnswered(id: id, call: call, .failure(lost)))
            return
        }
        do {
            try link.connection.call(NotificationPortalClient.add(id: portalID, notification), timeout: timeout) {
                reply in
                let result = reply.map { $0.sender }.mapError { error in
                    DesktopPresentationError.portal(any: error, timeout: timeout, choice: self.choice)
                }
                self.handle(.addAnswered(id: id, call: call, result))
            }
        } catch {
            handle(
                .addAnswered(
                    id: id, call: call, .failure(.portal(any: error, timeout: timeout, choice: choice))))
        }
    }

    /// Sends `RemoveNotification`; its answer goes back into the machine (at once when there is no connection).
    private func remove(_ portalID: String, on link: PortalLink?) {
        guard let link else { return handle(.removeAnswered(portalID: portalID)) }
        do {
            try link.connection.call(NotificationPortalClient.remove(id: portalID), timeout: configuration.callTimeout)
            {
                _ in self.handle(.removeAnswered(portalID: portalID))
            }
        } catch {
            handle(.removeAnswered(portalID: portalID))
        }
    }

    /// Makes sure a timer task wakes the machine by `deadline` (one task at a time, for the earliest deadline; the
    /// machine asks again for later ones when it wakes).
    private func arm(_ deadline: Duration) {
        let stale = state.withLock { state -> Task<Void, Never>? in
            if let wake = state.wake, wake.at <= deadline { return nil }
            let stale = state.wake?.task
            let time = self.time
            let task = Task { [weak self] in
                do {
                    try await time.sleep(deadline)
                } catch {
                    return
                }
                self?.woke(at: deadline)
            }
            state.wake = (deadline, task)
            return stale
        }
        stale?.cancel()
    }

    private func woke(at deadline: Duration) {
        state.withLock { state in
            if state.wake?.at == deadline { state.wake = nil }
        }
        handle(.tick)
    }

    // MARK: - The link to the portal

    private func link() async throws -> PortalLink {
        if let link = state.withLock({ $0.link }) { return link }
        let task = state.withLock { state -> Task<PortalLink, any Error> in
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

    private func openLink() async throws -> PortalLink {
        let weak = WeakPortalPresenter(self)
        let link = try await PortalLink.open(configuration: configuration) { event in
            weak.value?.handle(event)
        } lost: { connection, reason in
            weak.value?.lost(connection, reason: reason)
        }
        state.withLock { $0.link = link }
        return link
    }

    /// Opens the link if needed and reads the portal's version and owner, for the machine's `connect`.
    private func makeLink(generation: UInt64) async {
        let timeout = configuration.callTimeout
        let link: PortalLink
        do {
            link = try await self.link()
        } catch {
            handle(.linkFailed(generation: generation, .portal(any: error, timeout: timeout, choice: choice)))
            return
        }
        do {
            let (version, owner) = try await link.readPortal(timeout: timeout)
            // A version 1 portal answers success and drops the notification when the person turned notifications off
            // for the app (NOTES P28); the permission store says so, where the sandbox lets the app ask it.
            if let appID = sandboxAppID,
                let permission = await link.notificationPermission(of: appID, timeout: timeout),
                permission.contains("no")
            {
                let reason =
                    "notifications are turned off for \(appID): the desktop portal's permission store says \"no\" "
                    + "(turn them on in the desktop's settings, or run `flatpak permission-set notifications "
                    + "notification \(appID) yes`)"
                handle(.linkFailed(generation: generation, DesktopPresentationError(.refused, reason: reason)))
                return
            }
            handle(.linkReady(generation: generation, version: version, owner: owner))
        } catch let error as DBusError {
            handle(
                .linkFailed(
                    generation: generation, .portal(error, timeout: timeout, choice: choice, readingVersion: true)))
        } catch {
            handle(.linkFailed(generation: generation, .portal(any: error, timeout: timeout, choice: choice)))
        }
    }

    private func lost(_ connection: DBusConnection, reason: DBusError) {
        let current = state.withLock { state -> Bool in
            guard state.link?.connection === connection else { return false }
            state.link = nil
            state.linkTask = nil
            return true
        }
        if current { handle(.connectionLost(.portal(reason, timeout: configuration.callTimeout))) }
    }
}

/// A clock reduced to "now" as a `Duration` since the presenter was made, and sleeping until such a time.
private struct Clockwork: Sendable {
    let now: @Sendable () -> Duration
    let sleep: @Sendable (_ until: Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleep = { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) }
    }
}

/// A weak reference that can cross into tasks, so the listening task never keeps the presenter alive.
private final class WeakPortalPresenter: Sendable {
    private struct Box {
        weak var value: PortalNotificationPresenter?
    }
    private let storage: Mutex<Box>
    init(_ presenter: PortalNotificationPresenter) { storage = Mutex(Box(value: presenter)) }
    var value: PortalNotificationPresenter? { storage.withLock { $0.value } }
}
