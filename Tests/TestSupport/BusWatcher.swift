public import DBus
public import FreedesktopNotifications
import Synchronization

/// A bus monitor for notification tests: sees every `Notify`/`CloseNotification` call, every reply and every
/// notification signal on a test bus, in order. Messages skipped while looking for another are kept, so a test can
/// ask for them in any order.
public final class BusWatcher {
    /// The monitor's own connection.
    public let connection: DBusConnection
    private let traffic: SignalSubscription
    private var iterator: SignalSubscription.Iterator
    private var timedOut: String?
    /// Messages read while looking for another one, in arrival order.
    private var unclaimed: [DBusMessage] = []
    private var markers: UInt32 = 0

    /// What a watcher sees by default: the notification interface's calls and signals, and every reply.
    public static let notificationTraffic = [
        MatchRule(kind: .methodCall, interface: "org.freedesktop.Notifications"),
        MatchRule(kind: .signal, interface: "org.freedesktop.Notifications"),
        MatchRule(kind: .methodReturn),
        // Plasma's job service, where Plasma draws progress.
        MatchRule(kind: .methodCall, interface: "org.kde.JobViewServerV2"),
        MatchRule(kind: .methodCall, interface: "org.kde.JobViewV3"),
    ]

    /// That, and the notification portal's calls and signals too, to it and to its backend.
    public static let portalTraffic =
        notificationTraffic + [
            MatchRule(kind: .methodCall, interface: "org.freedesktop.portal.Notification"),
            MatchRule(kind: .signal, interface: "org.freedesktop.portal.Notification"),
            MatchRule(kind: .methodCall, interface: "org.freedesktop.impl.portal.Notification"),
        ]

    /// Starts monitoring the bus at `address` for the messages `rules` match.
    public init(bus address: String, rules: [MatchRule] = notificationTraffic) async throws {
        connection = try await DBusConnection.connect(to: .address(address))
        let traffic = try await connection.monitor(rules)
        self.traffic = traffic
        iterator = traffic.makeAsyncIterator()
    }

    /// The next message for which `predicate` holds, within `limit`. A message that never comes fails the test
    /// after `limit` with `description`, instead of hanging it (the monitor ends then: one missing message is
    /// enough to fail).
    public func next(
        _ description: String = "the awaited message", within limit: Duration = .seconds(10),
        where predicate: (DBusMessage) -> Bool
    ) async throws -> DBusMessage {
        if let index = unclaimed.firstIndex(where: predicate) { return unclaimed.remove(at: index) }
        if let timedOut { throw TestEnvironmentError("bus monitor ended after waiting for \(timedOut)") }
        let traffic = self.traffic
        let expired = Atomic(false)
        let deadline = Task {
            try await Task.sleep(for: limit)
            expired.store(true, ordering: .relaxed)
            traffic.cancel()
        }
        defer { deadline.cancel() }
        while let message = try await iterator.next() {
            if predicate(message) { return message }
            unclaimed.append(message)
        }
        if expired.load(ordering: .relaxed) {
            timedOut = description
            throw TestEnvironmentError("no \(description) on the bus within \(limit)")
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
    public func nextNotify() async throws -> NotifyCall {
        try NotifyCall(try await next("Notify call") { Self.isClientCall($0, "Notify") })
    }

    /// The next call `isCall` accepts (named `member` in a failure), and the reply to it.
    private func nextAnswered(
        _ member: String, _ isCall: (DBusMessage) -> Bool
    ) async throws -> (call: DBusMessage, reply: DBusMessage) {
        let call = try await next("\(member) call", where: isCall)
        let reply = try await next("\(member) reply") {
            $0.kind == .methodReturn && $0.replySerial == call.serial && $0.destination == call.sender
        }
        return (call, reply)
    }

    /// The next `Notify` call and the id the server answered it with.
    public func nextNotifyAndReply() async throws -> (NotifyCall, UInt32) {
        let (call, reply) = try await nextAnswered("Notify") { Self.isClientCall($0, "Notify") }
        return (try NotifyCall(call), try reply.arguments("u")[0].uint32Value ?? 0)
    }

    /// A toast that a `send` showed itself, with no agent running, on a server that sends its signals only to the
    /// last sender (dunst): its `Notify`, then the agent's taking it over — the same notification again, in place
    /// (docs/decisions/0007-hand-over.md). Returns the first, with the id.
    public func nextNotifyTakenOver() async throws -> (NotifyCall, UInt32) {
        let (call, id) = try await nextNotifyAndReply()
        let (again, sameID) = try await nextNotifyAndReply()
        guard again.replacesID == id, sameID == id, again.summary == call.summary else {
            throw TestEnvironmentError(
                "notification \(id) (\(call.summary)) was not taken over in place: next came \(again.summary), "
                    + "replacing \(again.replacesID)")
        }
        return (call, id)
    }

    /// The next `CloseNotification` call's id.
    public func nextClose() async throws -> UInt32 {
        let message = try await next("CloseNotification call") { Self.isClientCall($0, "CloseNotification") }
        return message.body.first?.uint32Value ?? 0
    }

    /// The next client's `CloseNotification` of notification `id` (a close of another one is left for later), and
    /// the id it closed.
    @discardableResult public func nextClose(of id: UInt32) async throws -> UInt32 {
        let message = try await next("CloseNotification of \(id)") {
            Self.isClientCall($0, "CloseNotification") && $0.body.first == .uint32(id)
        }
        return message.body.first?.uint32Value ?? 0
    }

    /// The next view asked of Plasma's job service (`requestView`): its content (the hints) and the path the
    /// service answered.
    public func nextJobView() async throws -> (content: DBusValue, path: String) {
        let (call, reply) = try await nextAnswered("requestView") {
            $0.kind == .methodCall && $0.member == "requestView"
        }
        guard case .objectPath(let path) = try reply.arguments("o")[0] else {
            throw TestEnvironmentError("requestView answered no path")
        }
        return (try call.arguments("sia{sv}")[2], path.rawValue)
    }

    /// The next call of `member` (`update`, `terminate`) on the job view at `path` whose arguments `matching`
    /// accepts (updates may merge: a test waits for the content it expects last), with its arguments.
    public func nextJobViewCall(
        _ member: String, of path: String, matching: ([DBusValue]) -> Bool = { _ in true }
    ) async throws -> [DBusValue] {
        try await next("\(member) of \(path)") {
            $0.kind == .methodCall && $0.member == member && $0.path?.rawValue == path && matching($0.body)
        }.body
    }

    /// The next `NotificationClosed` for `id`, with its reason.
    public func nextClosed(_ id: UInt32) async throws -> UInt32 {
        let message = try await next("NotificationClosed for \(id)") {
            $0.member == "NotificationClosed" && $0.body.first == .uint32(id)
        }
        return message.body.last?.uint32Value ?? 0
    }

    /// Waits until the monitor has seen everything sent on the bus before this call: a marker signal goes out from
    /// `sender` (any connection on the bus) and is awaited. Afterwards ``seen(where:)`` tells what arrived, with no
    /// waiting and no guessing how long a server might take to speak.
    public func sync(from sender: DBusConnection) async throws {
        markers += 1
        let marker = markers
        try sender.emitSignal(
            path: "/org/toastkit/Tests/Marker", interface: "org.freedesktop.Notifications", member: "TestMarker",
            arguments: [.uint32(marker)])
        _ = try await next("the test's marker signal") { $0.member == "TestMarker" && $0.body.first == .uint32(marker) }
    }

    /// The messages seen so far and not yet claimed, for which `predicate` holds (after ``sync(from:)``: everything
    /// sent before it).
    public func seen(where predicate: (DBusMessage) -> Bool) -> [DBusMessage] {
        unclaimed.filter(predicate)
    }

    /// Stops monitoring.
    public func stop() { connection.close() }
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
            if try await displayedCount() == count { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestEnvironmentError("dunst never displayed \(count) notifications (now \(try await displayedCount()))")
    }

    /// Displayed plus waiting notifications on dunst.
    public func totalCount() async throws -> Int {
        let waiting = Int(try await dunstctl("count", "waiting").trimmingCharacters(in: .whitespacesAndNewlines))
        return (waiting ?? 0) + (try await displayedCount())
    }
}
