import DBus
import FoundationEssentials
import Glibc
import ToastKit

/// `toastkit send`: builds the toast, shows it through a center on the desktop presenter, and either returns once
/// the server accepted it or waits for its end.
struct SendCommand {
    let options: SendOptions
    let environment: [String: String]

    func run() async throws(CommandFailure) -> ExitCode {
        let message = try makeMessage()
        let id = message.id
        var configuration = DesktopPresenterConfiguration(
            appName: options.appName ?? "toastkit", appIcon: options.appIcon.flatMap { $0.isEmpty ? nil : $0 },
            callTimeout: .seconds(10))
        configuration.maximumMessageLength = MessageInput.limit
        // Without --wait nothing is listened for: the toast is handed over and the command ends.
        configuration.listensForSignals = options.waits
        configuration.pausesWhileScreenLocked = options.waits
        let desktop = DesktopNotificationPresenter(configuration: configuration)
        let presenter = ObservingPresenter(desktop)
        // The center stores a Later toast before it reports `.deferred`, so exiting on that event loses nothing.
        let laterStore = FileLaterStore.standard(environment: environment)
        let center = ToastCenter(
            defaultDuration: .standardDefault, maxVisible: 1, presenter: presenter, laterStore: laterStore)
        center.toastStyle(CommandLineStyle(options: options))
        center.onEvent = { event in
            switch event {
            case .degraded(_, let reason): Output.error("warning: \(reason)")
            case .laterStoreProblem(let problem): Output.error("warning: \(problem)")
            default: break
            }
        }
        let events = center.events()
        let signals = options.waits ? SignalWatcher() : nil

        let serverID = try await present(message, center: center, desktop: desktop)
        if options.json {
            Output.json(["event": .string("presented"), "id": .string(id), "server_id": .integer(Int64(serverID))])
        } else if options.printID {
            Output.line(String(serverID))
        }
        guard let signals else { return .success }
        let waiter = Waiter(
            id: id, serverID: serverID, json: options.json, center: center, presenter: presenter,
            confirmingActions: Set(
                (options.actions + [options.tap].compactMap { $0 }).filter { $0.confirmation != nil }.map(\.id)))
        return await waiter.wait(events: events, signals: signals.signals)
    }

    // MARK: - Presenting

    /// Presents the toast (replacing the one remembered for `--id` or given with `-r`) and returns its server id
    /// once the server accepted it.
    private func present(
        _ message: ToastMessage, center: ToastCenter, desktop: DesktopNotificationPresenter
    ) async throws(CommandFailure) -> UInt32 {
        let id = message.id
        if let replaceID = options.replaceID { desktop.adopt(serverID: replaceID, forToast: id) }
        guard options.id != nil else { return try await accept(message, center: center, desktop: desktop) }
        let store: IDStore
        do {
            store = try IDStore.open(environment: environment)
        } catch {
            Output.error("warning: \(error.message); the toast will not replace earlier runs")
            return try await accept(message, center: center, desktop: desktop)
        }
        // The server's unique name tells a remembered id from one of a server that has since restarted.
        let owner = try await BusAccess.withClient { client in
            try await client.connection.nameOwner(of: NotificationsClient.busName)
        }
        guard let owner else { throw .unavailable(BusAccess.noServer) }
        do {
            return try await store.withLockedIDs { ids in
                if options.replaceID == nil, let entry = ids[id], entry.server == owner {
                    desktop.adopt(serverID: entry.serverID, forToast: id)
                }
                let serverID = try await accept(message, center: center, desktop: desktop)
                ids[id] = IDStore.Entry(serverID: serverID, server: owner)
                return serverID
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure(.software, "cannot update \(store.fileURL.path): \(error)")
        }
    }

    private func accept(
        _ message: ToastMessage, center: ToastCenter, desktop: DesktopNotificationPresenter
    ) async throws(CommandFailure) -> UInt32 {
        center.present(message)
        do {
            return try await desktop.accepted(message.id)
        } catch let error as DesktopPresentationError {
            throw BusAccess.failure(error)
        } catch {
            throw CommandFailure(.software, "internal error: \(error)")
        }
    }

    // MARK: - The message

    func makeMessage() throws(CommandFailure) -> ToastMessage {
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
        if text?.isEmpty == true { text = nil }
        var swipe = ToastSwipeActions()
        if let first = options.actions.first { swipe.leading = Self.action(first) }
        if options.actions.count > 1 { swipe.trailing = Self.action(options.actions[1]) }
        let message = ToastMessage(
            id: options.id ?? "toastkit-\(UUID().uuidString.lowercased())",
            status: options.status,
            title: options.title,
            message: text,
            icon: try icon(),
            duration: options.duration?.toastDuration ?? .automatic,
            tapAction: options.tap.map { Self.action($0, tap: true) },
            swipeActions: options.actions.isEmpty ? nil : swipe)
        do {
            try message.validate()
        } catch {
            throw .data(Self.describe(error))
        }
        return message
    }

    /// The model's action for an option: the built-ins `later` and `dismiss`, or an action with its label
    /// (`--tap ID` without a label shows the built-in "Open").
    static func action(_ option: ActionOption, tap: Bool = false) -> ToastAction {
        var action: ToastAction
        switch option.id {
        case "later": action = .later
        case "dismiss": action = .dismiss
        default:
            action = ToastAction(id: option.id, title: option.label ?? "")
            if option.label == nil, tap { action.builtInLabel = .open }
        }
        if let label = option.label, action.builtInLabel != nil {
            action.title = label
            action.builtInLabel = nil
        }
        action.confirmation = option.confirmation
        return action
    }

    private func icon() throws(CommandFailure) -> ToastIcon? {
        switch options.icon {
        case nil: return nil
        case .name(let name)?: return .system(name)
        case .path(let path)?:
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            var info = stat()
            guard stat(absolute, &info) == 0 else {
                throw .data("-i/--icon \(path): \(String(cString: strerror(errno)).lowercased())")
            }
            guard info.st_mode & S_IFMT == S_IFREG else { throw .data("-i/--icon \(path): not a regular file") }
            guard access(absolute, R_OK) == 0 else { throw .data("-i/--icon \(path): cannot be read") }
            return .file(absolute)
        }
    }

    /// A model validation error in the command line's words.
    static func describe(_ error: ToastValidationError) -> String {
        let field: String
        switch error.field {
        case "title": field = "TITLE"
        case "message": field = "MESSAGE"
        case "id": field = "--id"
        case "duration": field = "-d/--duration"
        case "icon": field = "-i/--icon"
        case let name where name.hasPrefix("actions.tap"): field = "--tap"
        default: field = "-A/--action"
        }
        if error.field == "title", error.reason.contains("both are empty") {
            return "a toast needs a TITLE or a MESSAGE; both are empty"
        }
        return "\(field): \(error.reason)"
    }
}
