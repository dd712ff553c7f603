import ToastKit
import ToastKitAgent

extension SendCommand {
    /// `toastkit send` through the notification portal (`--backend portal`, or in a Flatpak or Snap sandbox).
    ///
    /// With `--wait` (or actions) it stays as through the notification server: the center removes the toast on time,
    /// actions come back, the outcome is the exit code; the portal reports no dismissal, so a toast the person closes
    /// ends when its time is up (`expired`). Without `--wait` it returns once the portal accepted the toast; the portal
    /// has no timeout, so the notification then lasts as long as the server's own default, whatever `-d`/`-t` say
    /// (a warning says so). `--id` replaces a toast of the same run only.
    func runThroughPortal() async throws(CommandFailure) -> ExitCode {
        let message = try makeMessage()
        let id = message.id
        var configuration = self.configuration
        configuration.backend = environment.backend
        let portal = PortalNotificationPresenter(configuration: configuration)
        let presenter = ObservingPresenter(portal)
        if options.id != nil || options.replaceID != nil {
            Output.error(
                "warning: --id and -r/--replace-id do not replace a toast of an earlier run through the notification "
                    + "portal; a new one is shown")
        }
        if !options.waits, options.duration != nil {
            Output.error(
                "warning: the notification portal has no timeout: without --wait the toast stays as long as the "
                    + "notification server keeps it, not the time given with -d/-t")
        }
        let laterStore = CommandLineLater.store(environment: environment.variables)
        let center = ToastCenter(
            defaultDuration: .standardDefault, maxVisible: 1, presenter: presenter, laterStore: laterStore,
            labels: options.labels)
        center.toastStyle(CommandLineStyle(options: options))
        let json = options.json
        center.onEvent = { event in
            switch event {
            case .degraded(_, let reason): Self.warn(reason, id: id, json: json)
            case .laterStoreProblem(let problem): Output.error("warning: \(problem)")
            default: break
            }
        }
        let events = center.events()
        let signals = SignalWatcher()
        center.present(message)
        guard options.waits else {
            try await announceWhenAccepted(id, portal: portal, center: center)
            return .success
        }
        let acceptance = { @Sendable () async -> Result<ServiceID, PresentationError> in
            do {
                return .success(.portal(try await portal.accepted(id)))
            } catch let error as PresentationError {
                return .failure(error)
            } catch {
                return .failure(PresentationError(.refused, reason: "\(error)"))
            }
        }
        var waiter = Waiter(
            id: id, json: options.json, center: center, presenter: presenter,
            duration: try? message.duration.resolved(default: .standardDefault),
            confirmingActions: Set(
                (options.actions + [options.tap].compactMap { $0 }).filter { $0.confirmation != nil }.map(\.id)),
            onAccepted: { accepted in announce(id: id, accepted) })
        waiter.throughPortal = true
        return await waiter.wait(events: events, signals: signals.signals, acceptance: acceptance).code
    }

    /// Without `--wait`: waits until the portal accepted toast `id` and prints what `-p` or `--json` ask for, then
    /// until the center's reports (a degraded icon) reached the output and the portal removed what it replaced.
    func announceWhenAccepted(_ id: String, portal: PortalNotificationPresenter, center: ToastCenter)
        async throws(CommandFailure)
    {
        do {
            announce(id: id, .portal(try await portal.accepted(id)))
        } catch let error as PresentationError {
            throw BusAccess.failure(error)
        } catch {
            throw CommandFailure(.software, "internal error: \(error)")
        }
        await center.flush()
    }
}
