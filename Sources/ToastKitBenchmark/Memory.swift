import BenchmarkSupport
import DBus
import FreedesktopNotifications
import ToastModel

// P4 (library part): resident memory after 1k, 10k, 100k toasts presented and ended.
//
// Toasts go through a center + desktop presenter in batches: a batch of B toasts is presented at once, every one
// is awaited until the server accepted it, then all are dismissed and the batch ends when the server got every
// CloseNotification. After each checkpoint (a cumulative count) the process's VmRSS and VmHWM are read.

struct MemoryPoint {
    var toasts: Int
    var rssKiB: Int
    var hwmKiB: Int
    var seconds: Double

    var json: String {
        jsonObject([
            ("toasts", String(toasts)), ("rss_kib", String(rssKiB)), ("hwm_kib", String(hwmKiB)),
            ("seconds", number(seconds)),
        ])
    }
}

func memoryGrowth(bus: BusAddress, control: ServerControl, checkpoints: [Int], batch: Int) async throws
    -> (baseline: MemoryPoint, points: [MemoryPoint])
{
    let (center, presenter) = LibraryClient.makeCenter(bus: bus, maxVisible: batch)
    defer { presenter.disconnect() }
    let client = LibraryClient(center: center, presenter: presenter, control: control, round: 0)
    // Connect and warm up with one batch first: the baseline is a process that has shown toasts before.
    _ = try await client.pipelined(calls: batch, window: batch)
    let started = monotonicMicroseconds()
    let first = residentKiB()
    let baseline = MemoryPoint(toasts: 0, rssKiB: first.rss, hwmKiB: first.hwm, seconds: 0)
    var points = [MemoryPoint]()
    var done = 0
    var round = 1
    for checkpoint in checkpoints.sorted() {
        while done < checkpoint {
            let count = min(batch, checkpoint - done)
            let batchClient = LibraryClient(center: center, presenter: presenter, control: control, round: round)
            _ = try await batchClient.pipelined(calls: count, window: count)
            done += count
            round += 1
        }
        let now = residentKiB()
        points.append(
            MemoryPoint(
                toasts: done, rssKiB: now.rss, hwmKiB: now.hwm, seconds: (monotonicMicroseconds() - started) / 1e6))
    }
    return (baseline, points)
}

// P5: CPU time of a process holding one indefinite toast.

func idleCPU(bus: BusAddress, seconds: Double) async throws -> (cpuMicroseconds: Double, wallSeconds: Double) {
    let (center, presenter) = LibraryClient.makeCenter(bus: bus, maxVisible: 1)
    defer { presenter.disconnect() }
    let id = center.present(ToastMessage(id: "idle", title: "Holding", duration: .indefinite))
    _ = try await acceptedWithRetry(presenter: presenter, id: id)
    try await Task.sleep(for: .milliseconds(200))  // let the start-up work settle
    let cpu = processCPUMicroseconds()
    let started = monotonicMicroseconds()
    try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
    let result = (processCPUMicroseconds() - cpu, (monotonicMicroseconds() - started) / 1e6)
    center.dismiss(id: id)
    return result
}
