import BenchmarkSupport
import DBus
import FreedesktopNotifications
import ToastModel

// P2: N presents, sequential (each awaited until the server accepted it) and pipelined (up to W in flight).

extension Figures {
    var json: String {
        jsonObject([
            ("calls_per_s", number(callsPerSecond)), ("median_us", number(medianMicroseconds)),
            ("p99_us", number(p99Microseconds)), ("cpu_us_per_call", number(cpuMicrosecondsPerCall)),
        ])
    }
}

// MARK: Through the library: ToastCenter + DesktopNotificationPresenter

/// Presents toasts on a center whose presenter is the desktop one; a call is "accepted" when
/// `presenter.accepted(id)` returns the server's id. Toasts stay up (long duration, room for all) until `settle`
/// dismisses them all and waits until the server got every CloseNotification.
final class LibraryClient: Sendable {
    let center: ToastCenter
    let presenter: DesktopNotificationPresenter
    let control: ServerControl
    private let round: Int

    init(center: ToastCenter, presenter: DesktopNotificationPresenter, control: ServerControl, round: Int) {
        self.center = center
        self.presenter = presenter
        self.control = control
        self.round = round
    }

    static func makeCenter(bus: BusAddress, maxVisible: Int) -> (ToastCenter, DesktopNotificationPresenter) {
        let presenter = DesktopNotificationPresenter(
            configuration: PresenterConfiguration(appName: "toastkit-benchmark", bus: bus))
        let center = ToastCenter(
            defaultDuration: .seconds(3600), maxVisible: maxVisible, presenter: presenter, laterStore: nil)
        return (center, presenter)
    }

    func id(_ index: Int) -> String { "r\(round)-\(index)" }

    func present(_ index: Int) {
        center.present(
            ToastMessage(
                id: id(index), status: .normal, title: "Benchmark \(index)", message: "A toast from the benchmark"))
    }

    func accepted(_ index: Int) async throws {
        _ = try await acceptedWithRetry(presenter: presenter, id: id(index))
    }

    /// Dismisses every toast and waits until the server got `calls` more CloseNotification calls (untimed).
    func settle(after calls: Int) async throws {
        let closes = try await control.stats().closes
        center.dismissAll()
        try await control.waitForCloses(atLeast: closes + UInt64(calls))
    }

    /// Present, then wait until accepted; one toast after another.
    func sequential(calls: Int, measureLatency: Bool) async throws -> Figures {
        let figures = try await sequentialLoop(calls: calls, measureLatency: measureLatency) { index in
            present(index)
            try await accepted(index)
        }
        try await settle(after: calls)
        return figures
    }

    /// At most `window` toasts not yet accepted: toast i is presented after toast i − window was accepted.
    /// With `window` ≥ `calls` it is a burst: all presented at once, then all awaited.
    func pipelined(calls: Int, window: Int) async throws -> Figures {
        let figures = try await timed(calls: calls) {
            for index in 0..<calls {
                if index >= window { try await accepted(index - window) }
                present(index)
            }
            for index in max(0, calls - window)..<calls { try await accepted(index) }
        }
        try await settle(after: calls)
        return figures
    }
}

/// `presenter.accepted(id)`, retried while the center has not handed the toast to the presenter yet (another
/// thread may be carrying out the center's work when `present` returns).
func acceptedWithRetry(presenter: DesktopNotificationPresenter, id: String) async throws -> UInt32 {
    var attempts = 0
    while true {
        do {
            return try await presenter.accepted(id)
        } catch let error as PresentationError where error.kind == .notPresented && attempts < 10_000 {
            attempts += 1
            await Task.yield()
        }
    }
}

// MARK: Raw Notify through NotificationsClient (the wire without the model)

struct RawClient: Sendable {
    let client: NotificationsClient

    init(connection: DBusConnection) {
        client = NotificationsClient(connection: connection)
    }

    func call(_ index: Int) async throws {
        let call = NotifyCall(
            appName: "toastkit-benchmark", summary: "Benchmark \(index)", body: "A toast from the benchmark",
            hints: ["urgency": .byte(1)], expireTimeout: 4000)
        guard try await client.notify(call).id != 0 else { throw BenchmarkError("Notify answered id 0") }
    }

    func sequential(calls: Int, measureLatency: Bool) async throws -> Figures {
        try await sequentialLoop(calls: calls, measureLatency: measureLatency) { try await call($0) }
    }

    /// Up to `window` calls in flight: a task group refilled as calls finish (as dbus-benchmark does).
    func pipelined(calls: Int, window: Int) async throws -> Figures {
        try await pipelinedLoop(calls: calls, window: window) { try await call($0) }
    }
}
