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
