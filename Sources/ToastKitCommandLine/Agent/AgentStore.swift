import FoundationEssentials
import Glibc
import ToastKit

/// The agent's saved toasts: one file per session bus, `agent-<bus id>.json` in the same private folder as the `--id`
/// store (`$XDG_RUNTIME_DIR/toastkit/`, or `/tmp/toastkit-<uid>/`), rewritten crash-safe (temporary file, `fsync`,
/// rename), so an agent that is killed leaves the toasts it had for the next agent **of the same bus** to adopt.
///
/// The bus id (`org.freedesktop.DBus.GetId`) is new for every bus: an agent on another session, after a logout and
/// login, or on a bus started by a test never sees this file (docs/decisions/0006-agent-lanes-and-sessions.md).
///
/// Only the agent that owns `org.toastkit.Agent1` on that bus writes it, so it needs no lock. What is read back is
/// checked before it is trusted: the file must be this user's own regular file of at most ``maximumSize`` bytes
/// (opened without blocking or following a link), of this format's version, with values in range; anything else is
/// set aside with one line on the log and never adopted.
struct AgentStore: Sendable {
    /// One live toast.
    struct Saved: Codable, Sendable, Equatable {
        /// The toast as its sender gave it.
        var request: AgentRequest
        /// Its id in the agent's center.
        var id: String
        /// The server's id for it, when it was on screen.
        var serverID: UInt32?
        /// Its remaining time in seconds when saved (nil for a toast without a time limit).
        var remaining: Double?
        /// Whether its timer ran when saved (then the time since counts against it).
        var running: Bool

        enum CodingKeys: String, CodingKey {
            case request, id, running, remaining
            case serverID = "server_id"
        }
    }

    /// The file's layout on disk, with its own keys and version (never a type of the command line's).
    private struct Contents: Codable {
        var version: Int
        var busID: String
        var savedAt: Double
        var toasts: [Saved]

        enum CodingKeys: String, CodingKey {
            case version, toasts
            case busID = "bus_id"
            case savedAt = "saved_at"
        }
    }

    /// The format this version writes and reads (1 had no bus id and was shared by every bus: never adopted).
    static let version = 2
    /// The largest saved file read back: far above what the queue's bound can produce.
    static let maximumSize = 32 << 20

    /// The file.
    let path: String
    /// The bus the file belongs to.
    let busID: String

    /// The folder for `environment` (the `--id` store's).
    static func stateDirectory(environment: [String: String]) -> String {
        IDStore.directory(environment: environment)
    }

    /// Opens the store of bus `busID`, creating its folder (0700) or making it private.
    static func open(environment: [String: String], busID: String) throws(PrivateFileError) -> AgentStore {
        let directory = stateDirectory(environment: environment)
        try PrivateFiles.prepareFolder(directory, tighten: true)
        // A bus id is 32 hex digits; anything else (a bus that answers oddly) still gets a file name of its own.
        let safe = busID.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
        let name = safe && !busID.isEmpty ? busID : "bus-" + String(UInt(bitPattern: busID.hashValue), radix: 16)
        return AgentStore(path: "\(directory)/agent-\(name).json", busID: busID)
    }

    /// Seconds since 1970 (the saved time survives the agent; the folder does not survive a reboot).
    static func now() -> Double {
        Date().timeIntervalSince1970
    }

    /// Writes `toasts` (removes the file when there are none).
    func save(_ toasts: [Saved]) throws(PrivateFileError) {
        if toasts.isEmpty {
            try remove()
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(
                Contents(
                    version: Self.version, busID: busID, savedAt: Self.now(), toasts: toasts.sorted { $0.id < $1.id }))
        } catch {
            throw PrivateFileError("cannot encode \(path)", reason: "\(error)")
        }
        try PrivateFiles.replace(path, with: Array(data))
    }

    /// Removes the file: its bus has closed, and its toasts with it.
    func remove() throws(PrivateFileError) {
        if unlink(path) != 0 && errno != ENOENT { throw PrivateFileError.errno("cannot remove \(path)") }
    }

    /// Why a saved file is not adopted.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// The saved toasts and how many seconds ago they were saved; nothing for a missing file. A file that cannot be
    /// trusted or read is set aside as `<file>.refused` with one line on stderr (never silently dropped, never
    /// fatal, never opened in a way that could block).
    func load(now: Double = AgentStore.now()) -> (toasts: [Saved], age: Double) {
        do {
            guard let bytes = try PrivateFiles.contents(of: path, maximumSize: Self.maximumSize) else { return ([], 0) }
            return try Self.decode(bytes, busID: busID, now: now)
        } catch {
            Output.error(
                "warning: the agent's saved toasts are not adopted: \(error); the file is kept as \(path).refused")
            _ = rename(path, path + ".refused")
            return ([], 0)
        }
    }

    /// The toasts in a saved file's `bytes`, every value checked; the age of the save in seconds.
    static func decode(_ bytes: [UInt8], busID: String, now: Double) throws -> (toasts: [Saved], age: Double) {
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: Data(bytes))
        } catch {
            throw Refusal(description: "it is not a saved-toasts file of version \(version)")
        }
        guard contents.version == version else {
            throw Refusal(description: "version \(contents.version) is not \(version)")
        }
        guard contents.busID == busID else {
            throw Refusal(description: "it belongs to bus \(contents.busID), not \(busID)")
        }
        // A save from the future (a clock set back) counts as just now; one from before 2020 is not believed.
        guard contents.savedAt.isFinite, contents.savedAt > 1_577_836_800, contents.savedAt < now + 86_400 else {
            throw Refusal(description: "saved_at \(contents.savedAt) is not a time this agent can believe")
        }
        var ids = Set<String>()
        for toast in contents.toasts {
            guard ids.insert(toast.id).inserted, !toast.id.isEmpty else {
                throw Refusal(description: "the toast id \"\(toast.id)\" is empty or saved twice")
            }
            if let remaining = toast.remaining {
                guard remaining.isFinite, remaining >= 0, remaining <= ToastDuration.maximumSeconds else {
                    throw Refusal(description: "toast \"\(toast.id)\": remaining \(remaining) is out of range")
                }
            }
        }
        guard contents.toasts.count <= AgentLimits.maximumLive else {
            throw Refusal(description: "\(contents.toasts.count) toasts, more than \(AgentLimits.maximumLive)")
        }
        return (contents.toasts, max(0, now - contents.savedAt))
    }
}

/// The agent's bounds, each with a clear refusal when reached.
enum AgentLimits {
    /// Live toasts (shown and waiting) at once: a `Present` beyond is refused with `QueueFull`.
    static let maximumLive = 1000
    /// `--on-action` commands running at once; more wait for one to end.
    static let maximumRunningCommands = 16
}
