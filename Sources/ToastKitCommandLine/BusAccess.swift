import DBus
import ToastKit

/// Connections to the session bus for the commands that talk to the server directly, with their errors turned
/// into the tool's one-line messages (exit 69).
enum BusAccess {
    /// A new private connection to the session bus.
    static func connect() async throws(CommandFailure) -> DBusConnection {
        do {
            return try await DBusConnection.connect(to: .session)
        } catch let error as DBusError {
            throw .unavailable("cannot reach the session bus: \(error.message.isEmpty ? error.name : error.message)")
        } catch {
            throw .unavailable("cannot reach the session bus: \(error)")
        }
    }

    /// The failure for an error from a call to the notification server.
    static func failure(_ error: any Error) -> CommandFailure {
        guard let error = error as? DBusError else { return .unavailable("the notification server failed: \(error)") }
        switch error.name {
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner:
            return .unavailable(noServer)
        case DBusError.Name.noReply:
            return .unavailable("the notification server did not answer in time")
        case DBusError.Name.disconnected:
            return .unavailable("the session bus connection was lost: \(error.message)")
        default:
            return .unavailable("the notification server failed: \(error)")
        }
    }

    /// The message for a bus without a notification server.
    static let noServer = "no notification server is running (org.freedesktop.Notifications has no owner)"

    /// The failure for a presenter error.
    static func failure(_ error: DesktopPresentationError) -> CommandFailure {
        switch error.kind {
        case .invalidInput: .data(error.reason)
        case .noServer, .busUnavailable, .timedOut, .refused: .unavailable(error.reason)
        case .notPresented: CommandFailure(.software, "internal error: \(error.reason)")
        }
    }

    /// Runs `body` with a blocking sender on a fresh connection (for the commands that only hand something to the
    /// server and exit: no I/O thread, no tasks).
    static func withSender<T>(
        _ configuration: DesktopPresenterConfiguration = DesktopPresenterConfiguration(callTimeout: .seconds(10)),
        _ body: (BlockingNotificationSender) throws(DesktopPresentationError) -> T
    ) throws(CommandFailure) -> T {
        do {
            return try body(try BlockingNotificationSender(configuration: configuration))
        } catch {
            throw failure(error)
        }
    }
}
