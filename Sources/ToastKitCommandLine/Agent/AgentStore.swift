import FoundationEssentials
import Glibc
import ToastKit

/// The agent's saved toasts: `agent.json` in the same private folder as the `--id` store (`$XDG_RUNTIME_DIR/toastkit/`,
/// or `/tmp/toastkit-<uid>/`), rewritten crash-safe (temporary file, `fsync`, rename) after every change, so an agent
/// that is killed leaves the toasts it had for the next one to adopt.
///
/// Only the agent that owns `org.toastkit.Agent1` writes it, so it needs no lock.
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

    private struct Contents: Codable {
        var version: Int
        var savedAt: Double
        var toasts: [Saved]

        enum CodingKeys: String, CodingKey {
            case version, toasts
            case savedAt = "saved_at"
        }
    }

    /// The file.
    let path: String

    /// The folder for `environment` (the `--id` store's).
    static func stateDirectory(environment: [String: String]) -> String {
        IDStore.directory(environment: environment)
    }

    /// Opens the store, creating its folder (0700) or making it private.
    static func open(environment: [String: String]) throws(PrivateFileError) -> AgentStore {
        let directory = stateDirectory(environment: environment)
        try PrivateFiles.prepareFolder(directory, tighten: true)
        return AgentStore(path: directory + "/agent.json")
    }

    /// Seconds since 1970 (the saved time survives the agent; the folder does not survive a reboot).
    static func now() -> Double {
        Date().timeIntervalSince1970
    }

    /// Writes `toasts` (removes the file when there are none).
    func save(_ toasts: [Saved]) throws(PrivateFileError) {
        if toasts.isEmpty {
            if unlink(path) != 0 && errno != ENOENT { throw PrivateFileError.errno("cannot remove \(path)") }
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(
                Contents(version: 1, savedAt: Self.now(), toasts: toasts.sorted { $0.id < $1.id }))
        } catch {
            throw PrivateFileError("cannot encode \(path)", reason: "\(error)")
        }
        try PrivateFiles.replace(path, with: Array(data))
    }

    /// The saved toasts and when they were saved; nothing for a missing file. An unreadable or damaged file is
    /// reported on stderr and set aside as `agent.json.damaged` (never silently dropped, never fatal).
    func load() -> (toasts: [Saved], savedAt: Double) {
        do {
            guard let bytes = try PrivateFiles.contents(of: path) else { return ([], 0) }
            let contents = try JSONDecoder().decode(Contents.self, from: Data(bytes))
            guard contents.version == 1 else {
                throw PrivateFileError("cannot read \(path)", reason: "version \(contents.version) is not 1")
            }
            return (contents.toasts, contents.savedAt)
        } catch {
            Output.error(
                "warning: the agent's saved toasts are lost: \(error); the file is kept as \(path).damaged")
            _ = rename(path, path + ".damaged")
            return ([], 0)
        }
    }
}
