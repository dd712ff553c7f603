import DBus
import ToastKit
import ToastKitAgent

/// `toastkit close --id ID | --server-id N`: `CloseNotification` for a toast sent with `--id`, or for a server id.
struct CloseCommand {
    let target: CloseTarget
    let environment: CommandEnvironment

    func run() throws(CommandFailure) -> ExitCode {
        switch target {
        case .serverID(let serverID):
            try BusAccess.withSender { sender throws(PresentationError) in try sender.close(serverID: serverID) }
        case .id(let id):
            // The agent owns the connection that sent its toasts (GNOME Shell closes only those).
            if try closeThroughAgent(id) { return .success }
            // A scheduled toast no agent runs for now (or another session's agent keeps): it is the user's store's.
            if (try? ScheduleStore.open(environment: environment.variables).remove(id)) == true { return .success }
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
                server = try BusAccess.withSender { sender throws(PresentationError) in
                    // After a server restart the remembered number may belong to someone else's notification.
                    if entry.server == nil || entry.server == sender.server {
                        try sender.close(serverID: entry.serverID)
                    }
                    return sender.server
                }
            } catch {
                session.close()
                guard error.message.contains("InvalidArgs") || error.message.contains("Invalid notification ID") else {
                    throw error
                }
                // GNOME Shell: only the connection that sent a notification may close it while it is connected.
                throw CommandFailure(
                    error.code,
                    "\(error.message) (the server closes a notification only for the program that showed it while "
                        + "that one runs; toasts sent through the agent — without --no-agent — can be closed from "
                        + "anywhere)")
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
