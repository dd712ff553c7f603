import DBus
import FreedesktopNotifications
import Synchronization
import TestSupport
import Testing
import ToastKitTesting
import ToastModel

/// A center wired to a desktop presenter on a test bus, with its events collected in order.
final class DesktopHarness: Sendable {
    let center: ToastCenter
    let presenter: DesktopNotificationPresenter
    private let log: CenterEventLog

    init(
        busAddress: String,
        clock: some Clock<Duration> = ContinuousClock(),
        defaultDuration: ToastDuration = 30,
        maxVisible: Int = 1,
        configure: (inout PresenterConfiguration) -> Void = { _ in }
    ) {
        var configuration = PresenterConfiguration(
            appName: "toastkit-tests", bus: .address(busAddress), callTimeout: .seconds(5))
        configure(&configuration)
        presenter = DesktopNotificationPresenter(configuration: configuration)
        center = ToastCenter(
            defaultDuration: defaultDuration, maxVisible: maxVisible, presenter: presenter, clock: clock,
            laterStore: InMemoryLaterStore())
        log = CenterEventLog(center)
    }

    /// Waits for the next event (after those earlier calls returned) that satisfies `predicate`, within `limit`;
    /// fails with `description` instead of hanging when it does not come.
    func next(
        _ description: String = "event", within limit: Duration = .seconds(15),
        where predicate: @escaping @Sendable (ToastEvent) -> Bool
    ) async throws -> ToastEvent {
        try await log.next(description, within: limit, where: predicate)
    }

    /// Waits for the terminal event of `id`.
    func outcome(of id: String, within limit: Duration = .seconds(15)) async throws -> ToastOutcome {
        try await log.outcome(of: id, within: limit)
    }

    /// Every event so far.
    var events: [ToastEvent] { log.events }
}

/// A center's events, collected in order from the moment it is made, with bounded waits for the next one.
final class CenterEventLog: Sendable {
    private struct Waiter {
        var predicate: @Sendable (ToastEvent) -> Bool
        var continuation: CheckedContinuation<ToastEvent?, Never>
    }

    private struct State {
        /// Every event so far, in order.
        var seen: [ToastEvent] = []
        /// How many of `seen` earlier `next` calls consumed (each call looks only at later ones).
        var consumed = 0
        var waiter: (id: UInt64, Waiter)?
        var nextWaiter: UInt64 = 0
        var ended = false
    }

    /// The events, behind a lock of their own so the collecting task does not keep the harness alive.
    private final class Events: Sendable {
        let state = Mutex(State())
    }

    private let log = Events()
    private let collector: Task<Void, Never>

    init(_ center: ToastCenter) {
        let stream = center.events()
        let log = self.log
        collector = Task {
            for await event in stream { Self.arrived(event, log) }
            let waiter = log.state.withLock { state in
                state.ended = true
                defer { state.waiter = nil }
                return state.waiter?.1
            }
            waiter?.continuation.resume(returning: nil)
        }
    }

    deinit { collector.cancel() }

    private static func arrived(_ event: ToastEvent, _ log: Events) {
        let waiter = log.state.withLock { state -> Waiter? in
            state.seen.append(event)
            guard let (_, waiter) = state.waiter, waiter.predicate(event) else { return nil }
            state.consumed = state.seen.count
            state.waiter = nil
            return waiter
        }
        waiter?.continuation.resume(returning: event)
    }

    /// Waits for the next event (after those earlier calls returned) that satisfies `predicate`, within `limit`;
    /// fails with `description` instead of hanging when it does not come.
    func next(
        _ description: String = "event", within limit: Duration = .seconds(15),
        where predicate: @escaping @Sendable (ToastEvent) -> Bool
    ) async throws -> ToastEvent {
        let log = self.log
        let id = log.state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let deadline = Task {
            try await Task.sleep(for: limit)
            let waiter = log.state.withLock { state -> Waiter? in
                guard let current = state.waiter, current.id == id else { return nil }
                state.waiter = nil
                return current.1
            }
            waiter?.continuation.resume(returning: nil)
        }
        defer { deadline.cancel() }
        let event = await withCheckedContinuation { (continuation: CheckedContinuation<ToastEvent?, Never>) in
            let ready = log.state.withLock { state -> ToastEvent?? in
                if let index = state.seen[state.consumed...].firstIndex(where: predicate) {
                    state.consumed = index + 1
                    return .some(state.seen[index])
                }
                if state.ended { return .some(nil) }
                state.waiter = (id, Waiter(predicate: predicate, continuation: continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        guard let event else {
            throw TestEnvironmentError("no \(description) within \(limit); events so far: \(events)")
        }
        return event
    }

    /// Waits for the terminal event of `id`.
    func outcome(of id: String, within limit: Duration = .seconds(15)) async throws -> ToastOutcome {
        let event = try await next("end of \(id)", within: limit) {
            if case .ended(id, _) = $0 { true } else { false }
        }
        guard case .ended(_, let outcome) = event else { throw TestEnvironmentError("unreachable") }
        return outcome
    }

    /// Every event so far.
    var events: [ToastEvent] { log.state.withLock { $0.seen } }
}
