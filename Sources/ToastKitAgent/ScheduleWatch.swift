import Dispatch
import Glibc
import Synchronization

/// Tells the agent when the user's `scheduled.json` changes (inotify on its folder): another session's agent
/// scheduled, cancelled, claimed or gave back a toast, or `close --id` changed the file with no agent. Every agent of
/// the user then holds what the file holds, not only what it read at its start (``ToastAgent``'s reconcile).
///
/// Without inotify (none of the user's `fs.inotify.max_user_instances` left, an old kernel) it looks at
/// the file every ``pollInterval`` instead: its identity, size and times, so a change is seen a little later.
final class ScheduleWatch: Sendable {
    private let source: Mutex<(any DispatchSourceProtocol)?>

    /// How often the file is looked at when its folder cannot be watched.
    static let pollInterval = Duration.seconds(2)

    /// Watches `folder` for changes to the file `name` in it, and calls `changed` (on a queue of its own, one call at a
    /// time) after each batch of them. With inotify when it can (`inotify` false: never, for tests); otherwise by
    /// looking every `pollInterval`, and `unwatched` says why the folder could not be watched.
    static func start(
        folder: String, name: String, inotify: Bool = true, pollInterval: Duration = pollInterval,
        changed: @escaping @Sendable () -> Void
    ) -> (watch: ScheduleWatch, unwatched: WatchError?) {
        let queue = DispatchQueue(label: "org.toastkit.agent.schedule-watch")
        let unwatched: WatchError
        switch inotify ? watch(folder) : .failure(WatchError(errno: ENOSYS)) {
        case .success(let descriptor):
            return (
                ScheduleWatch(source: reader(of: descriptor, mentioning: name, queue: queue, changed: changed)), nil
            )
        case .failure(let error): unwatched = error
        }
        let looker = looker(at: "\(folder)/\(name)", every: pollInterval, queue: queue, changed: changed)
        return (ScheduleWatch(source: looker), unwatched)
    }

    /// An inotify descriptor watching `folder`.
    private static func watch(_ folder: String) -> Result<Int32, WatchError> {
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
        return .success(descriptor)
    }

    /// Reads the inotify `descriptor`'s events, and calls `changed` after a batch that names `name`.
    private static func reader(
        of descriptor: Int32, mentioning name: String, queue: DispatchQueue, changed: @escaping @Sendable () -> Void
    ) -> sending any DispatchSourceProtocol {
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler {
            if Self.drain(descriptor, mentioning: name) { changed() }
        }
        source.setCancelHandler { close(descriptor) }
        source.resume()
        return source
    }

    /// Looks at the file `path` every `interval`, and calls `changed` when what it sees differs from the last look.
    private static func looker(
        at path: String, every interval: Duration, queue: DispatchQueue, changed: @escaping @Sendable () -> Void
    ) -> sending any DispatchSourceProtocol {
        let last = Mutex(Look(path))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds =
            Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        timer.setEventHandler {
            let now = Look(path)
            let differs = last.withLock { last in
                defer { last = now }
                return last != now
            }
            if differs { changed() }
        }
        timer.resume()
        return timer
    }

    private init(source: sending any DispatchSourceProtocol) {
        self.source = Mutex(source)
    }

    /// What a look at the file shows: whether it is there, which file it is, its size and times (a rewrite by rename
    /// is another file; one in place changes its times).
    private struct Look: Equatable {
        var present = false
        var device: UInt = 0
        var inode: UInt = 0
        var size = 0
        var modified = [0, 0]
        var changed = [0, 0]

        init(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return }
            present = true
            device = UInt(info.st_dev)
            inode = UInt(info.st_ino)
            size = Int(info.st_size)
            modified = [info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
            changed = [info.st_ctim.tv_sec, info.st_ctim.tv_nsec]
        }
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
