import DBus
import FoundationEssentials
import Glibc
import ToastKit
import ToastKitAgent

/// `toastkit send`: builds the toast, shows it through a center on the desktop presenter, and either returns once
/// the server accepted it or waits for its end.
struct SendCommand {
    let options: SendOptions
    let environment: CommandEnvironment

    /// The presenter's configuration: the app name and icon from the options, the message limit of the input.
    var configuration: PresenterConfiguration {
        var configuration = PresenterConfiguration(
            appName: options.appName ?? options.dialect.programName,
            appIcon: options.appIcon.flatMap { $0.isEmpty ? nil : $0 },
            callTimeout: .seconds(10))
        configuration.maximumMessageLength = MessageInput.limit
        // notify-send and dunstify send whatever Do Not Disturb says, and say nothing of it: nothing to read.
        configuration.followsDoNotDisturb = options.dialect == .toastkit
        // This process leaves once its toast is shown (or ends): a job view would end with it, as a failed job.
        configuration.drawsProgressAsJobs = false
        return configuration
    }

    /// Without `--wait`: hands the toast to the server and returns once it accepted it, on this thread — no
    /// center, no I/O thread, no tasks; two bus round trips in all (see ``BlockingNotificationSender``). The
    /// request is the one the center would make: the same model snapshot, the same style.
    ///
    /// A toast GNOME 46+ would close as this process exits (``GNOMEAppTie``) goes through the agent instead when
    /// only its server-kept time kept it from the agent (`agentTried` false); else it is shown with a warning.
    func runWithoutWaiting(agentTried: Bool = false) throws(CommandFailure) -> ExitCode {
        let message = try makeMessage()
        let presentation = try Self.presentation(
            for: message, style: CommandLineStyle(options: options), labels: options.labels)
        let sender: BlockingNotificationSender
        do {
            sender = try BlockingNotificationSender(configuration: configuration)
        } catch {
            throw BusAccess.failure(error)
        }
        // The server first: only GNOME 46+ costs a look for the app's .desktop file.
        if GNOMEAppTie.closesOnExit(sender.capabilities),
            let app = GNOMEAppTie.app(of: options, environment: environment)
        {
            let bypass = AgentClient.bypassReason(options, environment: environment, serverTimed: false)
            if !agentTried, bypass == nil {
                return try runWithoutWaitingPreferringAgent(keepingAppTied: true)
            }
            Output.error(
                "warning: "
                    + GNOMEAppTie.warning(app: app, sender.capabilities, reason: bypass ?? "it could not be reached"))
        }
        var quiet = false
        if configuration.followsDoNotDisturb {
            let state = sender.doNotDisturb()
            quiet = state.isOn
            if state.isOn {
                // No process stays to hold it (the agent is not used): dropped, or handed to the server, whose
                // own Do Not Disturb then decides.
                let kind: ToastSuppression.Kind = message.doNotDisturb == .drop ? .dropped : .sentAnyway
                tell(
                    ToastSuppression(kind: kind, state: state), id: message.id
                )
                if kind == .dropped { return .suppressed }
            }
        }
        func show(replacing serverID: UInt32) throws(CommandFailure) -> UInt32 {
            do {
                let shown = try sender.show(presentation, replacing: serverID, playsSound: !quiet)
                Self.tell(
                    shown, presentation: presentation, configuration: configuration, id: message.id,
                    json: options.json)
                return shown.serverID
            } catch {
                throw BusAccess.failure(error)
            }
        }
        let serverID: UInt32
        if let key = options.id {
            // The lock is held from reading the remembered id to writing the new one: parallel runs with the same
            // id replace one another in turn.
            let session = openIDSession(for: key)
            // A remembered id is only good on the server that gave it.
            let remembered = session?.ids[key].flatMap { $0.server == sender.server ? $0.serverID : nil }
            do {
                serverID = try show(replacing: options.replaceID ?? remembered ?? 0)
            } catch {
                session?.close()
                throw error
            }
            if let session {
                session.record(key, serverID: serverID, server: sender.server)
                do {
                    try session.save(currentServer: sender.server)
                } catch {
                    // The toast is shown; only the replacing of the next run is lost.
                    Self.cannotRemember(key, error.description)
                }
            }
        } else {
            serverID = try show(replacing: options.replaceID ?? 0)
        }
        announce(id: message.id, serverID: serverID)
        return .success
    }

    /// Prints what the server could not show as asked, and plays the toast's sound where the server plays none (the
    /// process waits for it before it exits, and a sound that cannot be played is a warning): each a ``warn(_:id:json:)``
    /// of toast `id`.
    static func tell(
        _ shown: BlockingNotificationSender.Shown, presentation: ToastPresentation,
        configuration: PresenterConfiguration, id: String, json: Bool
    ) {
        for reason in shown.degradations { warn(reason, id: id, json: json) }
        guard let sound = shown.localSound else { return }
        configuration.soundPlayer.playInBackground(
            sound, appName: presentation.request.appName ?? configuration.appName
        ) { reason in warn(reason, id: id, json: json) }
    }

    /// Says what went wrong on the way for toast `id` — a feature the server lacks, a sound that could not be played —
    /// the same on every path (directly, through the agent, through the portal): a `warning:` line on standard error
    /// and, with `--json`, a `warning` event with the `reason`.
    static func warn(_ reason: String, id: String, json: Bool) {
        Output.error("warning: \(reason)")
        if json { Output.json(["event": .string("warning"), "id": .string(id), "reason": .string(reason)]) }
    }

    /// What the center hands its presenter for `message` when it shows it: a fresh stack's snapshot (the front
    /// toast, its timer running) and the request `style` makes from it.
    static func presentation(for message: ToastMessage, style: some ToastStyle, labels: ToastLabels)
        throws(CommandFailure)
        -> ToastPresentation
    {
        var stack = ToastStack(configuration: ToastStack.Configuration(labels: labels))
        _ = stack.attachPresenter(now: .zero)
        for output in stack.present(message, now: .zero) {
            if case .show(let toast) = output {
                return ToastPresentation(toast: toast, request: style.makeRequest(for: toast))
            }
        }
        throw CommandFailure(.software, "internal error: the model did not show toast \"\(message.id)\"")
    }

    /// With `--wait`: shows the toast through a center on the desktop presenter and waits for its end
    /// (``Waiter``: every wait has an end). Through the notification portal (`--backend portal`, or in a sandbox)
    /// with or without `--wait`: see ``runThroughPortal()``.
    func run() async throws(CommandFailure) -> ExitCode {
        if environment.backendChoice.backend == .portal {
            if !options.onAction.isEmpty {
                throw .unavailable("--on-action needs the toast agent, which is not used with the notification portal")
            }
            return try await runThroughPortal()
        }
        if let code = try await runThroughAgent() { return code }
        return try await runDirectly()
    }

    /// `send --wait` on the direct path: this process's own center, waiting for the toast's end.
    func runDirectly() async throws(CommandFailure) -> ExitCode {
        let message = try makeMessage()
        let id = message.id
        let desktop = DesktopNotificationPresenter(configuration: configuration)
        if let replaceID = options.replaceID { desktop.adopt(serverID: replaceID, forToast: id) }
        // --id: who the server is (the bus answers that, never the server) and the id store's lock, before
        // anything waits on the server — until the signal watcher starts below, Ctrl-C ends the process at once.
        var remembering: (key: String, session: IDStore.Session, owner: String)?
        if let key = options.id {
            let owner = try BusAccess.notificationServerOwner()
            if let session = openIDSession(for: key) {
                remembering = (key, session, owner)
                if options.replaceID == nil, let entry = session.ids[key], entry.server == owner {
                    desktop.adopt(serverID: entry.serverID, forToast: id)
                }
            }
        }
        let presenter = ObservingPresenter(desktop)
        // The center stores a Later toast before it reports `.deferred`, so exiting on that event loses nothing.
        let laterStore = CommandLineLater.store(environment: environment.variables)
        let center = ToastCenter(
            defaultDuration: .standardDefault, maxVisible: 1, presenter: presenter, laterStore: laterStore,
            labels: options.labels)
        center.toastStyle(CommandLineStyle(options: options))
        let json = options.json
        center.onEvent = { event in
            if case .degraded(_, let reason) = event { Self.warn(reason, id: id, json: json) }
        }
        let events = center.events()
        let signals = SignalWatcher()

        center.present(message)
        let acceptance = { @Sendable () async -> Result<ServiceID, PresentationError> in
            do {
                return .success(.server(try await desktop.accepted(id)))
            } catch let error as PresentationError {
                return .failure(error)
            } catch {
                return .failure(PresentationError(.refused, reason: "\(error)"))
            }
        }
        // The id store's lock, held from reading the remembered id until the new one is written; let go of while Do
        // Not Disturb holds the toast (other sends with --id must not wait for hours), taken again when it is shown.
        var lockedSession = remembering?.session
        var waiter = Waiter(
            id: id, json: options.json, center: center, presenter: presenter,
            duration: try? message.duration.resolved(default: .standardDefault),
            confirmingActions: Set(
                (options.actions + [options.tap].compactMap { $0 }).filter { $0.confirmation != nil }.map(\.id)),
            onAccepted: { accepted in
                guard case .server(let serverID) = accepted else { return }
                if let remembering, let session = lockedSession ?? openIDSession(for: remembering.key) {
                    lockedSession = nil
                    session.record(remembering.key, serverID: serverID, server: remembering.owner)
                    do {
                        try session.save(currentServer: remembering.owner)
                    } catch {
                        Self.cannotRemember(remembering.key, "\(error)")
                    }
                }
                announce(id: id, serverID: serverID)
            })
        waiter.onHeld = {
            lockedSession?.close()
            lockedSession = nil
        }
        let ending = await waiter.wait(events: events, signals: signals.signals, acceptance: acceptance)
        if let remembering {
            // Never accepted: the lock is still held, nothing to write. Accepted: the toast is gone now, and so is
            // what its id means.
            remembering.session.close()
            if let serverID = ending.serviceID?.serverID { forget(remembering.key, serverID: serverID) }
        }
        return ending.code
    }

    /// Removes `key` from the id store if it still stands for `serverID` (its toast has ended).
    private func forget(_ key: String, serverID: UInt32) {
        do {
            let session = try IDStore.open(environment: environment.variables).lock()
            guard session.ids[key]?.serverID == serverID else {
                session.close()
                return
            }
            session.ids[key] = nil
            try session.save(currentServer: nil)
        } catch {
            Output.error("warning: cannot forget --id \(key): \(error)")
        }
    }

    /// Prints how Do Not Disturb held back toast `id` when `send` does not wait: the `suppressed` JSON event with
    /// `--json`, and the note on standard error.
    func tell(_ suppression: ToastSuppression, id: String) {
        guard !options.quietAboutDoNotDisturb else { return }
        Waiter.tell(suppression) { event, fields in
            guard options.json else { return }
            // The same keys as the waiting path's event: the server's id is not known yet (`presented` says it).
            var object: JSONObject = ["event": .string(event), "id": .string(id), "server_id": .null]
            for (key, value) in fields { object[key] = value }
            Output.json(object)
        }
    }

    /// Prints what `--json` or `-p` ask for once the server accepted the toast.
    func announce(id: String, serverID: UInt32) {
        announce(id: id, .server(serverID))
    }

    /// Prints what `--json` or `-p` ask for once the server (or the portal) accepted the toast.
    func announce(id: String, _ accepted: ServiceID) {
        if options.json {
            let key = if case .portal = accepted { "portal_id" } else { "server_id" }
            Output.json(["event": .string("presented"), "id": .string(id), key: accepted.json])
        } else if options.printID {
            Output.line(accepted.text)
        }
    }

    /// The id store for `--id`, locked and read, or nil (with a warning) when it cannot be used: the toast is then
    /// shown without replacing an earlier one.
    private func openIDSession(for key: String) -> IDStore.Session? {
        do {
            return try IDStore.open(environment: environment.variables).lock()
        } catch let failure as CommandFailure {
            Self.cannotRemember(key, failure.message)
        } catch {
            Self.cannotRemember(key, "\(error)")
        }
        return nil
    }

    /// The warning for an id store that could not be used: the toast itself is not affected.
    static func cannotRemember(_ key: String, _ reason: String) {
        Output.error("warning: cannot remember --id \(key): \(reason); the next send --id \(key) shows a new toast")
    }

    // MARK: - The message

    func makeMessage() throws(CommandFailure) -> ToastMessage {
        try Self.message(for: options, text: try messageText())
    }

    /// The message's text: the argument, or standard input for `-`; cut at the limit with a warning.
    func messageText() throws(CommandFailure) -> String? {
        var text: String?
        switch options.message {
        case .standardInput?:
            let input = try MessageInput.readStandardInput()
            if let warning = input.warning { Output.error(warning) }
            text = input.text
        case .text(let value)?:
            let input = MessageInput.limited(value)
            if let warning = input.warning { Output.error(warning) }
            text = input.text
        case nil:
            text = nil
        }
        return text?.isEmpty == true ? nil : text
    }

    /// The toast for `options` with message `text`, checked: the tool and the agent build it the same way
    /// (``ToastOptions/message(for:text:)``).
    static func message(for options: SendOptions, text: String?) throws(CommandFailure) -> ToastMessage {
        do {
            return try ToastOptions.message(for: options, text: text)
        } catch {
            throw .data(error.message)
        }
    }

    /// A model validation error in the command line's words.
    static func describe(_ error: ToastValidationError) -> String {
        ToastOptions.describe(error)
    }
}

extension SendOptions {
    /// The options as this process sends them: with libnotify's `sender-pid` hint (this process's id, unless `-h`
    /// gives one), and the icon's warning printed once — a file that cannot be shown costs the icon, never the
    /// toast.
    func sent() throws(CommandFailure) -> SendOptions {
        var options = self
        for warning in options.warnings { Output.error("warning: \(warning)") }
        options.warnings = []
        if !options.hints.contains(where: { $0.name == "sender-pid" }) {
            options.hints.append(Hint(name: "sender-pid", value: .int64(Int64(getpid()))))
        }
        let icon = ToastOptions.resolvedIcon(options.icon)
        if let warning = icon.warning { Output.error("warning: \(warning)") }
        options.icon = icon.option
        if let raw = options.rawIcon {
            // dunstify -I reads the image itself and fails without it; toastkit hands the server the file.
            let path = raw.hasPrefix("/") ? raw : FileManager.default.currentDirectoryPath + "/" + raw
            guard ToastOptions.icon(.path(path)) != nil else {
                throw .data("Unable to get raw icon: \(raw) cannot be read as an image file")
            }
            options.rawIcon = nil
            if !options.hints.contains(where: { $0.name == "image-path" }) {
                options.hints.append(
                    Hint(name: "image-path", value: .string(URL(fileURLWithPath: path).absoluteString)))
            }
        }
        return options
    }
}

extension SendCommand {
    /// `send` without `--wait`, for a command that runs on its own thread (`run`, `progress`): on this thread for the
    /// notification server, the agent and the terminal, as `send` does; through the portal, on tasks this thread
    /// waits for.
    static func runHere(_ options: SendOptions, environment: CommandEnvironment) throws(CommandFailure) -> ExitCode {
        if let code = try ToastKitCommand.executeWithoutTasks(.send(options), environment: environment) { return code }
        return try waitForTasks { () async throws(CommandFailure) in
            try await ToastKitCommand.execute(.send(options), environment: environment)
        }
    }
}
