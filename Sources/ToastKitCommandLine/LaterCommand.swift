import FoundationEssentials
import ToastKit

/// `toastkit later [--show] [--json]`: lists the toasts kept with the Later action, or presents them again.
struct LaterCommand {
    let show: Bool
    let json: Bool
    let environment: CommandEnvironment

    func run() async throws(CommandFailure) -> ExitCode {
        let store = FileLaterStore.standard(environment: environment.variables)
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
        // The center clears the store as it restores: make sure a server is there first, and put the toasts back
        // if the server fails them.
        _ = try BusAccess.withSender { $0.server }
        let desktop = DesktopNotificationPresenter(
            configuration: DesktopPresenterConfiguration(appName: "toastkit", callTimeout: .seconds(10)))
        let center = ToastCenter(presenter: desktop, laterStore: store)
        center.hostDidBecomeActive()
        for record in records {
            let serverID: UInt32
            do {
                serverID = try await desktop.accepted(record.id)
            } catch let error as DesktopPresentationError {
                try? store.save(records)
                throw BusAccess.failure(error)
            } catch {
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
