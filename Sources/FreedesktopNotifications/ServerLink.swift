import DBus
import ToastModel

/// The desktop presenter's connection to the session bus: the one connection that sends `Notify` and receives
/// the server's signals (dunst sends them only to the caller), with the subscription that turns them into the
/// presenter's events.
///
/// It subscribes, in one ordered sequence, to the server's signals, to `NameOwnerChanged` for
/// `org.freedesktop.Notifications` and, when asked, to `org.freedesktop.ScreenSaver.ActiveChanged`. The rules name
/// the well-known senders, so the connection drops a look-alike from anyone but the current owner before decoding
/// it (a stranger's multi-megabyte signal costs nothing); the machine checks the sender again.
struct ServerLink: Sendable {
    /// The connection.
    let connection: DBusConnection
    /// Whether it listens (otherwise the owner is learned from the first `Notify` reply).
    let listens: Bool

    /// Connects and subscribes; `deliver` gets the machine's events from the signals, `lost` the connection's end.
    static func open(
        configuration: DesktopPresenterConfiguration,
        deliver: @escaping @Sendable (DesktopPresenterMachine.Event) -> Void,
        lost: @escaping @Sendable (DBusConnection, DBusError) -> Void
    ) async throws -> ServerLink {
        let connection = try await DBusConnection.connect(to: configuration.bus)
        do {
            if configuration.listensForSignals {
                var rules = [
                    MatchRule(
                        sender: NotificationsClient.busName, interface: NotificationsClient.interface,
                        path: NotificationsClient.path)
                ]
                rules.append(.nameOwnerChanged(of: NotificationsClient.busName))
                if configuration.pausesWhileScreenLocked { rules.append(ScreenSaver.activeChangedRule) }
                let signals = try await connection.signals(matchingAny: rules)
                Task { await listen(to: signals, deliver: deliver) }
            }
            Task {
                let reason = await connection.waitUntilClosed()
                lost(connection, reason)
            }
            return ServerLink(connection: connection, listens: configuration.listensForSignals)
        } catch {
            connection.close()
            throw error
        }
    }

    /// What the server can do and who it is: `GetCapabilities`, `GetServerInformation` and (when listening)
    /// `GetNameOwner`, all in flight together.
    func readServer(timeout: Duration) async throws -> (ServerCapabilities, owner: String?) {
        async let capabilities = readCapabilities(timeout: timeout)
        async let owner = listens ? connection.bus.nameOwner(of: NotificationsClient.busName) : nil
        return (try await capabilities, try await owner)
    }

    /// `GetCapabilities` and `GetServerInformation` (the information is optional: some servers fail it).
    ///
    /// A server that has just taken the name may not serve its object yet: GNOME Shell 43's notifications proxy owns
    /// `org.freedesktop.Notifications` a moment before it exports `/org/freedesktop/Notifications`, and answers
    /// `UnknownMethod` meanwhile. That is "not ready", not a refusal: asked again every 50 ms, within `timeout`.
    func readCapabilities(timeout: Duration) async throws -> ServerCapabilities {
        let client = NotificationsClient(connection: connection, timeout: timeout)
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                async let names = client.capabilities()
                async let information = try? client.serverInformation()
                return ServerCapabilities(try await names, information: await information)
            } catch let error as DBusError
                where Self.notReady.contains(error.name) && ContinuousClock.now + .milliseconds(50) < deadline
            {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// What a server answers for an object it does not serve yet.
    private static let notReady: Set<DBusError.Name> = [.unknownMethod, .unknownObject]

    private static func listen(
        to signals: SignalSubscription, deliver: @Sendable (DesktopPresenterMachine.Event) -> Void
    ) async {
        do {
            for try await message in signals {
                if let change = NameOwnerChange(message) {
                    deliver(.ownerChanged(change.newOwner))
                } else if let signal = NotificationSignal(message) {
                    deliver(.signal(signal, sender: message.sender))
                } else if let active = ScreenSaver.active(in: message) {
                    // Only the screen saver itself gets here (the rule names its well-known name).
                    deliver(.screenSaverChanged(active: active))
                }
            }
        } catch {
            // The connection ended; its `lost` handler reports it.
        }
    }
}
