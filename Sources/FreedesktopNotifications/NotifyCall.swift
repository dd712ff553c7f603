public import DBus

/// The arguments of one `Notify` call, `(susssasa{sv}i)`, as plain fields: the one codec for `Notify`, both ways.
/// The desktop presenter and the blocking sender encode with ``arguments``; `toastkit listen`, the tests' bus
/// watcher and fake server decode with ``init(_:)``.
public struct NotifyCall: Sendable, Hashable {
    /// `app_name`.
    public var appName: String
    /// `replaces_id`: the server id to update in place, or 0 for a new notification.
    public var replacesID: UInt32
    /// `app_icon`: an icon name or `file://` URI, or empty.
    public var appIcon: String
    /// `summary`.
    public var summary: String
    /// `body`.
    public var body: String
    /// `actions`, as (key, label) pairs in order.
    public var actions: [(key: String, label: String)]
    /// `hints`.
    public var hints: [String: DBusValue]
    /// `expire_timeout` in milliseconds: -1 server default, 0 never.
    public var expireTimeout: Int32

    /// Creates the call.
    public init(
        appName: String,
        replacesID: UInt32 = 0,
        appIcon: String = "",
        summary: String,
        body: String = "",
        actions: [(key: String, label: String)] = [],
        hints: [String: DBusValue] = [:],
        expireTimeout: Int32 = -1
    ) {
        self.appName = appName
        self.replacesID = replacesID
        self.appIcon = appIcon
        self.summary = summary
        self.body = body
        self.actions = actions
        self.hints = hints
        self.expireTimeout = expireTimeout
    }

    /// Decodes the body of a `Notify` call (a message seen by a monitor, or received by a server).
    ///
    /// - Throws: `DBusError` `InvalidSignature` when the body is not `(susssasa{sv}i)`, `InvalidArgs` when the
    ///   action list has an odd number of strings.
    public init(_ message: DBusMessage) throws(DBusError) {
        let values = try message.arguments("susssasa{sv}i")
        let flat = values[5].stringsValue ?? []
        guard flat.count.isMultiple(of: 2) else {
            throw DBusError(
                name: DBusError.Name.invalidArgs,
                message: "Notify actions: \(flat.count) strings, not key and label pairs")
        }
        self.init(
            appName: values[0].stringValue ?? "", replacesID: values[1].uint32Value ?? 0,
            appIcon: values[2].stringValue ?? "", summary: values[3].stringValue ?? "",
            body: values[4].stringValue ?? "",
            actions: stride(from: 0, to: flat.count, by: 2).map { (flat[$0], flat[$0 + 1]) },
            hints: values[6].variantDictionaryValue ?? [:], expireTimeout: values[7].int32Value ?? -1)
    }

    /// The actions as the wire carries them: key, label, key, label…
    public var actionList: [String] { actions.flatMap { [$0.key, $0.label] } }

    /// The D-Bus arguments, hints sorted by name so the same call always makes the same message.
    public var arguments: [DBusValue] {
        [
            .string(appName), .uint32(replacesID), .string(appIcon), .string(summary), .string(body),
            .strings(actionList),
            .variantDictionary(hints.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
            .int32(expireTimeout),
        ]
    }

    /// Equal when every argument is equal.
    public static func == (lhs: NotifyCall, rhs: NotifyCall) -> Bool { lhs.arguments == rhs.arguments }

    /// Hashes the arguments.
    public func hash(into hasher: inout Hasher) { hasher.combine(arguments) }
}
