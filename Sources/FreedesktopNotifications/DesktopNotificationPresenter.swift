import DBus
import Dispatch
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
/// server answers, or within ``PresenterConfiguration/minimumUpdateInterval`` (25 ms) of the last one sent,
/// collapse into the newest, which always goes out. What the server cannot do (no actions, no body, no markup) degrades
/// and is reported as a `degraded` event.
///
/// Server lifecycle: with no server, presenting reports a recoverable failure and the center keeps the toast;
/// when a server appears or is replaced (`NameOwnerChanged`), the center is asked to show its live toasts again
/// with their remaining time. While the screen saver is active, the center's timers are paused.
///
/// The rules live in a plain state machine (`DesktopPresenterMachine`); the shell both presenters share
/// (`PresenterShell`) feeds it one event at a time under one lock and carries out what it returns, with
/// `DesktopBackend` for what is the server's own: its signals, what the link reads, `Notify` and
/// `CloseNotification`.
public final class DesktopNotificationPresenter: ToastPresenter {
    /// The configuration.
    public let configuration: PresenterConfiguration

    private let shell: PresenterShell<DesktopBackend>

    /// A presenter for the desktop's session bus (or the bus in `configuration`); it connects at first use.
    public init(configuration: PresenterConfiguration = PresenterConfiguration()) {
        self.configuration = configuration
        shell = PresenterShell(
            backend: DesktopBackend(configuration: configuration),
            machine: DesktopPresenterMachine(configuration: configuration), clock: ContinuousClock())
    }

    /// A presenter that plays each toast's sound (where the server plays none) in the environment `soundEnvironment`
    /// gives for the toast's id — its sender's, in the agent: its `TOASTKIT_SOUND_PLAYER`, its `PATH`, its sound
    /// theme — or, when it gives none, in this process's.
    package init(
        configuration: PresenterConfiguration,
        soundEnvironment: @escaping @Sendable (_ toastID: String) -> [String: String]?
    ) {
        self.configuration = configuration
        shell = PresenterShell(
            backend: DesktopBackend(configuration: configuration, soundEnvironment: soundEnvironment),
            machine: DesktopPresenterMachine(configuration: configuration), clock: ContinuousClock())
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

    /// ``disconnect()``, returning once the connection is closed: what the presenter sent last is out then (the end
    /// of each job view, which Plasma would otherwise show as a failed job when this process leaves). For a process
    /// about to exit.
    package func disconnectAndWait() async {
        _ = await shell.disconnect()?.waitUntilClosed()
    }

    /// Sends `Notify` for a toast that is not on screen (or queues it behind the one on its way).
    public func show(_ presentation: ToastPresentation) {
        shell.handle(.show(presentation))
    }

    /// Sends `Notify` with `replaces_id` for a toast on screen; updates that come faster than the server answers,
    /// or within ``PresenterConfiguration/minimumUpdateInterval`` of the last one sent, collapse into the
    /// newest, which always goes out.
    public func update(_ presentation: ToastPresentation) {
        shell.handle(.show(presentation))
    }

    /// Sends `CloseNotification` (once the server has answered the toast's `Notify`, if it is on its way).
    public func close(id: String, reason: ToastCloseReason) {
        shell.handle(.close(id: id, expired: reason == .expired))
    }

    /// Replaces the notification in place with the new `expire_timeout`: the remaining time while the timer runs,
    /// 0 (never) while it does not.
    public func timerChanged(id: String, remaining: Duration?, isRunning: Bool) {
        shell.handle(.timer(id: id, remaining: remaining, isRunning: isRunning))
    }

    // MARK: - Queries

    /// What the current server can do (read once per server and cached).
    public func serverCapabilities() async throws -> ServerCapabilities {
        if let known = shell.read(\.capabilities) { return known }
        return try await DesktopBackend.capabilities(on: shell.link(), configuration: configuration)
    }

    /// The server id of a toast on screen, if it has one (for tests and tools).
    public func serverID(ofToast id: String) -> UInt32? {
        shell.read { $0.serverID(ofToast: id) }
    }

    /// Treats `serverID` as the server's notification for toast `id`, so the toast's next `Notify` replaces it
    /// (`replaces_id`) instead of adding another. For tools that remember server ids across runs; a stale id is
    /// harmless (the server then shows a new notification).
    ///
    /// - Parameters:
    ///   - serverID: The server's id of the notification.
    ///   - id: The toast's id.
    ///   - onScreen: The notification already shows what the toast's first presentation will be (another process
    ///     of the app sent it, and this one takes it over): that presentation is not sent again — except to a server
    ///     that sends its signals only to the connection that called `Notify` (dunst), which is told once more, in
    ///     place, so that this presenter hears what becomes of it.
    ///   - soundPlayed: The toast's sound, if it has one, has played already (the process that showed the
    ///     notification played it; implied by `onScreen`): its first presentation here plays none.
    ///   - server: The unique bus name of the server that gave `serverID` (``serverOwner``,
    ///     ``BlockingNotificationSender/server``): the id is used only while that server owns the name, since after a
    ///     restart of the server it may be another application's notification. Nil: not known, the id is used.
    public func adopt(
        serverID: UInt32, forToast id: String, onScreen: Bool = false, soundPlayed: Bool = false,
        server: String? = nil
    ) {
        shell.handle(
            .adopt(serverID: serverID, toastID: id, onScreen: onScreen, soundPlayed: soundPlayed, server: server))
    }

    /// The unique bus name of the server that owns `org.freedesktop.Notifications`, as the presenter last read it
    /// (nil before its link is made, or with no server): the server whose ids ``serverID(ofToast:)`` gives.
    public var serverOwner: String? {
        shell.read { $0.owner }
    }

    /// The notification toast `id`'s latest content will replace, when that content is an update in place that
    /// waits for the toast's update interval (``PresenterConfiguration/minimumUpdateInterval``) after a `Notify` the
    /// server answered; nil otherwise (nothing waits, or a call is on its way). A service that
    /// answers its caller with the toast's server id need not wait for such an update (it goes out when its time
    /// comes, the latest content winning): ``accepted(_:)`` would wait up to the interval.
    public func waitingUpdate(ofToast id: String) -> UInt32? {
        shell.read { $0.waitingUpdate(ofToast: id) }
    }

    /// Waits until the server has answered every `Notify` sent or queued so far for toast `id`, and returns its
    /// server id.
    ///
    /// - Throws: ``PresentationError`` when the latest `Notify` failed (no server, refused, invalid input)
    ///   or the toast was closed before the server accepted it.
    public func accepted(_ id: String) async throws -> UInt32 {
        try await shell.accepted(id)
    }

    /// Returns once every sound this presenter asked to play for toast `id` (where the server plays none) has played,
    /// or failed and its failure has been reported (a `degraded` report), or once `limit` has passed, whichever comes
    /// first: the agent answers `Present` then, with the failure among the toast's warnings. Returns at once when no
    /// sound of the toast is under way.
    package func soundsPlayed(_ id: String, within limit: Duration) async {
        // Most toasts have no sound: no race with a timer for them (a task and a sleep on every `Present`).
        guard shell.read({ $0.sounds.isUnderWay(id) }) else { return }
        let shell = shell
        await FirstOf.wait(
            for: {
                _ = try? await shell.wait { .awaitSoundsPlayed(id: id, waiter: $0) }
                await shell.reportsDelivered()
            }, orAfter: limit)
    }

    /// Returns once every call to the server is answered and no toast waits for the connection — everything shown
    /// so far is on the server, or has failed — and every report that produced has been handed to the center.
    public func flush() async {
        await shell.flush()
    }

    /// Returns once every report made so far (failures, degradations, actions, closes) has been handed to the
    /// center, without waiting for calls in flight: a service that has just seen a toast accepted uses it to know
    /// that what the server's answer set off has reached the center.
    public func reportsDelivered() async {
        await shell.reportsDelivered()
    }

    /// Whether it follows and reports Do Not Disturb (``PresenterConfiguration/followsDoNotDisturb``).
    public var reportsDoNotDisturb: Bool { configuration.followsDoNotDisturb }

    /// Asks for a reply's text with ``PresenterConfiguration/replyPrompter``, in this process's environment: the
    /// server drew the reply action as a button (only Plasma draws a field, answered without a prompt).
    public func promptReply(_ prompt: ToastReplyPrompt) async -> ToastReplyPromptResult {
        await configuration.replyPrompter.prompt(prompt, environment: ProcessEnvironment.current)
    }
}

/// What is the notification server's own, for the shared shell: `org.freedesktop.Notifications`, its signals, what
/// the link reads before the first `Notify` (capabilities, information, owner), and the calls.
struct DesktopBackend: PresenterBackend {
    typealias Machine = DesktopPresenterMachine

    let configuration: PresenterConfiguration
    /// The environment to play a toast's sound in, by its id (nil, or nil for the id: this process's).
    var soundEnvironment: (@Sendable (String) -> [String: String]?)? = nil
    /// This presenter's sounds, one after another.
    let sounds = SoundQueue()

    var service: BusName { NotificationsClient.busName }

    var serviceRule: MatchRule {
        MatchRule(
            sender: NotificationsClient.busName, interface: NotificationsClient.interface,
            path: NotificationsClient.path)
    }

    var otherRules: [MatchRule] { configuration.followsDoNotDisturb ? DoNotDisturbQuery.changeRules : [] }

    func event(for signal: BusLink.Signal) -> DesktopPresenterMachine.Event? {
        switch signal {
        case .ownerChanged(let owner): return .ownerChanged(owner)
        case .screenSaverChanged(let active): return .screenSaverChanged(active: active)
        case .service(let message):
            if let signal = NotificationSignal(message) { return .signal(signal, sender: message.sender) }
            return DoNotDisturbQuery.isChange(message) ? .doNotDisturbMayHaveChanged : nil
        }
    }

    func failure(_ error: any Error) -> PresentationError {
        PresentationError(any: error, timeout: configuration.callTimeout)
    }

    /// What the server can do and who it is: `GetCapabilities`, `GetServerInformation` and (when listening)
    /// `GetNameOwner`, all in flight together; then, when followed, its Do Not Disturb state.
    func ready(_ link: BusLink, generation: UInt64) async -> DesktopPresenterMachine.Event {
        do {
            async let capabilities = Self.capabilities(on: link, configuration: configuration)
            async let owner = link.owner(of: service)
            let read = try await capabilities
            var doNotDisturb: ToastDoNotDisturb?
            if configuration.followsDoNotDisturb {
                doNotDisturb = await readDoNotDisturb(of: read.information, on: link)
            }
            return .linkReady(
                generation: generation, capabilities: read, owner: try await owner, doNotDisturb: doNotDisturb)
        } catch {
            return .linkFailed(generation: generation, failure(error))
        }
    }

    /// What the server can do (``readCapabilities(on:timeout:)``), and on Plasma whether its job service is there to
    /// draw progress (when the configuration lets it: ``PresenterConfiguration/drawsProgressAsJobs``).
    static func capabilities(on link: BusLink, configuration: PresenterConfiguration) async throws -> ServerCapabilities
    {
        var read = try await readCapabilities(on: link.connection, timeout: configuration.callTimeout)
        if configuration.drawsProgressAsJobs, read.information?.name == "Plasma" {
            // plasmashell runs both services; only the job service draws a bar.
            read.drawsJobViews = (try? await link.connection.bus.nameOwner(of: JobViews.busName)) != nil
        }
        return read
    }

    /// The Do Not Disturb state of the server `information` names, read on `link` or, for GNOME, MATE and LXQt, in
    /// the user's settings (``DoNotDisturbSettings``): off when it has none.
    private func readDoNotDisturb(of information: ServerInformation?, on link: BusLink) async -> ToastDoNotDisturb {
        await withCheckedContinuation { continuation in
            readDoNotDisturb(of: information, on: link) { continuation.resume(returning: $0) }
        }
    }

    /// As above, with the answer on the connection's I/O thread.
    private func readDoNotDisturb(
        of information: ServerInformation?, on link: BusLink?,
        answered: @escaping @Sendable (ToastDoNotDisturb) -> Void
    ) {
        guard let information, let query = DoNotDisturbQuery.forServer(information) else {
            let name = information?.name ?? "the server"
            let none = ToastDoNotDisturb(isOn: false, source: "\(name) has no Do Not Disturb to read")
            guard let information else { return answered(none) }
            // GNOME, MATE and LXQt keep it in the user's settings: read off the I/O thread (a `gsettings` run).
            let environment = configuration.settingsEnvironment
            return DispatchQueue.global(qos: .userInitiated).async {
                let reading = DoNotDisturbSettings.reading(
                    for: information, environment: environment ?? ProcessEnvironment.current)
                answered(reading?.toastDoNotDisturb ?? none)
            }
        }
        BusLink.call(query.call, on: link, timeout: configuration.callTimeout) { reply in
            let reading = query.reading(
                from: reply.mapError { $0 as? DBusError ?? DBusError(name: .failed, message: "\($0)") })
            answered(reading.toastDoNotDisturb)
        }
    }

    /// `GetCapabilities` and `GetServerInformation` (the information is optional: some servers fail it).
    ///
    /// A server that has just taken the name may not serve its object yet: GNOME Shell 43's notifications proxy owns
    /// `org.freedesktop.Notifications` a moment before it exports `/org/freedesktop/Notifications`, and answers
    /// `UnknownMethod` meanwhile. That is "not ready", not a refusal: asked again every 50 ms, within `timeout`.
    static func readCapabilities(on connection: DBusConnection, timeout: Duration) async throws -> ServerCapabilities {
        let client = NotificationsClient(connection: connection, timeout: timeout)
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                async let names = client.capabilities()
                async let information = try? client.serverInformation()
                return ServerCapabilities(try await names, information: await information)
            } catch let error as DBusError
                where notReady.contains(error.name) && ContinuousClock.now + .milliseconds(50) < deadline
            {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// What a server answers for an object it does not serve yet.
    private static let notReady: Set<DBusError.Name> = [.unknownMethod, .unknownObject]

    func carryOut(
        _ action: DesktopPresenterMachine.Action, on link: BusLink?,
        answer: @escaping @Sendable (DesktopPresenterMachine.Event) -> Void
    ) {
        switch action {
        case .notify(let id, let call, let arguments):
            send(arguments, on: link) { answer(.notifyAnswered(id: id, call: call, $0)) }
        case .close(let id, let call, let serverID):
            close(serverID, on: link) { answer(.closeAnswered(id: id, call: call)) }
        case .discard(let serverID):
            close(serverID, on: link) {}
        case .requestJobView(let id, let call, let request):
            let timeout = configuration.callTimeout
            BusLink.call(request, on: link, timeout: timeout) { reply in
                answer(
                    .jobViewAnswered(
                        id: id, call: call,
                        reply.flatMap { message in Result { try JobViews.path(from: message) } }
                            .mapError { PresentationError(any: $0, timeout: timeout) }))
            }
        case .updateJobView(let path, let arguments):
            sendToJobView(path, "update", arguments, on: link)
        case .endJobView(let path):
            sendToJobView(path, "terminate", JobViews.terminate, on: link)
        case .readDoNotDisturb(let generation, let information):
            readDoNotDisturb(of: information, on: link) { answer(.doNotDisturbRead(generation: generation, $0)) }
        case .playSound(let id, let sound):
            sounds.play(
                sound, with: configuration.soundPlayer, appName: configuration.appName,
                environment: soundEnvironment?(id), played: { answer(.soundPlayed(id: id)) },
                failed: { reason in answer(.soundNotPlayed(id: id, reason: reason)) })
        case .connect, .resume, .report, .wake:
            break  // the shell's own
        }
    }

    /// Sends `Notify`; `answered` gets the server's answer, on the connection's I/O thread.
    private func send(
        _ arguments: NotifyCall, on link: BusLink?,
        answered: @escaping @Sendable (Result<DesktopPresenterMachine.NotifyReply, PresentationError>) -> Void
    ) {
        let timeout = configuration.callTimeout
        BusLink.call(NotificationsClient.call("Notify", arguments.arguments), on: link, timeout: timeout) { reply in
            answered(
                reply.flatMap { message in Result { try NotificationsClient.notifyResult(message) } }
                    .map { DesktopPresenterMachine.NotifyReply(serverID: $0.id, sender: $0.server) }
                    .mapError { PresentationError(any: $0, timeout: timeout) })
        }
    }

    /// Calls `member` of the job view at `path` without asking for an answer (Plasma declares its view's methods
    /// no-reply); nothing goes out without a link, or for a path that is not one.
    private func sendToJobView(_ path: String, _ member: MemberName, _ arguments: [DBusValue], on link: BusLink?) {
        guard let link, let objectPath = try? ObjectPath(validating: path) else { return }
        try? link.connection.send(
            destination: JobViews.busName, path: objectPath, interface: JobViews.viewInterface, member: member,
            arguments: arguments)
    }

    /// Sends `CloseNotification`; `answered` runs once the server answered (whatever it answered), or at once
    /// when there is no connection to send it on.
    private func close(_ serverID: UInt32, on link: BusLink?, answered: @escaping @Sendable () -> Void) {
        BusLink.call(
            NotificationsClient.call("CloseNotification", [.uint32(serverID)]), on: link,
            timeout: configuration.callTimeout
        ) { _ in answered() }
    }
}
