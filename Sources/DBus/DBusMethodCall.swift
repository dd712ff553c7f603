/// One method call, as a value: what ``DBusConnection/call(_:timeout:)`` sends and ``BlockingDBusConnection``
/// sends in a batch.
public struct DBusMethodCall: Sendable, Hashable {
    /// The bus name of the peer, or `nil` for a peer-to-peer connection.
    public var destination: BusName?
    /// The object path.
    public var path: ObjectPath
    /// The interface, or `nil` to let the peer pick the method by name.
    public var interface: InterfaceName?
    /// The method name.
    public var member: MemberName
    /// The arguments.
    public var arguments: [DBusValue]
    /// Whether the bus may start the destination's service (D-Bus activation) when no one owns its name; when false,
    /// the bus answers `NameHasNoOwner` at once instead.
    public var autoStart = true

    /// Creates the call.
    public init(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [DBusValue] = []
    ) {
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    /// A call to the bus itself (`org.freedesktop.DBus`), such as `GetNameOwner`.
    public static func bus(_ member: MemberName, _ arguments: [DBusValue] = []) -> DBusMethodCall {
        BusDaemon.call(member, arguments)
    }

    /// The libdbus message; throws `InvalidArgs` naming the argument libdbus would not accept.
    func message(noReply: Bool = false) throws(DBusError) -> OutgoingMessage {
        let message = try OutgoingMessage.methodCall(
            destination: destination, path: path, interface: interface, member: member, body: arguments,
            noReply: noReply)
        if !autoStart { message.setAutoStart(false) }
        return message
    }
}
