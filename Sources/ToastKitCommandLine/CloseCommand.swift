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
            do {
                try store.withLockedIDs { ids in
                    guard let entry = ids[id] else {
                        throw CommandFailure.data(
                            "close --id \(id): no toast with this id is known (it was not sent with --id, or was "
                                + "closed already)")
                    }
                    try BusAccess.withSender { sender throws(DesktopPresentationError) in
                        // After a server restart the remembered number may belong to someone else's notification.
                        if entry.server == nil || entry.server == sender.server {
                            try sender.close(serverID: entry.serverID)
                        }
                    }
                    ids[id] = nil
                }
            } catch let failure as CommandFailure {
                throw failure
            } catch {
                throw CommandFailure(.software, "cannot update \(store.fileURL.path): \(error)")
            }
        }
        return .success
    }
}
