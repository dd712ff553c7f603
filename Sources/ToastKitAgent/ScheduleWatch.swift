// The agent's watch on the folder of the user's scheduled toasts (``ScheduleStore/folder``): which files of it changed,
// told with inotify, or found by a look at the folder every couple of seconds where inotify cannot be had.
import Dispatch
import Glibc
import Synchronization
import ToastModel

/// Tells the agent which files of the user's scheduled toasts changed (inotify on their folder): another session's
/// agent scheduled, cancelled, claimed or gave back a toast, or `close --id` changed one with no agent. Every agent of
/// the user then holds what the folder holds, not only what it read at its start (``ToastAgent``'s reconcile), and
/// reads again only the files that changed.
///
/// Without inotify (none of the user's `fs.inotify.max_user_instances` left, an old kernel) it looks at the folder
/// every ``pollInterval`` instead — its identity and times, and when they moved (or moved lately) each file's — so a
/// change is seen a little later.
final class ScheduleWatch: Sendable {
    private let source: Mutex<(any DispatchSourceProtocol)?>

    /// How often the folder is looked at when it cannot be watched.
    static let pollInterval = Duration.seconds(2)

    /// Watches `folder` for changes to the files `watching` accepts (by default an entry's, ``ScheduleStore``), and
    /// calls `changed` (on a queue of its own, one call at a time) after each batch of them with their names — nil
    /// when any may have changed (the kernel's queue of events overflowed). With inotify when it can (`inotify` false:
    /// never, for tests); otherwise by looking every `pollInterval`, and `unwatched` says why the folder could not be
    /// watched.
    static func start(
        folder: String, watching: @escaping @Sendable (String) -> Bool = ScheduleStore.isEntryFileName,
        inotify: Bool = true, pollInterval: Duration = pollInterval,
        changed: @escaping @Sendable (Set<String>?) -> Void
    ) -> (watch: ScheduleWatch, unwatched: WatchError?) {
        let queue = DispatchQueue(label: "org.toastkit.agent.schedule-watch")
        let unwatched: WatchError
        switch inotify ? watch(folder) : .failure(WatchError(errno: ENOSYS)) {
        case .success(let descriptor):
            return (
                ScheduleWatch(source: reader(of: descriptor, watching: watching, queue: queue, changed: changed)), nil
            )
        case .failure(let error): unwatched = error
        }
        let looker = looker(at: folder, watching: watching, every: pollInterval, queue: queue, changed: changed)
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

    /// Reads the inotify `descriptor`'s events, and calls `changed` after a batch that names files `watching` accepts.
    private static func reader(
        of descriptor: Int32, watching: @escaping @Sendable (String) -> Bool, queue: DispatchQueue,
        changed: @escaping @Sendable (Set<String>?) -> Void
    ) -> sending any DispatchSourceProtocol {
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler {
            let names = Self.drain(descriptor, watching: watching)
            if names?.isEmpty != true { changed(names) }
        }
        source.setCancelHandler { close(descriptor) }
        source.resume()
        return source
    }

    /// Looks at `folder` every `interval`, and calls `changed` with the files `watching` accepts that differ from the
    /// last look.
    private static func looker(
        at folder: String, watching: @escaping @Sendable (String) -> Bool, every interval: Duration,
        queue: DispatchQueue, changed: @escaping @Sendable (Set<String>?) -> Void
    ) -> sending any DispatchSourceProtocol {
        let last = Mutex(Look(folder, watching: watching))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds =
            Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        timer.setEventHandler {
            let names = last.withLock { last in
                let now = last.next(folder, watching: watching, interval: interval)
                defer { last = now }
                return now.changes(since: last)
            }
            if !names.isEmpty { changed(names) }
        }
        timer.resume()
        return timer
    }

    private init(source: sending any DispatchSourceProtocol) {
        self.source = Mutex(source)
    }

    /// What a look at a file or folder shows: whether it is there, which it is, its size and times (a file replaced by
    /// a rename is another; one written in place changes its times).
    private struct Seen: Equatable {
        var device: UInt = 0
        var inode: UInt = 0
        var size = 0
        var modified = [0, 0]
        var changed = [0, 0]

        init?(_ path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            device = UInt(info.st_dev)
            inode = UInt(info.st_ino)
            size = Int(info.st_size)
            modified = [info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
            changed = [info.st_ctim.tv_sec, info.st_ctim.tv_nsec]
        }
    }

    /// A look at the folder: the folder itself, and each file `watching` accepts.
    private struct Look {
        var folder: Seen?
        var files: [String: Seen] = [:]

        /// A look at every file of `folder`.
        init(_ folder: String, watching: (String) -> Bool) {
            self.folder = Seen(folder)
            for name in PrivateFiles.listing(of: folder) ?? [] where watching(name) {
                files[name] = Seen("\(folder)/\(name)")
            }
        }

        /// The look after this one: each file looked at again only when the folder changed, or changed lately (a
        /// folder's time ticks coarsely: two changes in one tick leave it as the first left it).
        func next(_ path: String, watching: (String) -> Bool, interval: Duration) -> Look {
            var next = self
            next.folder = Seen(path)
            let lately = Int(max(interval, .seconds(1)).components.seconds) * 2
            let modified = next.folder?.changed[0] ?? 0
            guard next.folder != folder || time(nil) - modified <= lately else { return next }
            return Look(path, watching: watching)
        }

        /// The files that differ between `earlier` and this look (there in one only, or another file, or changed).
        func changes(since earlier: Look) -> Set<String> {
            Set(files.keys.filter { files[$0] != earlier.files[$0] })
                .union(earlier.files.keys.filter { files[$0] == nil })
        }
    }

    /// Stops watching (no call to `changed` starts after this returns… or soon after: one under way finishes).
    func stop() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
    }

    /// Reads every pending event; the names among them `watching` accepts, or nil when events were lost (the kernel's
    /// queue overflowed: anything may have changed).
    private static func drain(_ descriptor: Int32, watching: (String) -> Bool) -> Set<String>? {
        var names: Set<String>? = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return names }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.withUnsafeBytes {
                    $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                }
                let length = Int(event.len)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { names = nil }
                let start = offset + header
                let end = min(start + length, count)
                let name = String(decoding: buffer[start..<end].prefix { $0 != 0 }, as: UTF8.self)
                if length > 0, watching(name) { names?.insert(name) }
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
