internal import CDBus

/// The bus daemon's own methods (`org.freedesktop.DBus` at `/org/freedesktop/DBus`), called on one connection:
/// names, their owners, match rules. A small proxy, as zbus's `DBusProxy`: get one from ``DBusConnection/bus``.
public struct BusDaemon: Sendable {
    /// The bus's well-known name.
    public static let name: BusName = "org.freedesktop.DBus"
    /// The bus's object path.
    public static let path: ObjectPath = "/org/freedesktop/DBus"
    /// The bus's interface.
    public static let interface: InterfaceName = "org.freedesktop.DBus"

    /// The connection the calls go out on.
    public let connection: DBusConnection

    /// A proxy on `connection`.
    public init(connection: DBusConnection) {
        self.connection = connection
    }

    /// The call of `member` on the bus, for any transport (``BlockingDBusConnection`` batches use it too).
    public static func call(_ member: MemberName, _ arguments: [DBusValue] = []) -> DBusMethodCall {
        DBusMethodCall(destination: name, path: path, interface: interface, member: member, arguments: arguments)
    }

    private func call(_ member: MemberName, _ arguments: [DBusValue] = []) async throws -> DBusMessage {
        try await connection.call(Self.call(member, arguments))
    }

    /// The names on the bus (`ListNames`).
    public func listNames() async throws -> [String] {
        try await call("ListNames").arguments("as")[0].stringsValue ?? []
    }

    /// The bus's id (`GetId`): 32 hex digits, new for every bus the daemon runs — what tells one session's bus from
    /// the next one's, even at the same address.
    public func id() async throws -> String {
        guard let id = try await call("GetId").arguments("s")[0].stringValue else {
            throw DBusError(name: DBusError.Name.failed, message: "GetId answered no id")
        }
        return id
    }

    /// The unique name that owns `name`, or nil when nobody does (`GetNameOwner`).
    public func nameOwner(of name: BusName) async throws -> String? {
        do {
            return try Self.nameOwner(from: try await call("GetNameOwner", [.string(name.rawValue)]))
        } catch let error as DBusError where error.name == DBusError.Name.nameHasNoOwner {
            return nil
        }
    }

    /// The owner in a `GetNameOwner` reply.
    public static func nameOwner(from reply: DBusMessage) throws(DBusError) -> String? {
        try reply.arguments("s")[0].stringValue
    }

    /// Asks the bus for a well-known name (`RequestName`).
    public func requestName(_ name: BusName, flags: NameRequestFlags = []) async throws -> NameRequestReply {
        let reply = try await call("RequestName", [.string(name.rawValue), .uint32(flags.rawValue)])
        let code = try reply.arguments("u")[0].uint32Value ?? 0
        guard let result = NameRequestReply(rawValue: code) else {
            throw DBusError(name: DBusError.Name.failed, message: "RequestName answered unknown code \(code)")
        }
        return result
    }

    /// Gives a well-known name back (`ReleaseName`).
    public func releaseName(_ name: BusName) async throws -> NameReleaseReply {
        let reply = try await call("ReleaseName", [.string(name.rawValue)])
        let code = try reply.arguments("u")[0].uint32Value ?? 0
        guard let result = NameReleaseReply(rawValue: code) else {
            throw DBusError(name: DBusError.Name.failed, message: "ReleaseName answered unknown code \(code)")
        }
        return result
    }

    /// The Unix user id of the process behind a connection (`GetConnectionUnixUser`): how a service on the session
    /// bus checks that a caller is its own user.
    public func connectionUnixUser(of name: String) async throws -> UInt32 {
        let reply = try await call("GetConnectionUnixUser", [.string(name)])
        guard let uid = try reply.arguments("u")[0].uint32Value else {
            throw DBusError(name: DBusError.Name.failed, message: "GetConnectionUnixUser answered no uid")
        }
        return uid
    }

    /// Adds a match rule for this connection (`AddMatch`). Prefer ``DBusConnection/signals(matching:)``, whose
    /// rule lives exactly as long as the subscription.
    public func addMatch(_ rule: MatchRule) async throws {
        _ = try await call("AddMatch", [.string(rule.ruleString)])
    }

    /// Follows the owner of `name`: every `NameOwnerChanged` for it from the bus, from now on.
    public func nameOwnerChanges(of name: BusName) async throws -> NameOwnerChanges {
        NameOwnerChanges(base: try await connection.signals(matching: .nameOwnerChanged(of: name)))
    }
}

extension MatchRule {
    /// The bus's `NameOwnerChanged` signals for one name.
    public static func nameOwnerChanged(of name: BusName) -> MatchRule {
        MatchRule(
            sender: BusDaemon.name, interface: BusDaemon.interface, member: "NameOwnerChanged",
            path: BusDaemon.path, arguments: [0: name.rawValue])
    }
}

/// Flags for ``BusDaemon/requestName(_:flags:)``.
public struct NameRequestFlags: OptionSet, Sendable, Hashable {
    /// The raw flag bits.
    public let rawValue: UInt32
    /// Creates flags from raw bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Let another connection take the name with ``replaceExisting``.
    public static let allowReplacement = NameRequestFlags(rawValue: CDBUS_NAME_FLAG_ALLOW_REPLACEMENT)
    /// Take the name from its owner if the owner allowed replacement.
    public static let replaceExisting = NameRequestFlags(rawValue: CDBUS_NAME_FLAG_REPLACE_EXISTING)
    /// Fail instead of waiting in the name's queue.
    public static let doNotQueue = NameRequestFlags(rawValue: CDBUS_NAME_FLAG_DO_NOT_QUEUE)
}

/// The bus's answer to `RequestName`.
public enum NameRequestReply: UInt32, Sendable {
    /// This connection now owns the name.
    case primaryOwner = 1
    /// Queued behind the current owner.
    case inQueue = 2
    /// Someone else owns it and ``NameRequestFlags/doNotQueue`` was given.
    case exists = 3
    /// This connection already owned it.
    case alreadyOwner = 4
}

/// The bus's answer to `ReleaseName`.
public enum NameReleaseReply: UInt32, Sendable {
    /// Released.
    case released = 1
    /// Nobody owned it.
    case nonExistent = 2
    /// Someone else owns it.
    case notOwner = 3
}

/// One `NameOwnerChanged` signal.
public struct NameOwnerChange: Sendable, Hashable {
    /// The name whose owner changed.
    public var name: String
    /// The unique name that owned it before, or nil.
    public var oldOwner: String?
    /// The unique name that owns it now, or nil when it has no owner any more.
    public var newOwner: String?
    /// Creates a change record.
    public init(name: String, oldOwner: String?, newOwner: String?) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }

    /// Decodes a `NameOwnerChanged` signal sent by the bus itself; `nil` for any other message (a look-alike
    /// from another connection included) or a malformed body.
    public init?(_ message: DBusMessage) {
        guard message.kind == .signal, message.sender == BusDaemon.name.rawValue,
            message.interface == BusDaemon.interface.rawValue, message.member == "NameOwnerChanged",
            let values = try? message.arguments("sss"), let name = values[0].stringValue
        else { return nil }
        let old = values[1].stringValue ?? ""
        let new = values[2].stringValue ?? ""
        self.init(name: name, oldOwner: old.isEmpty ? nil : old, newOwner: new.isEmpty ? nil : new)
    }
}

/// The `NameOwnerChanged` signals for one name, as an `AsyncSequence`.
public struct NameOwnerChanges: AsyncSequence, Sendable {
    /// Each change of owner.
    public typealias Element = NameOwnerChange
    let base: SignalSubscription

    /// Ends the sequence and removes its match rule.
    public func cancel() { base.cancel() }

    /// Makes an iterator.
    public func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }

    /// The iterator.
    public struct Iterator: AsyncIteratorProtocol {
        var base: SignalSubscription.Iterator
        /// The next change; skips malformed signals.
        public mutating func next() async throws -> NameOwnerChange? {
            while let message = try await base.next() {
                if let change = NameOwnerChange(message) { return change }
            }
            return nil
        }
    }
}
