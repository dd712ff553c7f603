public import DBus

/// The calls and the signal of `org.freedesktop.portal.Notification`, the notification interface of the desktop
/// portal (`org.freedesktop.portal.Desktop`, object `/org/freedesktop/portal/desktop`), for any transport.
public enum NotificationPortalClient {
    /// The desktop portal's well-known name.
    public static let busName: BusName = "org.freedesktop.portal.Desktop"
    /// The portal's object path.
    public static let path: ObjectPath = "/org/freedesktop/portal/desktop"
    /// The notification interface.
    public static let interface: InterfaceName = "org.freedesktop.portal.Notification"

    /// `AddNotification(id, notification)`: shows a notification under the app's own `id`. The portal answers before
    /// the notification server has it, and answers success even when the server is missing (P28).
    public static func add(id: String, _ notification: PortalNotification) -> DBusMethodCall {
        call("AddNotification", notification.arguments(id: id))
    }

    /// `RemoveNotification(id)`: withdraws a notification (the answer says nothing about whether it existed).
    public static func remove(id: String) -> DBusMethodCall {
        call("RemoveNotification", [.string(id)])
    }

    /// `org.freedesktop.DBus.Properties.Get` of the interface's `version` property.
    public static var readVersion: DBusMethodCall {
        DBusMethodCall(
            destination: busName, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
            arguments: [.string(interface.rawValue), .string("version")])
    }

    /// The version in the reply to ``readVersion``.
    public static func version(from reply: DBusMessage) throws(DBusError) -> UInt32 {
        guard let version = try reply.arguments("v")[0].variantValue?.uint32Value else {
            throw DBusError(name: DBusError.Name.invalidSignature, message: "the version property is not a uint32")
        }
        return version
    }

    /// The match rule for `ActionInvoked` (the portal sends it only to the connection that added the notification).
    /// It names the portal's well-known name, so a connection following it drops anyone else's look-alike.
    public static var actionInvokedRule: MatchRule {
        MatchRule(sender: busName, interface: interface, member: "ActionInvoked", path: path)
    }

    private static func call(_ member: MemberName, _ arguments: [DBusValue]) -> DBusMethodCall {
        DBusMethodCall(destination: busName, path: path, interface: interface, member: member, arguments: arguments)
    }
}

/// `ActionInvoked(s id, s action, av parameter)` from the notification portal.
public struct PortalActionInvoked: Sendable, Hashable {
    /// The app's id for the notification (the one given to `AddNotification`).
    public var id: String
    /// The action's name (`default-action` or a button's `action`).
    public var action: String
    /// The action's target, if one was given, then (version 2) the platform data.
    public var parameter: [DBusValue]

    /// Creates the value.
    public init(id: String, action: String, parameter: [DBusValue] = []) {
        self.id = id
        self.action = action
        self.parameter = parameter
    }

    /// Decodes the signal; nil for any other message.
    public init?(_ message: DBusMessage) {
        guard message.kind == .signal, message.interface == NotificationPortalClient.interface.rawValue,
            message.member == "ActionInvoked", let values = try? message.arguments("ssav"),
            let id = values[0].stringValue, let action = values[1].stringValue
        else { return nil }
        self.init(id: id, action: action, parameter: values[2].arrayValue?.map { $0.variantValue ?? $0 } ?? [])
    }

    /// The XDG activation token a version 2 portal passes in the platform data (`activation-token`), if any.
    public var activationToken: String? {
        for value in parameter.reversed() {
            if let token = value.variantDictionaryValue?["activation-token"]?.stringValue { return token }
        }
        return nil
    }
}
