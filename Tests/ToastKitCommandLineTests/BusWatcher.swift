import DBus
import Foundation
import TestSupport
import Testing

/// A bus monitor that sees every `Notify`/`CloseNotification` call, their replies and every notification signal
/// (the pattern of FreedesktopNotificationsTests, which a test target cannot import).
final class BusWatcher {
    let connection: DBusConnection
    private var iterator: SignalSubscription.Iterator
    private var unclaimed: [DBusMessage] = []

    init(bus address: String) async throws {
        connection = try await DBusConnection.connect(to: .address(address))
        let traffic = try await connection.monitor([
            MatchRule(kind: .methodCall, interface: "org.freedesktop.Notifications"),
            MatchRule(kind: .signal, interface: "org.freedesktop.Notifications"),
            MatchRule(kind: .methodReturn),
        ])
        iterator = traffic.makeAsyncIterator()
    }

    /// The next message for which `predicate` holds.
    func next(where predicate: (DBusMessage) -> Bool) async throws -> DBusMessage {
        if let index = unclaimed.firstIndex(where: predicate) { return unclaimed.remove(at: index) }
        while let message = try await iterator.next() {
            if predicate(message) { return message }
            unclaimed.append(message)
        }
        throw TestEnvironmentError("bus monitor ended")
    }

    /// The next `Notify` call and the id the server answered it with.
    func nextNotifyAndReply() async throws -> (NotifyArguments, UInt32) {
        let call = try await next { $0.kind == .methodCall && $0.member == "Notify" }
        let reply = try await next { $0.kind == .methodReturn && $0.replySerial == call.serial }
        return (try NotifyArguments(call), try reply.arguments("u")[0].uint32Value ?? 0)
    }

    /// The next `CloseNotification` call's id.
    func nextClose() async throws -> UInt32 {
        let message = try await next { $0.kind == .methodCall && $0.member == "CloseNotification" }
        return message.body.first?.uint32Value ?? 0
    }

    /// The next `NotificationClosed` for `id`, with its reason.
    func nextClosed(_ id: UInt32) async throws -> UInt32 {
        let message = try await next { $0.member == "NotificationClosed" && $0.body.first == .uint32(id) }
        return message.body.last?.uint32Value ?? 0
    }

    func stop() { connection.close() }
}

/// The arguments of one `Notify` as a bus monitor saw them.
struct NotifyArguments: Sendable {
    var appName: String
    var replacesID: UInt32
    var appIcon: String
    var summary: String
    var body: String
    var actions: [String]
    var hints: [String: DBusValue]
    var expireTimeout: Int32

    init(_ message: DBusMessage) throws {
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

/// A private bus with an optional fake server, and an environment for the tool that points at it.
struct BusOnlyEnvironment {
    let bus: PrivateBus
    let directory: String
    let environment: [String: String]

    init() throws {
        bus = try PrivateBus.start()
        directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-cli")
        for folder in ["runtime", "state"] {
            try FileManager.default.createDirectory(
                atPath: "\(directory)/\(folder)", withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["XDG_RUNTIME_DIR"] = "\(directory)/runtime"
        environment["XDG_STATE_HOME"] = "\(directory)/state"
        environment["LANGUAGE"] = "en"
        self.environment = environment
    }

    func stop() {
        bus.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension NotificationEnvironment {
    /// The tool's environment on this desktop, with English built-in labels.
    var toolEnvironment: [String: String] {
        var environment = self.environment
        environment["LANGUAGE"] = "en"
        return environment
    }

    /// Waits (a short bounded poll of dunst's own count: dunst says nothing on the bus when it draws) until
    /// dunst displays `count` notifications.
    func waitUntilDisplayed(_ count: Int) async throws {
        for _ in 0..<250 {
            if try displayedCount() == count { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("dunst never displayed \(count) notifications (now \(try displayedCount()))")
    }

    /// Displayed plus waiting notifications.
    func totalCount() throws -> Int {
        let waiting = Int(try dunstctl("count", "waiting").trimmingCharacters(in: .whitespacesAndNewlines))
        return (waiting ?? 0) + (try displayedCount())
    }
}
