import DBus
import ToastKit
import ToastKitAgent

/// Connections to the session bus for the commands that talk to the server directly, with their errors turned
/// into the tool's one-line messages (exit 69).
enum BusAccess {
    /// A new private connection to the session bus.
    static func connect() async throws(CommandFailure) -> DBusConnection {
        do {
            return try await DBusConnection.connect(to: .session)
        } catch let error as DBusError {
            throw .unavailable("cannot reach the session bus: \(error.reason)")
        } catch {
            throw .unavailable("cannot reach the session bus: \(error)")
        }
    }

    /// The failure for a presenter error.
    static func failure(_ error: PresentationError) -> CommandFailure {
        switch error.kind {
        case .invalidInput: .data(error.reason)
        case .noServer, .busUnavailable, .timedOut, .refused, .repeatedTooSoon: .unavailable(error.reason)
        case .notPresented: CommandFailure(.software, "internal error: \(error.reason)")
        }
    }

    /// Runs `body` with a blocking sender on a fresh connection (for the commands that only hand something to the
    /// server and exit: no I/O thread, no tasks).
    static func withSender<T>(
        _ body: (BlockingNotificationSender) throws(PresentationError) -> T
    ) throws(CommandFailure) -> T {
        do {
            let configuration = PresenterConfiguration(callTimeout: .seconds(10))
            return try body(try BlockingNotificationSender(configuration: configuration))
        } catch {
            throw failure(error)
        }
    }

    /// The unique name of the notification server, asked of the bus alone (`GetNameOwner`): a hung server cannot
    /// delay it.
    static func notificationServerOwner() throws(CommandFailure) -> String {
        let call = DBusMethodCall.bus("GetNameOwner", [.string(NotificationsClient.busName.rawValue)])
        do throws(DBusError) {
            let (connection, replies) = try BlockingDBusConnection.connect(
                to: .session, timeout: .seconds(10), calling: [call])
            defer { connection.close() }
            guard let owner = try replies[0].get().arguments("s")[0].stringValue else {
                throw DBusError(name: DBusError.Name.invalidSignature, message: "GetNameOwner reply has no name")
            }
            return owner
        } catch {
            if error.name == DBusError.Name.nameHasNoOwner || error.name == DBusError.Name.serviceUnknown {
                throw failure(PresentationError(error, timeout: .seconds(10)))
            }
            throw .unavailable("cannot reach the session bus: \(error.reason)")
        }
    }
}
