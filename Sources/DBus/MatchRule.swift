/// Which messages a subscription wants, as both a bus match rule (so the bus routes broadcast signals here) and a
/// local filter (so each subscription sees only its own messages, unicast signals included).
public struct MatchRule: Sendable, Hashable {
    /// The message kind; `.signal` by default.
    public var kind: DBusMessage.Kind?
    /// The sender: a unique name is compared locally; a well-known name is resolved by the bus for broadcast
    /// signals and, in a ``DBusConnection/signals(matchingAny:)`` subscription, by the connection for unicast
    /// ones (it follows the name's owner).
    public var sender: BusName?
    /// The interface.
    public var interface: InterfaceName?
    /// The member (signal name).
    public var member: MemberName?
    /// The exact object path.
    public var path: ObjectPath?
    /// The object path or any path below it.
    public var pathNamespace: ObjectPath?
    /// The destination (for eavesdropping-free unicast matching).
    public var destination: BusName?
    /// String arguments that must be equal, by position (`arg0='org.freedesktop.Notifications'`).
    public var arguments: [Int: String]

    /// Creates a rule; every field left nil matches anything.
    public init(
        kind: DBusMessage.Kind? = .signal,
        sender: BusName? = nil,
        interface: InterfaceName? = nil,
        member: MemberName? = nil,
        path: ObjectPath? = nil,
        pathNamespace: ObjectPath? = nil,
        destination: BusName? = nil,
        arguments: [Int: String] = [:]
    ) {
        self.kind = kind
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
    }

    /// The rule in the bus's text form, for `AddMatch`/`RemoveMatch`.
    public var ruleString: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Inside quotes only the quote itself needs care: close, add an escaped quote, reopen.
            parts.append("\(key)='\(value.replacingQuotes)'")
        }
        switch kind {
        case .signal: add("type", "signal")
        case .methodCall: add("type", "method_call")
        case .methodReturn: add("type", "method_return")
        case .error: add("type", "error")
        case nil: break
        }
        add("sender", sender?.rawValue)
        add("interface", interface?.rawValue)
        add("member", member?.rawValue)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("destination", destination?.rawValue)
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(index)", value) }
        return parts.joined(separator: ",")
    }

    /// Whether a received message satisfies the rule (see ``sender`` for the one field the bus must judge).
    public func matches(_ message: DBusMessage) -> Bool {
        if let kind, message.kind != kind { return false }
        if let sender, sender.isUnique || sender.rawValue == "org.freedesktop.DBus",
            message.sender != sender.rawValue
        {
            return false
        }
        if let interface, message.interface != interface.rawValue { return false }
        if let member, message.member != member.rawValue { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path?.rawValue else { return false }
            let space = pathNamespace.rawValue
            if !(space == "/" || messagePath == space || messagePath.hasPrefix(space + "/")) { return false }
        }
        if let destination, let target = message.destination, target != destination.rawValue { return false }
        for (index, value) in arguments {
            guard index < message.body.count, message.body[index].stringValue == value else { return false }
        }
        return true
    }
}

extension String {
    fileprivate var replacingQuotes: String {
        guard contains("'") else { return self }
        return split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''")
    }
}
