import BenchmarkSupport
import DBus
import FreedesktopNotifications
import ToastModel

// P6, the replace storm: one toast id presented N times in a tight loop, as a progress counter would be.

struct ReplaceStormFigures {
    /// The loop of `present` calls alone, per call.
    var presentMicroseconds: Double
    /// The CPU time of the presenting thread in that loop, per call (robust to a busy machine).
    var presentCPUMicroseconds: Double
    /// From the first `present` until the server has the final text (the presenter's `accepted` for the id returns
    /// once every content it took is on the server; the server's `Last()` confirms the text).
    var finalSeconds: Double
    /// `Notify` calls the server received for the storm.
    var notifyCalls: UInt64

    var json: String {
        jsonObject([
            ("present_us_per_call", number(presentMicroseconds)),
            ("present_cpu_us_per_call", number(presentCPUMicroseconds)), ("final_ms", number(finalSeconds * 1000)),
            ("notify_calls", String(notifyCalls)),
        ])
    }
}

extension ServerControl {
    /// The last `Notify` the server received: its arrival (CLOCK_MONOTONIC ns), id and summary.
    func last() async throws -> (nanoseconds: UInt64, id: UInt32, summary: String) {
        let reply = try await connection.call(
            DBusMethodCall(
                destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                interface: "org.toastkit.Bench", member: "Last"))
        let values = try reply.arguments("tus")
        guard let stamp = values[0].uint64Value, let id = values[1].uint32Value, let summary = values[2].stringValue
        else { throw BenchmarkError("Last answered no (tus)") }
        return (stamp, id, summary)
    }
}

/// Presents one id `calls` times (after `warmup` untimed rounds) and reports the cost and the server's view.
func replaceStorm(bus: BusAddress, control: ServerControl, calls: Int, warmup: Int) async throws -> ReplaceStormFigures
{
    let presenter = DesktopNotificationPresenter(
        configuration: PresenterConfiguration(appName: "toastkit-benchmark", bus: bus))
    let center = ToastCenter(defaultDuration: .seconds(3600), presenter: presenter, laterStore: nil)
    defer { presenter.disconnect() }
    func storm(_ round: Int, _ count: Int) async throws -> (
        present: Duration, cpu: Double, final: Duration, text: String
    ) {
        let start = ContinuousClock.now
        let cpu = threadCPUMicroseconds()
        for index in 0..<count {
            center.present(ToastMessage(id: "progress", title: "Round \(round): \(index + 1) of \(count)"))
        }
        let presentCPU = threadCPUMicroseconds() - cpu
        let presented = ContinuousClock.now
        _ = try await acceptedWithRetry(presenter: presenter, id: "progress")
        return (presented - start, presentCPU, ContinuousClock.now - start, "Round \(round): \(count) of \(count)")
    }
    if warmup > 0 { _ = try await storm(0, warmup) }
    let before = try await control.stats().notifies
    let (present, cpu, final, text) = try await storm(1, calls)
    let after = try await control.stats().notifies
    let last = try await control.last()
    guard last.summary == text else {
        throw BenchmarkError("the server's last text is \"\(last.summary)\", not \"\(text)\"")
    }
    return ReplaceStormFigures(
        presentMicroseconds: present.microseconds / Double(calls), presentCPUMicroseconds: cpu / Double(calls),
        finalSeconds: final.microseconds / 1e6,
        notifyCalls: after - before)
}

extension Duration {
    var microseconds: Double {
        Double(components.seconds) * 1e6 + Double(components.attoseconds) / 1e12
    }
}
