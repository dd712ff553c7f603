import Dispatch
import Glibc
import Synchronization

/// Tells the agent when the user's `scheduled.json` changes (inotify on its folder): another session's agent
/// scheduled, cancelled, claimed or gave back a toast, or `close --id` changed the file with no agent. Every agent of
/// the user then holds what the file holds, not only what it read at its start (``ToastAgent``'s reconcile).
///
/// Best effort: without inotify (no instance left, an old kernel) the agent says so once and works as before, from
/// what it read at start and what its own callers tell it.
final class ScheduleWatch: Sendable {
    private let source: Mutex<(any DispatchSourceRead)?>

    /// Watches `folder` for changes to the file `name` in it, and calls `changed` (on a queue of its own, one call at a
    /// time) after each batch of them. Nil, with the reason, when the folder cannot be watched.
    static func start(
        folder: String, name: String, changed: @escaping @Sendable () -> Void
    ) -> Result<ScheduleWatch, WatchError> {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return .failure(WatchError(errno: errno)) }
        // Not IN_CREATE: a file just created is not written yet, and a half-written file read back would be refused
        // and set aside. Its writer's close (or the store's rename) says when it is whole.
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
        guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
            let error = WatchError(errno: errno)
            close(descriptor)
            return .failure(error)
        }
        let source = DispatchSource.makeReadSource(
            fileDescriptor: descriptor, queue: DispatchQueue(label: "org.toastkit.agent.schedule-watch"))
        source.setEventHandler {
            if Self.drain(descriptor, mentioning: name) { changed() }
        }
        source.setCancelHandler { close(descriptor) }
        source.resume()
        return .success(ScheduleWatch(source: source))
    }

    private init(source: sending any DispatchSourceRead) {
        self.source = Mutex(source)
    }

    /// Stops watching (no call to `changed` starts after this returns… or soon after: one under way finishes).
    func stop() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
    }

    /// Reads every pending event; whether one names `name`, or events were lost (the kernel's queue overflowed:
    /// anything may have changed).
    private static func drain(_ descriptor: Int32, mentioning name: String) -> Bool {
        var mentioned = false
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return mentioned }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.withUnsafeBytes {
                    $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                }
                let length = Int(event.len)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { mentioned = true }
                let start = offset + header
                let end = min(start + length, count)
                let eventName = String(decoding: buffer[start..<end].prefix { $0 != 0 }, as: UTF8.self)
                if eventName == name { mentioned = true }
                offset = start + length
            }
        }
    }

    /// Why the folder cannot be watched.
    struct WatchError: Error, CustomStringConvertible {
        let errno: Int32
        var description: String { String(cString: strerror(errno)) }
    }
}
