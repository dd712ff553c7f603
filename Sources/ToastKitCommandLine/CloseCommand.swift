import DBus
import ToastKit

/// `toastkit close --id ID | --server-id N`: `CloseNotification` for a toast sent with `--id`, or for a server id.
struct CloseCommand {
    let target: CloseTarget
    let environment: CommandEnvironment

    func run() throws(CommandFailure) -> ExitCode {
        switch target {
        case .serverID(let serverID):
            try BusAccess.withSender { sender throws(DesktopPresentationError) in try sender.close(serverID: serverID) }
        case .id(let id):
            let store = try IDStore.open(environment: environment.variables)
            let session: IDStore.Session
            do {
                session = try store.lock()
            } catch {
                throw CommandFailure(.ioError, "close --id \(id): \(error)")
            }
            guard let entry = session.ids[id] else {
                session.close()
                throw CommandFailure.data(
                    "close --id \(id): no toast with this id is known (it was not sent with --id, or was closed already)"
                )
            }
            let server: String
            do {
                server = try BusAccess.withSender { sender throws(DesktopPresentationError) in
                    // After a server restart the remembered number may belong to someone else's notification.
                    if entry.server == nil || entry.server == sender.server {
                        try sender.close(serverID: entry.serverID)
                    }
                    return sender.server
                }
            } catch {
                session.close()
                throw error
            }
            session.ids[id] = nil
            do {
                try session.save(currentServer: server)
            } catch {
                // The toast is closed; only the bookkeeping failed.
                Output.error("warning: cannot forget --id \(id): \(error)")
            }
        }
        return .success
    }
}
