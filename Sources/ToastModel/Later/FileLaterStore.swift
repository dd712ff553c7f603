public import FoundationEssentials
import Synchronization

/// Stores kept toasts in a small JSON file. Each application has its own
/// (``standard(application:environment:)``): `$XDG_STATE_HOME/toastkit/later/<application>.json`
/// (`~/.local/state/toastkit/later/<application>.json` when `XDG_STATE_HOME` is unset), so an app's kept toasts and
/// their ids are its own, and `toastkit later` shows the command line's (application `toastkit`).
///
/// Safe with other processes and against crashes:
/// - Every read and write holds an exclusive `flock` on `<file>.lock` beside the file, so processes that keep
///   toasts at the same moment wait for each other instead of overwriting each other's records.
/// - A write goes to a temporary file (mode 0600) that is flushed to disk (`fsync`) and renamed over the old
///   file: a process killed at any moment leaves the old list or the new one, never a torn file.
/// - The file is private: mode 0600, in a folder created with mode 0700 (``standard(environment:)`` also makes an
///   existing `toastkit` folder 0700 if it was open to others; an existing file is made 0600 when read).
/// - ``save(_:)`` applies the change made since this store value's last ``load()`` to what is in the file *now*
///   (see there), so the center's load-change-save keeps records other processes added in between;
///   ``update(_:)`` does the whole read-change-write under the lock.
///
/// A file that cannot be decoded or read is renamed to `<name>.json.corrupt-<UTC timestamp>` — set aside, never
/// deleted — and reported. A file that cannot be written is reported as ``LaterStoreProblem/Kind/unwritable``
/// with the path and the system's reason (for example `cannot write …: No space left on device`).
public struct FileLaterStore: LaterStore {
    /// The file.
    public let url: URL
    /// Whether the file's folder is the store's own, made private (0700) even when it already exists.
    private let ownsFolder: Bool
    /// What this value (and its copies) last read or wrote, by id: the base ``save(_:)`` compares against.
    private let lastSeen: Snapshot

    private final class Snapshot: Sendable {
        let records = Mutex<[String: ToastLaterRecord]?>(nil)
    }

    /// Creates a store at `url`. Folders missing on its path are created with mode 0700; an existing folder's
    /// mode is left alone.
    public init(url: URL) {
        self.init(url: url, ownsFolder: false)
    }

    private init(url: URL, ownsFolder: Bool) {
        self.url = url
        self.ownsFolder = ownsFolder
        self.lastSeen = Snapshot()
    }

    /// The location of `application`'s kept toasts: `$XDG_STATE_HOME/toastkit/later/<application>.json`, else
    /// `$HOME/.local/state/toastkit/later/<application>.json`. A relative `XDG_STATE_HOME` is ignored, as the XDG
    /// base directory specification says. The name is kept as it is when it is made of letters, digits, `.`, `_`
    /// and `-` (`Fotos`, `org.example.Fotos`); other bytes are written `%XX`, so no name can reach another folder.
    public static func defaultURL(
        application: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        stateFolder(environment: environment).appendingPathComponent("later", isDirectory: true)
            .appendingPathComponent(fileName(for: application) + ".json")
    }

    /// The store of `application`'s kept toasts, at ``defaultURL(application:environment:)``. Its folder is the
    /// store's own: it is made private (0700) when it was open to others, and refused when it belongs to another
    /// user. The `ToastKit` module's desktop centers use it with their ``FreedesktopNotifications/PresenterConfiguration``'s
    /// `appName`.
    public static func standard(
        application: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> FileLaterStore {
        FileLaterStore(url: defaultURL(application: application, environment: environment), ownsFolder: true)
    }

    /// The name of this program (the last component of its `argv[0]`), the application a store is kept for when
    /// none is named.
    public static var programName: String {
        let name = (CommandLine.arguments.first ?? "").split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? "ToastKit" : name
    }

    /// `application` as a file name: letters, digits, `.`, `_` and `-` as they are (unless the name is only dots),
    /// other bytes as `%XX`; the empty name is `%`. A name longer than 200 bytes so written keeps its first 150 and
    /// ends with `~` and a 64-bit hash of the whole name (`~` is never written otherwise), within `NAME_MAX`.
    static func fileName(for application: String) -> String {
        func isPlain(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        guard !application.isEmpty else { return "%" }
        let onlyDots = application.utf8.allSatisfy { $0 == 0x2E }
        var name = ""
        for byte in application.utf8 {
            if isPlain(byte), !onlyDots {
                name.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                name += "%" + (hex.count < 2 ? "0" + hex : hex)
            }
        }
        guard name.utf8.count > 200 else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in application.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return String(name.prefix(150)) + "~" + String(hash, radix: 16)
    }

    /// The shared file every application and the command line used before each had its own,
    /// `$XDG_STATE_HOME/toastkit/later.json`. Only the command line reads it any more, to move what it holds into
    /// its own store.
    public static func defaultURL(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        stateFolder(environment: environment).appendingPathComponent("later.json")
    }

    /// `$XDG_STATE_HOME/toastkit`, else `$HOME/.local/state/toastkit`.
    private static func stateFolder(environment: [String: String]) -> URL {
        let stateHome: URL
        if let value = environment["XDG_STATE_HOME"], value.hasPrefix("/") {
            stateHome = URL(fileURLWithPath: value, isDirectory: true)
        } else {
            let home =
                environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? FileManager.default.homeDirectoryForCurrentUser.path
            stateHome = URL(fileURLWithPath: home, isDirectory: true)
                .appendingPathComponent(".local", isDirectory: true)
                .appendingPathComponent("state", isDirectory: true)
        }
        return stateHome.appendingPathComponent("toastkit", isDirectory: true)
    }

    /// The store of this program's kept toasts: ``standard(application:environment:)`` with ``programName``.
    public static func standard(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> FileLaterStore {
        standard(application: programName, environment: environment)
    }

    /// The shared store of earlier versions, at ``defaultURL(environment:)`` (see there).
    public static func shared(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> FileLaterStore {
        FileLaterStore(url: defaultURL(environment: environment), ownsFolder: true)
    }

    private struct FileContents: Codable {
        var version: Int
        var toasts: [ToastLaterRecord]
    }

    private var path: String { url.path }
    private var folder: String { PrivateFiles.parent(of: url.path) }
    private var lockPath: String { url.path + ".lock" }

    /// Reads the file (under the lock); a missing file is empty.
    public func load() throws(LaterStoreProblem) -> [ToastLaterRecord] {
        guard folderExists else {
            remember([])
            return []
        }
        let lock = try takeLock(for: .unreadable)
        defer { lock.unlock() }
        let records = try read()
        remember(records)
        return records
    }

    /// Writes `records` as the change since this value's last ``load()`` (or ``save(_:)``), under the lock:
    /// records added or changed since then are written (replacing a record with the same id), records removed
    /// since then are removed (unless another process has changed them meanwhile), and records that other
    /// processes added meanwhile are kept. Without an earlier load, `records` replaces the file's contents.
    public func save(_ records: [ToastLaterRecord]) throws(LaterStoreProblem) {
        let base = lastSeen.records.withLock { $0 }
        try update { current in
            guard let base else {
                current = records
                return
            }
            Self.apply(from: base, to: records, onto: &current)
        }
    }

    /// Reads, changes and writes the kept toasts as one step, holding the lock throughout, so no other process
    /// can write in between.
    ///
    /// - Returns: what `body` returns. The file is written only when `body` changed the records.
    public func update<T>(_ body: (inout [ToastLaterRecord]) throws(LaterStoreProblem) -> T) throws(LaterStoreProblem)
        -> T
    {
        do throws(PrivateFileError) {
            try PrivateFiles.prepareFolder(folder, tighten: ownsFolder)
        } catch {
            throw problem(.unwritable, detail: error.description, setAside: false)
        }
        let lock = try takeLock(for: .unwritable)
        defer { lock.unlock() }
        var setAside: LaterStoreProblem?
        let before: [ToastLaterRecord]
        do {
            before = try read()
        } catch  where error.setAsideAt != nil {
            // Set aside: the new list starts empty, and the problem is still reported once it is written.
            setAside = error
            before = []
        }
        var records = before
        let result = try body(&records)
        if records != before || setAside != nil {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            do {
                let data = try encoder.encode(FileContents(version: 1, toasts: records))
                try PrivateFiles.replace(path, with: Array(data))
            } catch let error as PrivateFileError {
                throw problem(.unwritable, detail: error.description, setAside: false)
            } catch {
                throw problem(.unwritable, detail: "cannot encode the kept toasts: \(error)", setAside: false)
            }
        }
        remember(records)
        if let setAside { throw setAside }
        return result
    }

    /// Applies the change from `base` to `records` onto `current` (see ``save(_:)``).
    private static func apply(
        from base: [String: ToastLaterRecord], to records: [ToastLaterRecord], onto current: inout [ToastLaterRecord]
    ) {
        let kept = Set(records.map(\.id))
        current.removeAll { record in !kept.contains(record.id) && base[record.id] == record }
        for record in records where base[record.id] != record {
            if let index = current.firstIndex(where: { $0.id == record.id }) {
                current[index] = record
            } else {
                current.append(record)
            }
        }
    }

    private var folderExists: Bool { PrivateFiles.isFolder(folder) }

    private func remember(_ records: [ToastLaterRecord]) {
        let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        lastSeen.records.withLock { $0 = byID }
    }

    private func takeLock(for kind: LaterStoreProblem.Kind) throws(LaterStoreProblem) -> PrivateFiles.Lock {
        do {
            return try PrivateFiles.Lock(lockPath)
        } catch {
            throw problem(kind, detail: error.description, setAside: false)
        }
    }

    /// Reads and decodes the file; the caller holds the lock. Unreadable or undecodable data is set aside.
    private func read() throws(LaterStoreProblem) -> [ToastLaterRecord] {
        let bytes: [UInt8]
        do {
            guard let contents = try PrivateFiles.contents(of: path) else { return [] }
            bytes = contents
        } catch {
            throw problem(.unreadable, detail: error.description, setAside: true)
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let contents = try decoder.decode(FileContents.self, from: Data(bytes))
            guard contents.version == 1 else {
                throw problem(.corrupt, detail: "unknown version \(contents.version)", setAside: true)
            }
            return contents.toasts
        } catch let problem as LaterStoreProblem {
            throw problem
        } catch {
            throw problem(.corrupt, detail: "\(error)", setAside: true)
        }
    }

    private func problem(_ kind: LaterStoreProblem.Kind, detail: String, setAside: Bool) -> LaterStoreProblem {
        LaterStoreProblem(
            kind: kind, location: url, setAsideAt: setAside ? moveAside() : nil, detail: detail)
    }

    /// Renames the file to `<name>.corrupt-<timestamp>[-n]`; returns `nil` when it cannot be moved.
    private func moveAside() -> URL? {
        let stamp = Date.ISO8601FormatStyle(
            dateSeparator: .omitted, dateTimeSeparator: .standard, timeSeparator: .omitted, timeZone: .gmt
        ).format(Date())
        let base = url.lastPathComponent + ".corrupt-" + stamp
        let folder = url.deletingLastPathComponent()
        for attempt in 0..<100 {
            let name = attempt == 0 ? base : "\(base)-\(attempt)"
            let target = folder.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: target.path) { continue }
            do {
                try FileManager.default.moveItem(at: url, to: target)
                return target
            } catch {
                return nil
            }
        }
        return nil
    }
}
