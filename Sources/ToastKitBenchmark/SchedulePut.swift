// P10, the user's schedules: the cost of one `ScheduleStore.put` (what the agent does for a `send --in`, `--at` or a
// snooze) with no other schedule kept, and with 10,000 others (issue 39: at most 1.2× the first). No bus needed.
import BenchmarkSupport
import Foundation
import Glibc
import ToastKitAgent

/// What `schedules` measured: the put's median, 90th percentile and mean, in µs, with none and with `existing` others.
struct SchedulePutFigures {
    var existing: Int
    var calls: Int
    var empty: [Double]
    var full: [Double]
    /// How long the `existing` schedules took to write, one `put` each (ms).
    var fillMilliseconds: Double

    var json: String {
        let empty = empty.sorted()
        let full = full.sorted()
        let ratio = percentile(full, 0.5) / max(percentile(empty, 0.5), 0.001)
        return jsonObject([
            ("existing", String(existing)), ("calls", String(calls)),
            ("put_us_empty", number(percentile(empty, 0.5))), ("put_us_empty_p90", number(percentile(empty, 0.9))),
            ("put_us_empty_mean", number(empty.reduce(0, +) / Double(max(empty.count, 1)))),
            ("put_us_full", number(percentile(full, 0.5))), ("put_us_full_p90", number(percentile(full, 0.9))),
            ("put_us_full_mean", number(full.reduce(0, +) / Double(max(full.count, 1)))),
            ("ratio", String(format: "%.2f", ratio)), ("fill_ms", number(fillMilliseconds)),
        ])
    }
}

/// A scheduled toast as `send --in 1h` leaves it: a title, a line of text and the kept part of a sender's environment.
private func entry(_ id: String) -> ScheduleStore.Entry {
    var options = SendOptions(title: "Reminder \(id)")
    options.message = .text("Stand up, stretch, and drink a glass of water before the next meeting starts.")
    options.id = id
    var request = AgentRequest(options: options)
    request.environment = [
        "HOME": "/home/user", "PATH": "/usr/local/bin:/usr/bin:/bin", "DISPLAY": ":0", "LANG": "en_US.UTF-8",
    ]
    return ScheduleStore.Entry(id: id, due: Date().timeIntervalSince1970 + 3600, request: request)
}

/// `schedules`: two stores in folders of their own under `TMPDIR`, one empty and one with `existing` schedules; then
/// `calls` timed puts of a new schedule into each, taking turns (so a machine that gets busier costs both alike), each
/// removed again untimed so that the counts stay 0 and `existing`.
func schedulePuts(calls: Int, existing: Int) throws -> SchedulePutFigures {
    let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template = Array("\(base)/toastkit-bench-schedules.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw BenchmarkError("cannot make a folder in \(base)") }
    let root = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: root) }
    func store(_ name: String) throws -> ScheduleStore {
        try ScheduleStore.open(environment: [
            "XDG_STATE_HOME": "\(root)/\(name)/state", "XDG_RUNTIME_DIR": "\(root)/\(name)/runtime",
        ])
    }
    let empty = try store("empty")
    let full = try store("full")
    let filling = monotonicMicroseconds()
    for index in 0..<existing { try full.put(entry("kept-\(index)")) }
    let fillMilliseconds = (monotonicMicroseconds() - filling) / 1000
    guard full.load().count == existing else { throw BenchmarkError("the full store does not hold \(existing)") }
    var figures = SchedulePutFigures(
        existing: existing, calls: calls, empty: [], full: [], fillMilliseconds: fillMilliseconds)
    // A few untimed first: the folders' blocks and the code are warm for both.
    for index in 0..<(calls + 5) {
        for (store, isFull) in [(empty, false), (full, true)] {
            let timed = entry("timed-\(index)")
            let started = monotonicMicroseconds()
            try store.put(timed)
            let elapsed = monotonicMicroseconds() - started
            try store.remove(timed.id)
            guard index >= 5 else { continue }
            if isFull { figures.full.append(elapsed) } else { figures.empty.append(elapsed) }
        }
    }
    return figures
}
