public import DBus

/// A typed client for `org.freedesktop.Notifications` over one connection: the spec's five methods and its signals.
///
/// The desktop presenter and the `toastkit` tool both use it; it holds no state of its own.
public struct NotificationsClient: Sendable {
    /// The well-known name of the notification server.
    public static let busName: BusName = "org.freedesktop.Notifications"
    /// The server's object path.
    public static let path: ObjectPath = "/org/freedesktop/Notifications"
    /// The interface.
    public static let interface: InterfaceName = "org.freedesktop.Notifications"

    /// The connection used to call the server (it also receives dunst's unicast signals).
    public let connection: DBusConnection
    /// How long each call may take.
    public var timeout: Duration

    /// A client on `connection`.
    public init(connection: DBusConnection, timeout: Duration = .seconds(10)) {
        self.connection = connection
        self.timeout = timeout
    }

    private func call(_ member: MemberName, _ arguments: [DBusValue] = []) async throws -> DBusMessage {
        let call = Self.call(member, arguments)
        return try await connection.call(
            destination: call.destination, path: call.path, interface: call.interface, member: call.member,
            arguments: call.arguments, timeout: timeout)
    }

    /// Sends `Notify` and returns the server's id for the notification and the unique name that answered.
    public func notify(_ request: NotifyCall) async throws -> (id: UInt32, server: String?) {
        try Self.notifyResult(try await call("Notify", request.arguments))
    }

    /// Sends `CloseNotification(id)`.
    public func closeNotification(id: UInt32) async throws {
        _ = try await call("CloseNotification", [.uint32(id)])
    }

    /// `GetCapabilities`.
    public func capabilities() async throws -> [String] {
        try Self.capabilities(from: try await call("GetCapabilities"))
    }

    /// `GetServerInformation`.
    public func serverInformation() async throws -> ServerInformation {
        try Self.serverInformation(from: try await call("GetServerInformation"))
    }

    // MARK: - The calls and their replies, for any transport

    /// The call of `member` on the server.
    public static func call(_ member: MemberName, _ arguments: [DBusValue] = []) -> DBusMethodCall {
        DBusMethodCall(destination: busName, path: path, interface: interface, member: member, arguments: arguments)
    }

    /// The server's id and unique name from a `Notify` reply.
    public static func notifyResult(_ reply: DBusMessage) throws(DBusError) -> (id: UInt32, server: String?) {
        guard let id = try reply.arguments("u")[0].uint32Value else {
            throw DBusError(name: DBusError.Name.invalidSignature, message: "Notify reply has no id")
        }
        return (id, reply.sender)
    }

    /// The capability names in a `GetCapabilities` reply.
    public static func capabilities(from reply: DBusMessage) throws(DBusError) -> [String] {
        try reply.arguments("as")[0].stringsValue ?? []
    }

    /// The server information in a `GetServerInformation` reply.
    public static func serverInformation(from reply: DBusMessage) throws(DBusError) -> ServerInformation {
        let values = try reply.arguments("ssss")
        return ServerInformation(
            name: values[0].stringValue ?? "", vendor: values[1].stringValue ?? "",
            version: values[2].stringValue ?? "", specificationVersion: values[3].stringValue ?? "")
    }

    /// The match rules for the server's signals and for changes of its owner, to subscribe in one sequence.
    public static var signalRules: [MatchRule] {
        [
            MatchRule(interface: interface, path: path),
            .nameOwnerChanged(of: busName),
        ]
    }
}

/// What `GetServerInformation` says.
public struct ServerInformation: Sendable, Hashable, Codable {
    /// The server's name, e.g. `dunst`.
    public var name: String
    /// Its vendor.
    public var vendor: String
    /// Its version.
    public var version: String
    /// The version of the specification it implements, e.g. `1.2`.
    public var specificationVersion: String

    /// Creates the value.
    public init(name: String, vendor: String, version: String, specificationVersion: String) {
        self.name = name
        self.vendor = vendor
        self.version = version
        self.specificationVersion = specificationVersion
    }
}

/// Why the server says a notification closed (`NotificationClosed`'s reason).
public enum NotificationCloseReason: Sendable, Hashable {
    /// 1: it expired.
    case expired
    /// 2: the person dismissed it.
    case dismissedByUser
    /// 3: a `CloseNotification` call closed it.
    case closedByCall
    /// 4: undefined or reserved.
    case undefined
    /// Any other value a server sends.
    case unknown(UInt32)

    /// The reason for a wire value.
    public init(rawValue: UInt32) {
        switch rawValue {
        case 1: self = .expired
        case 2: self = .dismissedByUser
        case 3: self = .closedByCall
        case 4: self = .undefined
        default: self = .unknown(rawValue)
        }
    }

    /// The wire value.
    public var rawValue: UInt32 {
        switch self {
        case .expired: 1
        case .dismissedByUser: 2
        case .closedByCall: 3
        case .undefined: 4
        case .unknown(let value): value
        }
    }
}

/// One signal from the server, decoded; nil from ``init(_:)`` for anything else or a malformed body.
public enum NotificationSignal: Sendable, Hashable {
    /// `ActionInvoked(id, key)`.
    case actionInvoked(id: UInt32, key: String)
    /// `NotificationClosed(id, reason)`.
    case closed(id: UInt32, reason: NotificationCloseReason)
    /// `ActivationToken(id, token)`: sent just before `ActionInvoked` by servers of spec 1.2.
    case activationToken(id: UInt32, token: String)
    /// `NotificationReplied(id, text)`: the person sent `text` from the server's own reply field (the
    /// `inline-reply` action; Plasma, swaync 0.9).
    case replied(id: UInt32, text: String)

    /// Decodes a message from the server's interface.
    public init?(_ message: DBusMessage) {
        guard message.kind == .signal, message.interface == NotificationsClient.interface.rawValue else {
            return nil
        }
        switch message.member {
        case "ActionInvoked":
            guard let values = try? message.arguments("us"), let id = values[0].uint32Value,
                let key = values[1].stringValue
            else { return nil }
            self = .actionInvoked(id: id, key: key)
        case "NotificationClosed":
            guard let values = try? message.arguments("uu"), let id = values[0].uint32Value,
                let reason = values[1].uint32Value
            else { return nil }
            self = .closed(id: id, reason: NotificationCloseReason(rawValue: reason))
        case "ActivationToken":
            guard let values = try? message.arguments("us"), let id = values[0].uint32Value,
                let token = values[1].stringValue
            else { return nil }
            self = .activationToken(id: id, token: token)
        case "NotificationReplied":
            guard let values = try? message.arguments("us"), let id = values[0].uint32Value,
                let text = values[1].stringValue
            else { return nil }
            self = .replied(id: id, text: text)
        default:
            return nil
        }
    }

    /// The notification id the signal is about.
    public var id: UInt32 {
        switch self {
        case .actionInvoked(let id, _), .closed(let id, _), .activationToken(let id, _), .replied(let id, _): id
        }
    }
}
