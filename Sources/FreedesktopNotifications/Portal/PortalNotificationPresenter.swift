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
/// The rules live in a plain state machine (`PortalPresenterMachine`); the shell both presenters share
/// (`PresenterShell`) feeds it one event at a time under one lock and carries out what it returns, with
/// `PortalBackend` for what is the portal's own: its signal, what the link reads (version, owner, permission),
/// `AddNotification` and `RemoveNotification`.
public final class PortalNotificationPresenter: ToastPresenter {
    /// The configuration (bus, call timeout, markup, message limit, screen-lock pause). The app's name, icon and
    /// desktop entry are not used: the portal names the app itself.
    public let configuration: PresenterConfiguration

    private let shell: PresenterShell<PortalBackend>

    /// A presenter for the session bus's notification portal (or the bus in `configuration`); it connects at first
    /// use.
    ///
    /// - Parameters:
    ///   - configuration: The app's identity and options; its bus is the one the portal is looked for on.
    ///   - clock: The clock that times removals (an id is removed no earlier than half a second after the
    ///     portal accepted it); tests pass a manual clock.
    public convenience init(
        configuration: PresenterConfiguration = PresenterConfiguration(),
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.init(configuration: configuration, clock: clock, settleTime: PortalPresenterMachine.defaultSettleTime)
    }

    /// A presenter with a given settle time (see `PortalPresenterMachine`).
    package init(
        configuration: PresenterConfiguration, clock: some Clock<Duration>, settleTime: Duration
    ) {
        self.configuration = configuration
        var generator = SystemRandomNumberGenerator()
        let session = String(generator.next() as UInt32, radix: 16)
        let choice: String? =
            switch configuration.backend {
            case .automatic: configuration.backend.choice().reason
            case .portal: "chosen explicitly"
            case .notifications: nil
            }
        shell = PresenterShell(
            backend: PortalBackend(
                configuration: configuration, choice: choice, sandboxAppID: Sandbox.detect()?.appID()),
            machine: PortalPresenterMachine(
                configuration: configuration, idPrefix: "toastkit-\(session)-", settleTime: settleTime),
            clock: clock)
    }

    // MARK: - ToastPresenter

    /// Keeps the center's sink.
    public func connect(_ events: ToastPresenterEvents) {
        shell.connect(events)
    }

    /// Forgets the center and closes the connection.
    public func disconnect() {
        shell.disconnect()
    }

    /// Adds the toast under a new portal id (the portal has no update in place).
    public func show(_ presentation: ToastPresentation) {
        shell.handle(.show(presentation, iconFile: Self.iconFile(of: presentation)))
    }

    /// Adds the new content under a new portal id and removes the old one; updates that come faster than the portal
    /// answers collapse into the newest.
    public func update(_ presentation: ToastPresentation) {
        shell.handle(.show(presentation, iconFile: Self.iconFile(of: presentation)))
    }

    /// Removes the toast's notification (`RemoveNotification`).
    public func close(id: String, reason: ToastCloseReason) {
        shell.handle(.close(id: id))
    }

    // `timerChanged(id:remaining:isRunning:)`: the default (nothing). The portal has no timeout to keep in step.

    /// Returns once every call to the portal is answered, no toast waits for the connection and no removal is held
    /// until its id settles (at most half a second) — everything handed over so far is on the portal or gone from it,
    /// or has failed — and every report that produced has been handed to the center. A program that exits right
    /// after a toast ended calls it (through ``ToastCenter/flush()``) so the notification does not stay behind.
    public func flush() async {
        await shell.flush()
    }

    /// Asks for a reply's text with ``PresenterConfiguration/replyPrompter``, in this process's environment: no
    /// portal backend draws a reply field yet (version 2's `im.reply-with-text` purpose has no implementation).
    public func promptReply(_ prompt: ToastReplyPrompt) async -> ToastReplyPromptResult {
        await configuration.replyPrompter.prompt(prompt, environment: ProcessEnvironment.current)
    }

    // MARK: - Queries

    /// The portal's interface version (read once per portal and cached): 1 for xdg-desktop-portal before 1.20.
    ///
    /// - Throws: ``PresentationError`` when the portal cannot be reached or has no notification interface.
    public func portalVersion() async throws -> UInt32 {
        if let known = shell.read(\.version) { return known }
        do {
            return try await PortalBackend.readVersion(on: shell.link(), timeout: configuration.callTimeout)
        } catch {
            throw shell.backend.failure(error)
        }
    }

    /// The portal id a toast is shown under, if it is on the portal (for tests and tools).
    public func portalID(ofToast id: String) -> String? {
        shell.read { $0.portalID(ofToast: id) }
    }

    /// Treats `portalID` as the notification toast `id` is shown under, so the toast's next content replaces it
    /// (removes it) instead of adding a second one. For tools that remember portal ids across runs.
    public func adopt(portalID: String, forToast id: String) {
        shell.handle(.adopt(portalID: portalID, toastID: id))
    }

    /// Waits until the portal has answered every `AddNotification` sent or queued so far for toast `id`, and returns
    /// the portal id it is shown under.
    ///
    /// - Throws: ``PresentationError`` when the latest add failed (no portal, refused, invalid input) or the
    ///   toast was closed before the portal accepted it.
    public func accepted(_ id: String) async throws -> String {
        try await shell.accepted(id)
    }

    /// What the toast's icon file holds, read here because the machine does no I/O.
    private static func iconFile(of presentation: ToastPresentation) -> PortalIconFile? {
        guard case .file(let path)? = presentation.request.icon?.shown else { return nil }
        return PortalIconFile.read(path)
    }
}

/// What is the portal's own, for the shared shell: `org.freedesktop.portal.Desktop`, its `ActionInvoked`, what the
/// link reads before the first add (the interface's version, the owner, the app's permission), and the calls.
struct PortalBackend: PresenterBackend {
    typealias Machine = PortalPresenterMachine

    let configuration: PresenterConfiguration
    /// This presenter's sounds, one after another.
    let sounds = SoundQueue()
    /// Why the portal is in use, for failure messages ("chosen automatically: /.flatpak-info exists").
    let choice: String?
    /// The app id the portal knows this process by, when it runs in a sandbox.
    let sandboxAppID: String?

    var service: BusName { NotificationPortalClient.busName }
    var serviceRule: MatchRule { NotificationPortalClient.actionInvokedRule }

    var otherRules: [MatchRule] { [] }

    func event(for signal: BusLink.Signal) -> PortalPresenterMachine.Event? {
        switch signal {
        case .ownerChanged(let owner): .ownerChanged(owner)
        case .screenSaverChanged(let active): .screenSaverChanged(active: active)
        case .service(let message): PortalActionInvoked(message).map { .actionInvoked($0, sender: message.sender) }
        }
    }

    func failure(_ error: any Error) -> PresentationError {
        .portal(any: error, timeout: configuration.callTimeout, choice: choice)
    }

    /// The interface's `version` and the portal's owner, both in flight together; then, in a sandbox, whether the
    /// person turned notifications off for the app.
    func ready(_ link: BusLink, generation: UInt64) async -> PortalPresenterMachine.Event {
        let timeout = configuration.callTimeout
        do {
            async let version = Self.readVersion(on: link, timeout: timeout)
            async let owner = link.owner(of: service)
            let (read, reader) = (try await version, try await owner)
            // A version 1 portal answers success and drops the notification when the person turned notifications off
            // for the app (NOTES P28); the permission store says so, where the sandbox lets the app ask it.
            if let appID = sandboxAppID,
                let permission = await Self.notificationPermission(of: appID, on: link, timeout: timeout),
                permission.contains("no")
            {
                let reason =
                    "notifications are turned off for \(appID): the desktop portal's permission store says \"no\" "
                    + "(turn them on in the desktop's settings, or run `flatpak permission-set notifications "
                    + "notification \(appID) yes`)"
                return .linkFailed(generation: generation, PresentationError(.refused, reason: reason))
            }
            return .linkReady(generation: generation, version: read, owner: reader)
        } catch let error as DBusError {
            return .linkFailed(
                generation: generation, .portal(error, timeout: timeout, choice: choice, readingVersion: true))
        } catch {
            return .linkFailed(generation: generation, failure(error))
        }
    }

    /// Reads the `version` property of `org.freedesktop.portal.Notification`.
    static func readVersion(on link: BusLink, timeout: Duration) async throws -> UInt32 {
        let reply = try await link.connection.call(NotificationPortalClient.readVersion, timeout: timeout)
        return try NotificationPortalClient.version(from: reply)
    }

    /// The portal's notification permission for `appID` from the permission store (`yes`, `no`, …), or nil when the
    /// store cannot be asked (inside a real Flatpak its bus proxy hides it) or has no entry.
    private static func notificationPermission(
        of appID: String, on link: BusLink, timeout: Duration
    ) async -> [String]? {
        let lookup = DBusMethodCall(
            destination: "org.freedesktop.impl.portal.PermissionStore",
            path: "/org/freedesktop/impl/portal/PermissionStore",
            interface: "org.freedesktop.impl.portal.PermissionStore", member: "Lookup",
            arguments: [.string("notifications"), .string("notification")])
        guard let reply = try? await link.connection.call(lookup, timeout: timeout),
            let entries = (try? reply.arguments("a{sas}v"))?.first?.dictionaryValue
        else { return nil }
        return entries.first { $0.key.stringValue == appID }?.value.stringsValue
    }

    func carryOut(
        _ action: PortalPresenterMachine.Action, on link: BusLink?,
        answer: @escaping @Sendable (PortalPresenterMachine.Event) -> Void
    ) {
        switch action {
        case .add(let id, let call, let portalID, let notification):
            add(notification, portalID: portalID, on: link) { answer(.addAnswered(id: id, call: call, $0)) }
        case .remove(let portalID):
            // The answer says nothing (the portal does not know whether the id existed); it tells that the call is
            // through, for flush().
            remove(portalID, on: link) { answer(.removeAnswered(portalID: portalID)) }
        case .playSound(let id, let sound):
            sounds.play(sound, with: configuration.soundPlayer, appName: configuration.appName) { reason in
                answer(.soundNotPlayed(id: id, reason: reason))
            }
        case .connect, .report, .resume, .wake:
            break  // the shell's own
        }
    }

    /// Sends `AddNotification`; `answered` gets the portal's answer (the unique name that answered), on the
    /// connection's I/O thread.
    private func add(
        _ notification: PortalNotification, portalID: String, on link: BusLink?,
        answered: @escaping @Sendable (Result<String?, PresentationError>) -> Void
    ) {
        let timeout = configuration.callTimeout
        let choice = self.choice
        BusLink.call(NotificationPortalClient.add(id: portalID, notification), on: link, timeout: timeout) { reply in
            answered(reply.map { $0.sender }.mapError { .portal(any: $0, timeout: timeout, choice: choice) })
        }
    }

    /// Sends `RemoveNotification`; `answered` runs once the portal answered (whatever it answered), or at once when
    /// there is no connection.
    private func remove(_ portalID: String, on link: BusLink?, answered: @escaping @Sendable () -> Void) {
        BusLink.call(NotificationPortalClient.remove(id: portalID), on: link, timeout: configuration.callTimeout) {
            _ in answered()
        }
    }
}
