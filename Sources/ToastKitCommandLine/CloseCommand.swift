import DBus
import ToastKit

/// `toastkit close --id ID | --server-id N`: `CloseNotification` for a toast sent with `--id`, or for a server id.
struct CloseCommand {
    let target: CloseTarget
    let environment: [String: String]

    func run() async throws(CommandFailure) -> ExitCode {
        switch target {
        case .serverID(let serverID):
            try await BusAccess.withClient { client in try await client.closeNotification(id: serverID) }
        case .id(let id):
            let store = try IDStore.open(environment: environment)
            do {
                try await store.withLockedIDs { ids in
                    guard let entry = ids[id] else {
                        throw CommandFailure.data(
                            "close --id \(id): no toast with this id is known (it was not sent with --id, or was "
                                + "closed already)")
                    }
                    try await BusAccess.withClient { client in
                        let owner = try await client.connection.nameOwner(of: NotificationsClient.busName)
                        guard let owner else { throw CommandFailure.unavailable(BusAccess.noServer) }
                        // After a server restart the remembered number may belong to someone else's notification.
                        if entry.server == nil || entry.server == owner {
                            try await client.closeNotification(id: entry.serverID)
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
