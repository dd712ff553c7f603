import BenchmarkSupport
import DBus
import FreedesktopNotifications
import Synchronization
import ToastModel

// P3: the server emits ActionInvoked → the action's handler runs in this process.
//
// Each iteration presents an indefinite toast whose tap action records CLOCK_MONOTONIC when its handler runs,
// waits until the server accepted it, asks the instant server (on a second connection) to emit
// ActionInvoked(id, "default"), and takes handler time − the server's own stamp, taken just before it queued the
// signal. Both are CLOCK_MONOTONIC on the same machine. The toast then ends (the action's effect) and the next
// iteration waits until its CloseNotification reached the server, so iterations do not overlap.
//
// For comparison, "wire only" does the same through the D-Bus layer alone: a Notify on a plain connection, then the
// time until that connection's signal subscription yields the ActionInvoked message.

struct LatencyFigures {
    var samples: [Double]  // µs, sorted

    var json: String {
        jsonObject([
            ("samples", String(samples.count)), ("median_us", number(percentile(samples, 0.5))),
            ("p90_us", number(percentile(samples, 0.9))), ("p99_us", number(percentile(samples, 0.99))),
            ("max_us", number(samples.last)),
        ])
    }
}

func actionLatencyThroughLibrary(bus: BusAddress, control: ServerControl, iterations: Int, warmup: Int)
    async throws -> LatencyFigures
{
    let (center, presenter) = LibraryClient.makeCenter(bus: bus, maxVisible: 1)
    defer { presenter.disconnect() }
    var samples = [Double]()
    samples.reserveCapacity(iterations)
    for iteration in 0..<(warmup + iterations) {
        let latch = Latch()
        let id = "action-\(iteration)"
        let open = ToastAction(id: "open", title: "Open") { _ in latch.fire(monotonicNanoseconds()) }
        let closesBefore = try await control.stats().closes
        center.present(ToastMessage(id: id, title: "Action \(iteration)", duration: .indefinite, tapAction: open))
        let serverID = try await acceptedWithRetry(presenter: presenter, id: id)
        let emitted = try await control.emitAction(id: serverID, key: "default")
        let handled = await latch.wait(timeout: .seconds(5))
        guard handled != 0 else { throw BenchmarkError("the action handler did not run within 5 s") }
        if iteration >= warmup { samples.append(Double(Int64(handled) - Int64(emitted)) / 1e3) }
        try await control.waitForCloses(atLeast: closesBefore + 1)
    }
    return LatencyFigures(samples: samples.sorted())
}

func actionLatencyOnWire(bus: BusAddress, control: ServerControl, iterations: Int, warmup: Int)
    async throws -> LatencyFigures
{
    let connection = try await DBusConnection.connect(to: bus)
    defer { connection.close() }
    let client = NotificationsClient(connection: connection)
    let signals = try await connection.signals(
        matching: MatchRule(interface: NotificationsClient.interface, member: "ActionInvoked"))
    let latches = Mutex<[UInt32: Latch]>([:])
    // Stamps each signal as the subscription yields it, as a listener in an app would see it.
    let listener = Task {
        for try await message in signals {
            let received = monotonicNanoseconds()
            guard case .actionInvoked(let id, _)? = NotificationSignal(message) else { continue }
            latches.withLock { $0.removeValue(forKey: id) }?.fire(received)
        }
    }
    defer { listener.cancel() }
    var samples = [Double]()
    samples.reserveCapacity(iterations)
    for iteration in 0..<(warmup + iterations) {
        let id = try await client.notify(NotifyCall(appName: "toastkit-benchmark", summary: "Wire \(iteration)")).id
        let latch = Latch()
        latches.withLock { $0[id] = latch }
        let emitted = try await control.emitAction(id: id, key: "default")
        let received = await latch.wait(timeout: .seconds(5))
        guard received != 0 else { throw BenchmarkError("ActionInvoked did not arrive within 5 s") }
        if iteration >= warmup { samples.append(Double(Int64(received) - Int64(emitted)) / 1e3) }
        try await client.closeNotification(id: id)
    }
    return LatencyFigures(samples: samples.sorted())
}
