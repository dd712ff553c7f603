import DBus
import FreedesktopNotifications
import Synchronization
import TestSupport
import Testing
import ToastKitTesting
import ToastModel

/// Suites whose tests run one at a time: the 10,000-toast flood would starve the real-time checks of the dunst
/// tests (a 1 s toast must leave the server within ±0.5 s) if they ran side by side on a 2-core machine.
@Suite(.serialized) enum OneAtATime {}

/// A center wired to a desktop presenter on a test bus, with its events collected in order.
final class DesktopHarness: Sendable {
    let center: ToastCenter
    let presenter: DesktopNotificationPresenter
    private let stream: AsyncStream<ToastEvent>
    private let seen = Mutex<[ToastEvent]>([])

    init(
        busAddress: String,
        clock: some Clock<Duration> = ContinuousClock(),
        defaultDuration: ToastDuration = 30,
        maxVisible: Int = 1,
        configure: (inout DesktopPresenterConfiguration) -> Void = { _ in }
    ) {
        var configuration = DesktopPresenterConfiguration(
            appName: "toastkit-tests", bus: .address(busAddress), callTimeout: .seconds(5))
        configure(&configuration)
        presenter = DesktopNotificationPresenter(configuration: configuration)
        center = ToastCenter(
            defaultDuration: defaultDuration, maxVisible: maxVisible, presenter: presenter, clock: clock,
            laterStore: InMemoryLaterStore())
        stream = center.events()
    }

    /// Waits for the next event that satisfies `predicate`, remembering every event seen on the way.
    func next(
        _ description: String = "event",
        where predicate: (ToastEvent) -> Bool
    ) async throws -> ToastEvent {
        for await event in stream {
            seen.withLock { $0.append(event) }
            if predicate(event) { return event }
        }
        throw TestEnvironmentError("the event stream ended before \(description)")
    }

    /// Waits for the terminal event of `id`.
    func outcome(of id: String) async throws -> ToastOutcome {
        let event = try await next("end of \(id)") { if case .ended(id, _) = $0 { true } else { false } }
        guard case .ended(_, let outcome) = event else { throw TestEnvironmentError("unreachable") }
        return outcome
    }

    var events: [ToastEvent] { seen.withLock { $0 } }
}

/// A bus monitor that sees every `Notify`/`CloseNotification` call and every notification signal.
final class BusWatcher {
    let connection: DBusConnection
    private var iterator: SignalSubscription.Iterator
    /// Messages read while looking for another one, in arrival order.
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

    /// The next `Notify` call's arguments.
    func nextNotify() async throws -> NotifyArguments {
        let message = try await next { $0.kind == .methodCall && $0.member == "Notify" }
        return try NotifyArguments(message)
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

/// An ordered record of what ran, shared by handlers and observers.
final class CallLog: Sendable {
    private let entries = Mutex<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}
