import DBus
import ToastModel

/// The portal presenter's connection to the session bus: the one connection that calls `AddNotification` and
/// receives `ActionInvoked` (the portal sends it only to that connection), with the subscription that turns the
/// portal's signals and owner changes into the machine's events.
///
/// The rules name the well-known senders, so the connection drops a look-alike from anyone but the current owner
/// before decoding it; the machine checks the sender again.
struct PortalLink: Sendable {
    /// The connection.
    let connection: DBusConnection
    /// Whether it listens (otherwise the owner is learned from the first `AddNotification` reply).
    let listens: Bool

    /// Connects and subscribes; `deliver` gets the machine's events from the signals, `lost` the connection's end.
    static func open(
        configuration: DesktopPresenterConfiguration,
        deliver: @escaping @Sendable (PortalPresenterMachine.Event) -> Void,
        lost: @escaping @Sendable (DBusConnection, DBusError) -> Void
    ) async throws -> PortalLink {
        let connection = try await DBusConnection.connect(to: configuration.bus)
        do {
            if configuration.listensForSignals {
                var rules = [NotificationPortalClient.actionInvokedRule]
                rules.append(.nameOwnerChanged(of: NotificationPortalClient.busName))
                if configuration.pausesWhileScreenLocked { rules.append(ScreenSaver.activeChangedRule) }
                let signals = try await connection.signals(matchingAny: rules)
                Task { await listen(to: signals, deliver: deliver) }
            }
            Task {
                let reason = await connection.waitUntilClosed()
                lost(connection, reason)
            }
            return PortalLink(connection: connection, listens: configuration.listensForSignals)
        } catch {
            connection.close()
            throw error
        }
    }

    /// The interface's `version` and (when listening) the portal's owner, both in flight together.
    func readPortal(timeout: Duration) async throws -> (version: UInt32, owner: String?) {
        async let version = readVersion(timeout: timeout)
        async let owner = listens ? connection.bus.nameOwner(of: NotificationPortalClient.busName) : nil
        return (try await version, try await owner)
    }

    /// Reads the `version` property of `org.freedesktop.portal.Notification`.
    func readVersion(timeout: Duration) async throws -> UInt32 {
        let reply = try await connection.call(NotificationPortalClient.readVersion, timeout: timeout)
        return try NotificationPortalClient.version(from: reply)
    }

    /// The portal's notification permission for `appID` from the permission store (`yes`, `no`, …), or nil when the
    /// store cannot be asked (inside a real Flatpak its bus proxy hides it) or has no entry.
    func notificationPermission(of appID: String, timeout: Duration) async -> [String]? {
        let lookup = DBusMethodCall(
            destination: "org.freedesktop.impl.portal.PermissionStore",
            path: "/org/freedesktop/impl/portal/PermissionStore",
            interface: "org.freedesktop.impl.portal.PermissionStore", member: "Lookup",
            arguments: [.string("notifications"), .string("notification")])
        guard let reply = try? await connection.call(lookup, timeout: timeout),
            let entries = (try? reply.arguments("a{sas}v"))?.first?.dictionaryValue
        else { return nil }
        return entries.first { $0.key.stringValue == appID }?.value.stringsValue
    }

    private static func listen(
        to signals: SignalSubscription, deliver: @Sendable (PortalPresenterMachine.Event) -> Void
    ) async {
        do {
            for try await message in signals {
                if let change = NameOwnerChange(message) {
                    deliver(.ownerChanged(change.newOwner))
                } else if let signal = PortalActionInvoked(message) {
                    deliver(.actionInvoked(signal, sender: message.sender))
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
