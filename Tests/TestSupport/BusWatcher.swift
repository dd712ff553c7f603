public import DBus
import Synchronization

/// A bus monitor for notification tests: sees every `Notify`/`CloseNotification` call, every reply and every
/// notification signal on a test bus, in order. Messages skipped while looking for another are kept, so a test can
/// ask for them in any order.
public final class BusWatcher {
    /// The monitor's own connection.
    public let connection: DBusConnection
    private var iterator: SignalSubscription.Iterator
    /// Messages read while looking for another one, in arrival order.
    private var unclaimed: [DBusMessage] = []

    /// Starts monitoring the bus at `address`.
    public init(bus address: String) async throws {
        connection = try await DBusConnection.connect(to: .address(address))
        let traffic = try await connection.monitor([
            MatchRule(kind: .methodCall, interface: "org.freedesktop.Notifications"),
            MatchRule(kind: .signal, interface: "org.freedesktop.Notifications"),
            MatchRule(kind: .methodReturn),
        ])
        iterator = traffic.makeAsyncIterator()
    }

    /// The next message for which `predicate` holds.
    public func next(where predicate: (DBusMessage) -> Bool) async throws -> DBusMessage {
        if let index = unclaimed.firstIndex(where: predicate) { return unclaimed.remove(at: index) }
        while let message = try await iterator.next() {
            if predicate(message) { return message }
            unclaimed.append(message)
        }
        throw TestEnvironmentError("bus monitor ended")
    }

    /// Whether `message` is a client's call of `member` on the notification server (addressed to the well-known
    /// name: GNOME Shell's proxy forwards every call to the shell with the same interface, and those copies are not
    /// a client's).
    private static func isClientCall(_ message: DBusMessage, _ member: String) -> Bool {
        message.kind == .methodCall && message.member == member
            && message.destination == "org.freedesktop.Notifications"
    }

    /// The next `Notify` call's arguments.
    public func nextNotify() async throws -> NotifyArguments {
        try NotifyArguments(try await next { Self.isClientCall($0, "Notify") })
    }

    /// The next `Notify` call and the id the server answered it with.
    public func nextNotifyAndReply() async throws -> (NotifyArguments, UInt32) {
        let call = try await next { Self.isClientCall($0, "Notify") }
        let reply = try await next {
            $0.kind == .methodReturn && $0.replySerial == call.serial && $0.destination == call.sender
        }
        return (try NotifyArguments(call), try reply.arguments("u")[0].uint32Value ?? 0)
    }

    /// The next `CloseNotification` call's id.
    public func nextClose() async throws -> UInt32 {
        let message = try await next { Self.isClientCall($0, "CloseNotification") }
        return message.body.first?.uint32Value ?? 0
    }

    /// The next `NotificationClosed` for `id`, with its reason.
    public func nextClosed(_ id: UInt32) async throws -> UInt32 {
        let message = try await next { $0.member == "NotificationClosed" && $0.body.first == .uint32(id) }
        return message.body.last?.uint32Value ?? 0
    }

    /// Stops monitoring.
    public func stop() { connection.close() }
}

/// The arguments of one `Notify` as a bus monitor saw them.
public struct NotifyArguments: Sendable, Hashable {
    /// `app_name`.
    public var appName: String
    /// `replaces_id`.
    public var replacesID: UInt32
    /// `app_icon`.
    public var appIcon: String
    /// `summary`.
    public var summary: String
    /// `body`.
    public var body: String
    /// `actions` (key, label, key, label…).
    public var actions: [String]
    /// `hints`.
    public var hints: [String: DBusValue]
    /// `expire_timeout` in milliseconds.
    public var expireTimeout: Int32

    /// Reads a `Notify` call.
    public init(_ message: DBusMessage) throws {
        let values = try message.arguments("susssasa{sv}i")
        appName = values[0].stringValue ?? ""
        replacesID = values[1].uint32Value ?? 0
        appIcon = values[2].stringValue ?? ""
        summary = values[3].stringValue ?? ""
        body = values[4].stringValue ?? ""
        actions = values[5].stringsValue ?? []
        hints = values[6].variantDictionaryValue ?? [:]
        expireTimeout = values[7].int32Value ?? 0
    }
}

/// An ordered record of what ran, shared by action handlers, observers and the test.
public final class CallLog: Sendable {
    private let entries = Mutex<[String]>([])
    /// An empty log.
    public init() {}
    /// Adds an entry.
    public func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    /// Every entry, in order.
    public var all: [String] { entries.withLock { $0 } }
}

extension NotificationEnvironment {
    /// Waits until dunst displays `count` notifications. dunst moves a notification from its queue to the screen
    /// on its next loop turn and says nothing on the bus when it does, and `dunstctl action`/`context` act on
    /// displayed ones only; so this polls dunst's own count, briefly and boundedly.
    public func waitUntilDisplayed(_ count: Int) async throws {
        for _ in 0..<250 {
            if try displayedCount() == count { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestEnvironmentError("dunst never displayed \(count) notifications (now \(try displayedCount()))")
    }

    /// Displayed plus waiting notifications on dunst.
    public func totalCount() throws -> Int {
        let waiting = Int(try dunstctl("count", "waiting").trimmingCharacters(in: .whitespacesAndNewlines))
        return (waiting ?? 0) + (try displayedCount())
    }
}
