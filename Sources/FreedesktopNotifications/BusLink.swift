import DBus
import ToastModel

/// A presenter's one connection to the session bus, for both presenters: the connection that makes the service's
/// calls is the one that receives its signals (dunst and the portal send them only to the caller), with the
/// subscription that turns them into the backend's events.
///
/// It subscribes, in one ordered sequence, to the service's own signals, to `NameOwnerChanged` for the service's
/// name and, when asked, to `org.freedesktop.ScreenSaver.ActiveChanged`. The rules name the well-known senders, so
/// the connection drops a look-alike from anyone but the current owner before decoding it (a stranger's
/// multi-megabyte signal costs nothing); the machines check the sender again.
struct BusLink: Sendable {
    /// What arrived on the subscription.
    enum Signal: Sendable {
        /// The service's name has a new owner (nil: nobody).
        case ownerChanged(String?)
        /// The screen saver became active or inactive.
        case screenSaverChanged(active: Bool)
        /// A signal of the service itself, for the backend to decode.
        case service(DBusMessage)
    }

    /// Why a call could not be made: the connection ended before it went out.
    static let lostReason = "the session bus connection was lost"

    /// The connection.
    let connection: DBusConnection
    /// Whether it listens (otherwise the owner is learned from the first call's reply).
    let listens: Bool

    /// Connects and subscribes to the service's signals (`serviceRule`) and owner (`service`); `deliver` gets what
    /// arrives, in order, on the connection's I/O thread (where the answers to calls arrive too); `lost` gets the
    /// connection's end.
    static func open(
        configuration: PresenterConfiguration, service: BusName, serviceRule: MatchRule, otherRules: [MatchRule] = [],
        deliver: @escaping @Sendable (Signal) -> Void,
        lost: @escaping @Sendable (DBusConnection, DBusError) -> Void
    ) async throws -> BusLink {
        let connection = try await DBusConnection.connect(to: configuration.bus)
        do {
            if configuration.listensForSignals {
                var rules = [serviceRule, .nameOwnerChanged(of: service)]
                if configuration.pausesWhileScreenLocked { rules.append(ScreenSaver.activeChangedRule) }
                rules += otherRules
                // On the I/O thread, in order with the replies: no task between the bus and the machine.
                _ = try await connection.signals(matchingAny: rules) { arrived in
                    // The connection's end is reported by `lost`.
                    if case .success(let message) = arrived { deliver(signal(message)) }
                }
            }
            Task {
                let reason = await connection.waitUntilClosed()
                lost(connection, reason)
            }
            return BusLink(connection: connection, listens: configuration.listensForSignals)
        } catch {
            connection.close()
            throw error
        }
    }

    /// Makes `call` on `link`: `answered` gets the reply on the connection's I/O thread, or the failure at once when
    /// there is no link (it was lost) or the call cannot go out.
    static func call(
        _ call: DBusMethodCall, on link: BusLink?, timeout: Duration,
        answered: @escaping @Sendable (Result<DBusMessage, any Error>) -> Void
    ) {
        guard let link else {
            return answered(.failure(PresentationError(.busUnavailable, reason: lostReason)))
        }
        do {
            try link.connection.call(call, timeout: timeout, completion: answered)
        } catch {
            answered(.failure(error))
        }
    }

    /// The unique name that owns `service`, when listening (nil otherwise: the first reply says who answered).
    func owner(of service: BusName) async throws -> String? {
        listens ? try await connection.bus.nameOwner(of: service) : nil
    }

    /// What a message of the subscription is.
    private static func signal(_ message: DBusMessage) -> Signal {
        if let change = NameOwnerChange(message) { return .ownerChanged(change.newOwner) }
        // Only the screen saver itself gets here (the rule names its well-known name).
        if let active = ScreenSaver.active(in: message) { return .screenSaverChanged(active: active) }
        return .service(message)
    }
}
