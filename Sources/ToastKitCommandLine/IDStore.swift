import FoundationEssentials
import Glibc
import ToastKit
import ToastKitAgent

/// Remembers which server notification each `--id` became, so that a later run replaces it: a small JSON file
/// `ids.json` in the private runtime folder (``RuntimeFolder``: `$XDG_RUNTIME_DIR/toastkit/`, else the user's
/// `/run/user/<uid>/toastkit/`, else a private `/tmp/toastkit-<uid>/`, or `~/.cache/toastkit/run/` when another user
/// took that name).
///
/// - **Locked.** Every read-change-write holds an exclusive `flock` on `ids.lock`, so parallel runs never lose
///   each other's ids.
/// - **Crash-safe and private.** Writes go to a temporary file (0600), `fsync`, rename; the folder is 0700 (made
///   so if it was open to others; refused if another user owns it or it is a symbolic link).
/// - **Bounded.** At most ``capacity`` ids are kept; when a write would keep more, the least recently used go.
///   Ids remembered from another server (a unique bus name that is not the current owner of
///   `org.freedesktop.Notifications`) are dropped at every write: that server and its notifications are gone.
///   `close --id` and the end of a `send --wait --id` remove their id. So `send --id` reads and writes at most a
///   few tens of kilobytes.
struct IDStore: Sendable {
    /// The most ids kept.
    static let capacity = 256

    /// One remembered toast.
    struct Entry: Codable, Sendable, Equatable {
        /// The server's id for it.
        var serverID: UInt32
        /// The unique bus name of the server that showed it: after a server restart the id means nothing.
        var server: String?
        /// When it was last sent (seconds since 1970), for dropping the least recently used.
        var used: Double?

        enum CodingKeys: String, CodingKey {
            case serverID = "server_id"
            case server
            case used
        }
    }

    private struct Contents: Codable {
        var version: Int
        var ids: [String: Entry]
    }

    /// The folder.
    let directory: String

    var path: String { directory + "/ids.json" }
    var lockPath: String { directory + "/ids.lock" }

    /// The folder for `environment`.
    static func directory(environment: [String: String]) -> String {
        RuntimeFolder.path(environment: environment)
    }

    /// Opens the store for `environment`, creating its folder (mode 0700) or making it private.
    ///
    /// - Throws: an I/O failure (74) when the folder cannot be created, belongs to another user, or is not a
    ///   folder.
    static func open(environment: [String: String]) throws(CommandFailure) -> IDStore {
        let directory = directory(environment: environment)
        do {
            try PrivateFiles.prepareFolder(directory, tighten: true)
        } catch {
            throw CommandFailure(.ioError, "\(error.description) (the --id store)")
        }
        return IDStore(directory: directory)
    }

    /// The ids, read under the store's lock, until ``save(currentServer:)`` or ``close()``.
    final class Session {
        /// The ids; change them, then ``save(currentServer:)``.
        var ids: [String: Entry]
        private let before: [String: Entry]
        private let store: IDStore
        private let lock: PrivateFiles.Lock

        fileprivate init(store: IDStore) throws(PrivateFileError) {
            self.store = store
            lock = try PrivateFiles.Lock(store.lockPath)
            do {
                ids = try Self.read(store.path)
            } catch {
                lock.unlock()
                throw error
            }
            before = ids
        }

        /// Marks `key` as sent now to `serverID` on `server`.
        func record(_ key: String, serverID: UInt32, server: String) {
            ids[key] = Entry(serverID: serverID, server: server, used: Date().timeIntervalSince1970)
        }

        /// Writes the ids if they changed (dropping those of servers other than `currentServer`, then the least
        /// recently used beyond ``IDStore/capacity``), and releases the lock.
        func save(currentServer: String?) throws(PrivateFileError) {
            defer { lock.unlock() }
            if let currentServer { ids = ids.filter { $0.value.server == nil || $0.value.server == currentServer } }
            if ids.count > IDStore.capacity {
                let newest = ids.sorted { ($0.value.used ?? 0, $0.key) > ($1.value.used ?? 0, $1.key) }
                ids = Dictionary(uniqueKeysWithValues: newest.prefix(IDStore.capacity).map { ($0.key, $0.value) })
            }
            guard ids != before else { return }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data: Data
            do {
                data = try encoder.encode(Contents(version: 1, ids: ids))
            } catch {
                throw PrivateFileError("cannot encode \(store.path)", reason: "\(error)")
            }
            try PrivateFiles.replace(store.path, with: Array(data))
        }

        /// Releases the lock without writing.
        func close() { lock.unlock() }

        /// The ids in the file; a missing file, or one that is not the store's JSON, is empty (it is rewritten at
        /// the next change).
        private static func read(_ path: String) throws(PrivateFileError) -> [String: Entry] {
            guard let bytes = try PrivateFiles.contents(of: path),
                let contents = try? JSONDecoder().decode(Contents.self, from: Data(bytes)), contents.version == 1
            else { return [:] }
            return contents.ids
        }
    }

    /// Takes the lock and reads the ids.
    ///
    /// - Throws: when the lock cannot be taken or the file exists and cannot be read.
    func lock() throws(PrivateFileError) -> Session {
        try Session(store: self)
    }
}
