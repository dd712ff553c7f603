public import DBus
public import ToastModel

/// Hands notifications to the desktop's server from a process that does not stay to listen — a script's
/// `toastkit send` — on the calling thread, with no I/O thread and no tasks.
///
/// Creating it connects and asks, in one round trip, for the bus's `Hello`, the owner of
/// `org.freedesktop.Notifications`, its capabilities and its server information; each ``show(_:replacing:playsSound:)`` is one
/// more round trip. Requests are mapped exactly as ``DesktopNotificationPresenter`` maps them
/// (``NotificationMapping``), so a toast looks the same either way. Nothing is listened for: no actions come
/// back and nothing closes the notification on time but the server (the request's `expire_timeout`). An app that
/// stays running uses ``DesktopNotificationPresenter`` instead.
///
/// Not `Sendable`: use it on one thread. Every call blocks for at most the configuration's `callTimeout`.
public final class BlockingNotificationSender {
    /// What ``show(_:replacing:playsSound:)`` did.
    public struct Shown: Sendable, Hashable {
        /// The server's id for the notification (`Notify`'s reply).
        public var serverID: UInt32
        /// What the server could not show as asked (``DesktopNotificationPresenter`` reports these as `degraded`).
        public var degradations: [String]
        /// The toast's sound, for the caller to play, where the server plays none
        /// (``SoundPlayer/playInBackground(_:appName:failed:)`` with ``PresenterConfiguration/soundPlayer``).
        public var localSound: ToastSound?
    }

    /// The configuration (application name and icon, markup, bus, call timeout).
    public let configuration: PresenterConfiguration
    /// The unique bus name of the server that owns `org.freedesktop.Notifications`, such as `:1.7`.
    public let server: String
    /// What the server can do.
    public let capabilities: ServerCapabilities
    private let connection: BlockingDBusConnection

    /// Connects and reads who the server is and what it can do.
    ///
    /// - Throws: ``PresentationError`` — `.busUnavailable` without a session bus, `.noServer` when no
    ///   server owns `org.freedesktop.Notifications`, `.timedOut` or `.refused` when it does not answer properly.
    public convenience init(configuration: PresenterConfiguration = PresenterConfiguration())
        throws(PresentationError)
    {
        let connection: BlockingDBusConnection
        let replies: [Result<DBusMessage, DBusError>]
        do {
            (connection, replies) = try BlockingDBusConnection.connect(
                to: configuration.bus, timeout: configuration.callTimeout, calling: Self.introduction)
        } catch {
            throw PresentationError(
                .busUnavailable,
                reason: "cannot reach the session bus: \(error.reason)")
        }
        try self.init(configuration: configuration, connection: connection, replies: replies)
    }

    /// Takes over `connection`, a connection to the bus of `configuration` that a command already made (it is
    /// closed with the sender), and reads who the server is and what it can do — in one round trip together with
    /// `calls`, whose results it returns in order.
    ///
    /// - Parameters:
    ///   - connection: A connection to the bus of `configuration`, registered with the bus.
    ///   - configuration: The configuration (application name and icon, markup, call timeout).
    ///   - calls: More calls for the same round trip.
    /// - Returns: the sender, and the results of `calls` in order.
    /// - Throws: as ``init(configuration:)``.
    public static func taking(
        _ connection: BlockingDBusConnection, configuration: PresenterConfiguration,
        alongside calls: [DBusMethodCall] = []
    ) throws(PresentationError) -> (
        sender: BlockingNotificationSender, replies: [Result<DBusMessage, DBusError>]
    ) {
        let replies = connection.call(Self.introduction + calls, timeout: configuration.callTimeout)
        let sender = try BlockingNotificationSender(
            configuration: configuration, connection: connection, replies: Array(replies.prefix(3)))
        return (sender, Array(replies.dropFirst(3)))
    }

    /// Who owns the name, what it can do, who it is.
    private static let introduction: [DBusMethodCall] = [
        .bus("GetNameOwner", [.string(NotificationsClient.busName.rawValue)]),
        NotificationsClient.call("GetCapabilities"),
        NotificationsClient.call("GetServerInformation"),
    ]

    private init(
        configuration: PresenterConfiguration, connection: BlockingDBusConnection,
        replies: [Result<DBusMessage, DBusError>]
    ) throws(PresentationError) {
        self.configuration = configuration
        self.connection = connection
        do throws(DBusError) {
            guard let owner = try replies[0].get().arguments("s")[0].stringValue else {
                throw DBusError(name: DBusError.Name.invalidSignature, message: "GetNameOwner reply has no name")
            }
            server = owner
            capabilities = ServerCapabilities(
                try NotificationsClient.capabilities(from: try replies[1].get()),
                information: try? NotificationsClient.serverInformation(from: try replies[2].get()))
        } catch {
            connection.close()
            throw PresentationError(error, timeout: configuration.callTimeout)
        }
    }

    /// Sends `Notify` for `presentation` and returns once the server accepted it. Its `expire_timeout` follows the
    /// toast's timer (``NotificationMapping/serverTimeout(for:)``): the server closes it on time after this process
    /// has gone.
    ///
    /// - Parameters:
    ///   - presentation: The toast to show, as the center hands it to a presenter.
    ///   - serverID: The server id of a notification to update in place (`replaces_id`), or 0 for a new
    ///     one. A stale id is harmless: the server then shows a new notification.
    ///   - playsSound: Whether the toast's sound plays (false while Do Not Disturb is on): sent to a server that
    ///     plays it, else returned as ``Shown/localSound``.
    /// - Throws: ``PresentationError`` — `.invalidInput` for content no server can take (a NUL byte, a bad
    ///   image), else as for ``init(configuration:)``.
    public func show(_ presentation: ToastPresentation, replacing serverID: UInt32 = 0, playsSound: Bool = true)
        throws(PresentationError) -> Shown
    {
        let mapped: MappedNotification
        do {
            mapped = try NotificationMapping.notify(
                presentation, replacesID: serverID, capabilities: capabilities, configuration: configuration,
                soundIsNew: playsSound)
        } catch {
            throw PresentationError(.invalidInput, reason: error.description)
        }
        do throws(DBusError) {
            let reply = try connection.call(
                NotificationsClient.call("Notify", mapped.call.arguments), timeout: configuration.callTimeout)
            return Shown(
                serverID: try NotificationsClient.notifyResult(reply).id, degradations: mapped.degradations,
                localSound: mapped.localSound)
        } catch {
            throw PresentationError(error, timeout: configuration.callTimeout)
        }
    }

    /// The server's Do Not Disturb state, read with one call where the server has it on D-Bus (off where it has none
    /// to read, or when the call fails: nothing is held back on a guess).
    public func doNotDisturb() -> ToastDoNotDisturb {
        guard let information = capabilities.information, let query = DoNotDisturbQuery.forServer(information) else {
            let name = capabilities.information?.name ?? "the server"
            return ToastDoNotDisturb(isOn: false, source: "\(name) has no Do Not Disturb to read over D-Bus")
        }
        let reply: Result<DBusMessage, DBusError>
        do throws(DBusError) {
            reply = .success(try connection.call(query.call, timeout: configuration.callTimeout))
        } catch {
            reply = .failure(error)
        }
        return query.reading(from: reply).toastDoNotDisturb
    }

    /// Sends `CloseNotification(serverID)` and waits for the server's answer.
    public func close(serverID: UInt32) throws(PresentationError) {
        do throws(DBusError) {
            _ = try connection.call(
                NotificationsClient.call("CloseNotification", [.uint32(serverID)]), timeout: configuration.callTimeout)
        } catch {
            throw PresentationError(error, timeout: configuration.callTimeout)
        }
    }
}
