import DBus
import Foundation
import FreedesktopNotifications
import Synchronization
import TestSupport
import Testing
import ToastKitTesting
import ToastModel

/// Something a log waited for that did not come in time (or the log ended first).
struct MissedEvent: Error, CustomStringConvertible {
    let description: String
}

/// An append-only, ordered record of things that happen (bus messages, toast events), which tests await with a
/// deadline: `next(_:within:where:)` returns the first unclaimed entry that matches, now or when it arrives.
///
/// The deadline turns a missing event into a failure that names it, instead of a test that hangs until its time
/// limit; it never delays an event that comes.
final class AwaitableLog<Element: Sendable>: Sendable {
    /// One entry and when it arrived.
    struct Entry: Sendable {
        let value: Element
        let at: ContinuousClock.Instant
    }

    private struct Waiter {
        let id: Int
        let predicate: @Sendable (Element) -> Bool
        let continuation: CheckedContinuation<Entry, any Error>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var entries: [Entry] = []
        var claimed: [Bool] = []
        var waiters: [Waiter] = []
        var nextWaiter = 0
        var cancelled: Set<Int> = []
        var ended: String?
    }

    private let state = Mutex(State())

    /// Adds an entry and hands it to the first waiter it matches.
    func append(_ value: Element) {
        let entry = Entry(value: value, at: .now)
        let waiter = state.withLock { state -> Waiter? in
            state.entries.append(entry)
            state.claimed.append(false)
            guard let index = state.waiters.firstIndex(where: { $0.predicate(value) }) else { return nil }
            state.claimed[state.entries.count - 1] = true
            return state.waiters.remove(at: index)
        }
        waiter?.timer?.cancel()
        waiter?.continuation.resume(returning: entry)
    }

    /// Ends the log: every waiter fails with `reason`.
    func end(_ reason: String) {
        let waiters = state.withLock { state -> [Waiter] in
            state.ended = state.ended ?? reason
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            waiter.timer?.cancel()
            waiter.continuation.resume(throwing: MissedEvent(description: reason))
        }
    }

    /// The first unclaimed entry for which `predicate` holds (claiming it), waiting at most `limit` for it.
    func next(
        _ what: String,
        within limit: Duration = .seconds(5),
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async throws -> Entry {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let found = state.withLock { state -> Result<Entry, any Error>? in
                    if let index = state.entries.indices.first(where: {
                        !state.claimed[$0] && predicate(state.entries[$0].value)
                    }) {
                        state.claimed[index] = true
                        return .success(state.entries[index])
                    }
                    if let ended = state.ended { return .failure(MissedEvent(description: "\(what): \(ended)")) }
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    state.waiters.append(Waiter(id: id, predicate: predicate, continuation: continuation))
                    // A deadline for this wait only; cancelled as soon as the entry arrives.
                    let timer = Task { [weak self] in
                        guard (try? await Task.sleep(for: limit)) != nil else { return }
                        self?.giveUp(id, MissedEvent(description: "no \(what) within \(limit)"))
                    }
                    state.waiters[state.waiters.count - 1].timer = timer
                    return nil
                }
                if let found { continuation.resume(with: found) }
            }
        } onCancel: {
            giveUp(id, CancellationError(), rememberIfAbsent: true)
        }
    }

    private func giveUp(_ id: Int, _ error: any Error, rememberIfAbsent: Bool = false) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                // Cancelled before the waiter was registered: it gives up as it registers.
                if rememberIfAbsent { state.cancelled.insert(id) }
                return nil
            }
            return state.waiters.remove(at: index)
        }
        waiter?.timer?.cancel()
        waiter?.continuation.resume(throwing: error)
    }

    /// Every entry so far, in arrival order.
    var all: [Entry] { state.withLock { $0.entries } }
}

/// Runs blocking work (a child process, a kill-and-reap) on a thread of its own, so it never holds one of the few
/// threads of the cooperative pool that four desktops in parallel share.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

// MARK: - The bus

/// A bus monitor: every `org.freedesktop.Notifications` call and signal and every method return on the test bus,
/// including dunst's unicast signals (P2), with arrival times.
final class BusTraffic: Sendable {
    private let connection: DBusConnection
    /// What the monitor saw.
    let log = AwaitableLog<DBusMessage>()

    init(bus address: String) async throws {
        connection = try await DBusConnection.connect(to: .address(address))
        let traffic = try await connection.monitor([
            MatchRule(kind: .methodCall, interface: "org.freedesktop.Notifications"),
            MatchRule(kind: .signal, interface: "org.freedesktop.Notifications"),
            // Plasma's job service: its views are where Plasma draws a progress bar.
            MatchRule(kind: .methodCall, interface: "org.kde.JobViewServerV2"),
            MatchRule(kind: .methodCall, interface: "org.kde.JobViewV3"),
            MatchRule(kind: .methodReturn),
            MatchRule(kind: .error),
        ])
        let log = self.log
        Task {
            do {
                for try await message in traffic { log.append(message) }
                log.end("the bus monitor ended")
            } catch {
                log.end("the bus monitor failed: \(error)")
            }
        }
    }

    /// The next call of `member` addressed to `destination`, and the reply to it.
    private func nextCall(
        _ member: String, to destination: String, within limit: Duration
    ) async throws -> (call: AwaitableLog<DBusMessage>.Entry, reply: AwaitableLog<DBusMessage>.Entry) {
        let call = try await log.next("\(member) call", within: limit) {
            $0.kind == .methodCall && $0.member == member && $0.destination == destination
        }
        let serial = call.value.serial
        let sender = call.value.sender
        let reply = try await log.next("reply to \(member)", within: limit) {
            $0.kind == .methodReturn && $0.replySerial == serial && $0.destination == sender
        }
        return (call, reply)
    }

    /// The next `Notify` call, the server's reply (its id) and the caller's unique name.
    func nextNotify(within limit: Duration = .seconds(5)) async throws -> NotifySeen {
        // Only calls to the well-known name: GNOME Shell's proxy forwards each Notify to the shell with the same
        // interface, and that copy is not the client's.
        let (call, reply) = try await nextCall("Notify", to: "org.freedesktop.Notifications", within: limit)
        let id = try reply.value.arguments("u")[0].uint32Value ?? 0
        return NotifySeen(
            arguments: try NotifyCall(call.value), id: id, caller: call.value.sender ?? "",
            server: reply.value.sender ?? "", at: call.at)
    }

    /// The next job view asked of Plasma's job service (`requestView`): the properties it was asked with, and the
    /// view's path from the reply.
    func nextJobView(within limit: Duration = .seconds(5)) async throws -> (properties: DBusValue, path: String) {
        let (call, reply) = try await nextCall("requestView", to: "org.kde.JobViewServer", within: limit)
        guard case .objectPath(let path) = try reply.value.arguments("o")[0] else {
            throw TestEnvironmentError("requestView answered no path")
        }
        return (try call.value.arguments("sia{sv}")[2], path.rawValue)
    }

    /// The next call of `member` on the job view at `path` that `matching` accepts.
    func nextJobViewCall(
        _ member: String, of path: String, within limit: Duration = .seconds(5),
        matching: @escaping @Sendable (DBusMessage) -> Bool = { _ in true }
    ) async throws -> DBusMessage {
        try await log.next("\(member) of \(path)", within: limit) {
            $0.kind == .methodCall && $0.member == member && $0.path?.rawValue == path && matching($0)
        }.value
    }

    /// The next `CloseNotification(id)` call.
    func nextClose(of id: UInt32, within limit: Duration = .seconds(5)) async throws -> AwaitableLog<DBusMessage>.Entry
    {
        try await log.next("CloseNotification(\(id))", within: limit) {
            $0.kind == .methodCall && $0.member == "CloseNotification" && $0.body.first == .uint32(id)
                && $0.destination == "org.freedesktop.Notifications"
        }
    }

    /// The next `NotificationClosed(id, reason)` signal; returns the reason and when it came.
    func nextClosed(of id: UInt32, within limit: Duration = .seconds(5)) async throws -> (
        reason: UInt32, at: ContinuousClock.Instant
    ) {
        let entry = try await log.next("NotificationClosed(\(id), …)", within: limit) {
            $0.kind == .signal && $0.member == "NotificationClosed" && $0.body.first == .uint32(id)
        }
        return (entry.value.body.count > 1 ? entry.value.body[1].uint32Value ?? 0 : 0, entry.at)
    }

    /// The next `ActionInvoked(id, key)` signal's key.
    func nextActionInvoked(of id: UInt32, within limit: Duration = .seconds(5)) async throws -> String {
        let entry = try await log.next("ActionInvoked(\(id), …)", within: limit) {
            $0.kind == .signal && $0.member == "ActionInvoked" && $0.body.first == .uint32(id)
        }
        return entry.value.body.count > 1 ? entry.value.body[1].stringValue ?? "" : ""
    }

    /// The next `ActivationToken(id, token)` signal's token.
    func nextActivationToken(of id: UInt32, within limit: Duration = .seconds(5)) async throws -> String {
        let entry = try await log.next("ActivationToken(\(id), …)", within: limit) {
            $0.kind == .signal && $0.member == "ActivationToken" && $0.body.first == .uint32(id)
        }
        return entry.value.body.count > 1 ? entry.value.body[1].stringValue ?? "" : ""
    }

    /// Every `NotificationClosed(id, …)` seen so far: reason and sender, in order.
    func closedSignals(of id: UInt32) -> [(reason: UInt32, sender: String)] {
        log.all.compactMap { entry in
            let message = entry.value
            guard message.isClosed(id) else { return nil }
            return (message.body.count > 1 ? message.body[1].uint32Value ?? 0 : 0, message.sender ?? "")
        }
    }

    /// Whether the client called `CloseNotification(id)` before the server's first `NotificationClosed(id, …)`.
    func closedByClientFirst(_ id: UInt32, caller: String) -> Bool {
        for entry in log.all {
            let message = entry.value
            if message.isClosed(id) { return false }
            if message.kind == .methodCall, message.member == "CloseNotification", message.body.first == .uint32(id),
                message.sender == caller
            {
                return true
            }
        }
        return false
    }

    func stop() { connection.close() }
}

/// One `Notify` as the monitor saw it.
struct NotifySeen: Sendable {
    var arguments: NotifyCall
    /// The id the server answered with.
    var id: UInt32
    /// The unique name of the connection that called `Notify` (the presenter's).
    var caller: String
    /// The unique name that answered (the server).
    var server: String
    /// When the call went over the bus.
    var at: ContinuousClock.Instant
}

// MARK: - The center

/// A center wired to a desktop presenter on the test bus, with every event recorded in order.
final class ToastHarness: Sendable {
    let center: ToastCenter
    let presenter: DesktopNotificationPresenter
    let events = AwaitableLog<ToastEvent>()

    init(
        busAddress: String, markup: PresenterConfiguration.Markup = .plainText,
        maximumMessageLength: Int = 64 * 1024, maxVisible: Int = 1, soundPlayer: SoundPlayer = .automatic,
        replyPrompter: ReplyPrompter = .off, settingsEnvironment: [String: String]? = nil
    ) {
        var configuration = PresenterConfiguration(
            appName: "toastkit-conformance", bus: .address(busAddress), callTimeout: .seconds(5), markup: markup,
            maximumMessageLength: maximumMessageLength, pausesWhileScreenLocked: false)
        configuration.soundPlayer = soundPlayer
        configuration.replyPrompter = replyPrompter
        configuration.settingsEnvironment = settingsEnvironment
        presenter = DesktopNotificationPresenter(configuration: configuration)
        center = ToastCenter(
            defaultDuration: 30, maxVisible: maxVisible, presenter: presenter, clock: ContinuousClock(),
            laterStore: InMemoryLaterStore())
        let stream = center.events()
        let events = self.events
        Task {
            for await event in stream { events.append(event) }
            events.end("the center's event stream ended")
        }
    }

    /// The terminal event of `id` and when it came.
    func outcome(of id: String, within limit: Duration = .seconds(5)) async throws -> (
        outcome: ToastOutcome, at: ContinuousClock.Instant
    ) {
        let entry = try await events.next("end of toast \"\(id)\"", within: limit) {
            if case .ended(id, _) = $0 { true } else { false }
        }
        guard case .ended(_, let outcome) = entry.value else { throw MissedEvent(description: "unreachable") }
        return (outcome, entry.at)
    }

    /// How many terminal events `id` has had so far.
    func terminalEvents(of id: String) -> Int {
        events.all.filter { if case .ended(id, _) = $0.value { true } else { false } }.count
    }

    /// The `actionInvoked` event of `id` (its action id and activation token).
    func actionEvent(of id: String, within limit: Duration = .seconds(5)) async throws -> (
        actionID: String, token: String?
    ) {
        let entry = try await events.next("action event of \"\(id)\"", within: limit) {
            if case .actionInvoked(id, _, _) = $0 { true } else { false }
        }
        guard case .actionInvoked(_, let action, let token) = entry.value else {
            throw MissedEvent(description: "unreachable")
        }
        return (action, token)
    }

    /// How many times `id` was presented so far.
    func presentations(of id: String) -> Int {
        events.all.filter { $0.value == .presented(id: id) }.count
    }

    func stop() { presenter.disconnect() }
}
