import FoundationEssentials
import Glibc

/// Remembers which server notification each `--id` became, so that a later run replaces it: a small JSON file
/// `ids.json` in `$XDG_RUNTIME_DIR/toastkit/` (or a private `/tmp/toastkit-<uid>/`, mode 0700, when there is no
/// runtime folder), read and written under an exclusive `flock` on `ids.lock`, written atomically.
struct IDStore: Sendable {
    /// One remembered toast.
    struct Entry: Codable, Sendable, Equatable {
        /// The server's id for it.
        var serverID: UInt32
        /// The unique bus name of the server that showed it: after a server restart the id means nothing.
        var server: String?

        enum CodingKeys: String, CodingKey {
            case serverID = "server_id"
            case server
        }
    }

    private struct Contents: Codable {
        var version: Int
        var ids: [String: Entry]
    }

    /// The folder.
    let directory: String

    var fileURL: URL { URL(fileURLWithPath: directory).appendingPathComponent("ids.json") }
    var lockPath: String { directory + "/ids.lock" }

    /// The folder for `environment`.
    static func directory(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var info = stat()
            if stat(runtime, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return runtime + "/toastkit" }
        }
        return "/tmp/toastkit-\(geteuid())"
    }

    /// Opens the store for `environment`, creating its folder (mode 0700). A folder owned by someone else or
    /// open to others is refused.
    static func open(environment: [String: String]) throws(CommandFailure) -> IDStore {
        let directory = directory(environment: environment)
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw CommandFailure(.software, "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw CommandFailure(.software, "refusing to use \(directory) for --id: it is not a folder")
        }
        guard info.st_uid == geteuid() else {
            throw CommandFailure(
                .software, "refusing to use \(directory) for --id: it belongs to uid \(info.st_uid), not \(geteuid())")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw CommandFailure(
                .software,
                "refusing to use \(directory) for --id: others can access it (mode \(String(info.st_mode & 0o777, radix: 8)))"
            )
        }
        return IDStore(directory: directory)
    }

    /// Runs `body` with the remembered ids while holding the lock, and saves what it leaves in them if changed.
    func withLockedIDs<T>(_ body: (inout [String: Entry]) throws -> T) throws -> T {
        let lock = try acquireLock()
        defer { Glibc.close(lock) }
        let before = load()
        var ids = before
        let result = try body(&ids)
        if ids != before { try save(ids) }
        return result
    }

    /// ``withLockedIDs(_:)`` for a body that waits (the lock is held meanwhile).
    func withLockedIDs<T>(_ body: (inout [String: Entry]) async throws -> T) async throws -> T {
        let lock = try acquireLock()
        defer { Glibc.close(lock) }
        let before = load()
        var ids = before
        let result = try await body(&ids)
        if ids != before { try save(ids) }
        return result
    }

    /// Opens `ids.lock` and takes the exclusive lock on it; closing the descriptor releases it.
    private func acquireLock() throws(CommandFailure) -> Int32 {
        let lock = Glibc.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            throw CommandFailure(.software, "cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let reason = String(cString: strerror(errno))
                Glibc.close(lock)
                throw CommandFailure(.software, "cannot lock \(lockPath): \(reason)")
            }
        }
        return lock
    }

    /// The remembered ids; an unreadable file counts as empty (it is rewritten on the next change).
    func load() -> [String: Entry] {
        guard let data = try? Data(contentsOf: fileURL),
            let contents = try? JSONDecoder().decode(Contents.self, from: data), contents.version == 1
        else { return [:] }
        return contents.ids
    }

    private func save(_ ids: [String: Entry]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(Contents(version: 1, ids: ids))
        let temporary = directory + "/ids.json.\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw CommandFailure(.software, "cannot write \(temporary)")
        }
        guard rename(temporary, fileURL.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CommandFailure(.software, "cannot replace \(fileURL.path): \(reason)")
        }
    }
}
