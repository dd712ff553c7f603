import DBus
import ToastModel

/// The portal presenter's connection to the session bus: the one connection that calls `AddNotification` and
/// receives `ActionInvoked` (the portal sends it only to that connection), with the subscription that turns the
/// portal's signals and owner changes into the machine's events.
///
/// It decides nothing: it decodes and hands each one to the presenter's machine, which checks who sent it.
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
                if configuration.pausesWhileScreenLocked { rules.append(screenSaverRule) }
                let signals = try await connection.signals(matchingAny: rules)
                Task { await listen(to: signals, on: connection, deliver: deliver) }
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

    private static let screenSaverRule = MatchRule(interface: "org.freedesktop.ScreenSaver", member: "ActiveChanged")

    private static func listen(
        to signals: SignalSubscription, on connection: DBusConnection,
        deliver: @Sendable (PortalPresenterMachine.Event) -> Void
    ) async {
        do {
            for try await message in signals {
                if let change = NameOwnerChange(message) {
                    deliver(.ownerChanged(change.newOwner))
                } else if let signal = PortalActionInvoked(message) {
                    deliver(.actionInvoked(signal, sender: message.sender))
                } else if message.interface == "org.freedesktop.ScreenSaver", message.member == "ActiveChanged",
                    let active = (try? message.arguments("b"))?[0].boolValue,
                    let owner = try? await connection.bus.nameOwner(of: "org.freedesktop.ScreenSaver"),
                    owner == message.sender
                {
                    // Only the screen saver itself may pause the center.
                    deliver(.screenSaverChanged(active: active))
                }
            }
        } catch {
            // The connection ended; its `lost` handler reports it.
        }
    }
}
