import FoundationEssentials
import ToastKit
import ToastKitAgent

/// `toastkit later [--show] [--json] [--app NAME]`: lists the toasts kept with the Later action, or presents them
/// again: the command line's, or with `--app` those an application kept through the library.
struct LaterCommand {
    let show: Bool
    let json: Bool
    /// Whose kept toasts: ``CommandLineLater/application`` or an app's name.
    let application: String
    let environment: CommandEnvironment

    func run() async throws(CommandFailure) -> ExitCode {
        let store = CommandLineLater.store(application: application, environment: environment.variables)
        let records: [ToastLaterRecord]
        do {
            records = try store.load()
        } catch {
            throw .data(error.description)
        }
        guard show else {
            for record in records { list(record) }
            return .success
        }
        guard !records.isEmpty else { return .success }
        // Make sure a server is there before anything leaves the store.
        _ = try BusAccess.withSender { $0.server }
        // Take the toasts out of the store in one locked step (another process may be adding some right now),
        // then show them all at once: the center hands every one of them to the presenter.
        let taken: [ToastLaterRecord]
        do {
            taken = try store.update { records in
                defer { records = [] }
                return records
            }
        } catch {
            throw CommandFailure(.ioError, "cannot take the toasts out of the Later store: \(error)")
        }
        guard !taken.isEmpty else { return .success }
        // Shown because the person asked for them now: whatever Do Not Disturb says.
        var configuration = PresenterConfiguration(appName: application, callTimeout: .seconds(10))
        configuration.followsDoNotDisturb = false
        configuration.drawsProgressAsJobs = false
        let desktop = DesktopNotificationPresenter(configuration: configuration)
        let center = ToastCenter(maxVisible: taken.count, presenter: desktop, laterStore: store)
        for record in taken { center.present(record.makeMessage()) }
        for (index, record) in taken.enumerated() {
            let serverID: UInt32
            do {
                serverID = try await desktop.accepted(record.id)
            } catch {
                // What was not shown goes back into the store, in front of anything kept meanwhile.
                let rest = Array(taken[index...])
                let restored = Result { () throws(LaterStoreProblem) in
                    try store.update { records in
                        records = rest + records.filter { kept in !rest.contains { $0.id == kept.id } }
                    }
                }
                if case .failure(let problem) = restored { Output.error("warning: \(problem)") }
                if let error = error as? PresentationError { throw BusAccess.failure(error) }
                throw CommandFailure(.software, "internal error: \(error)")
            }
            if json {
                Output.json([
                    "event": .string("presented"), "id": .string(record.id), "server_id": .integer(Int64(serverID)),
                ])
            } else {
                Output.line("\(TerminalText.escape(record.id))\t\(serverID)\t\(TerminalText.escape(record.title))")
            }
        }
        return .success
    }

    private func list(_ record: ToastLaterRecord) {
        let kept = record.deferredAt.formatted(Date.ISO8601FormatStyle())
        if json {
            Output.json([
                "id": .string(record.id), "status": .string(record.status.rawValue), "title": .string(record.title),
                "message": .optional(record.message), "kept_at": .string(kept),
                "actions": .array(record.actions.map { .string($0.id) }),
            ])
        } else {
            Output.line(
                "\(TerminalText.escape(record.id))\t\(record.status.rawValue)\t\(kept)\t\(TerminalText.escape(record.title))"
            )
        }
    }
}
