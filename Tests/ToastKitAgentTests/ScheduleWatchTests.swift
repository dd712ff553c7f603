// The agent's watch on the user's schedules (``ScheduleWatch``), with inotify and without it (the look every
// interval it falls back to when no inotify instance is left): a real folder, changes made as the store makes them.
import Foundation
import Glibc
import Synchronization
import Testing

@testable import ToastKitAgent

@Suite(.timeLimit(.minutes(1))) struct ScheduleWatchTests {
    /// Writes `text` as the store does: a temporary file in the folder (close-on-exec, as the store's: Foundation's
    /// write is not, and a process another test started meanwhile held it and closed it after the rename, a fourth
    /// `IN_CLOSE_WRITE` of `scheduled.json` that failed this test 1 run in 5), then a rename over `name`.
    private func replace(_ name: String, in folder: String, with text: String) throws {
        let temporary = "\(folder)/.\(name).\(UUID().uuidString)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        #expect(descriptor >= 0)
        let bytes = Array(text.utf8)
        #expect(write(descriptor, bytes, bytes.count) == bytes.count)
        close(descriptor)
        #expect(rename(temporary, "\(folder)/\(name)") == 0)
    }

    /// Each change of the file is told — written, rewritten, removed — and a change to another file of the folder is
    /// not, with inotify and with the look every few milliseconds alike.
    @Test(arguments: [true, false]) func eachChangeOfTheFileIsToldAndNoOtherFiles(inotify: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-watch-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (changes, changed) = AsyncStream<Void>.makeStream()
        let told = Mutex(0)
        let (watch, unwatched) = ScheduleWatch.start(
            folder: folder, watching: { $0 == "scheduled.json" }, inotify: inotify, pollInterval: .milliseconds(5)
        ) { _ in
            told.withLock { $0 += 1 }
            changed.yield()
        }
        defer { watch.stop() }
        #expect((unwatched == nil) == inotify, "\(String(describing: unwatched))")
        var next = changes.makeAsyncIterator()

        // Another file first: had it been told, the count below would be one more.
        try replace("other.json", in: folder, with: "{}")
        try replace("scheduled.json", in: folder, with: #"{"version":1,"entries":[]}"#)
        await next.next()
        try replace("scheduled.json", in: folder, with: #"{"version":1,"entries":[]}"#)
        await next.next()
        #expect(unlink("\(folder)/scheduled.json") == 0)
        await next.next()
        #expect(told.withLock { $0 } == 3)
    }
}
