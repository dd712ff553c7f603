import FoundationEssentials
import Glibc
package import ToastModel

/// The user's scheduled toasts (`send --in`, `--at`, a snooze): `$XDG_STATE_HOME/toastkit/scheduled.json`. Unlike the
/// agent's journal of live toasts, which belongs to one session bus, these are the user's: they outlive the agent,
/// the session and a reboot, and the next agent of the user — on any session — shows them when they are due (at once
/// for one whose time came while no agent ran).
///
/// Every change is a read-change-write under an exclusive `flock` (`scheduled.lock`), written crash-safe (temporary
/// file, `fsync`, rename). Two agents of one user (two sessions at once) both keep every schedule, and the first to
/// reach its time claims it (``claim(_:due:)``): it is shown once. What is read back is checked before it is trusted —
/// this user's own regular file, at most ``maximumSize`` bytes, this format and version, values in range — and
/// anything else is set aside as `scheduled.json.refused` with one line on the log.
package final class ScheduleStore: Sendable {
    /// One scheduled toast.
    package struct Entry: Codable, Sendable, Equatable {
        /// The toast's id.
        package var id: String
        /// When it is due, in seconds since 1970.
        package var due: Double
        /// The toast as its sender gave it (without its schedule).
        package var request: AgentRequest

        package enum CodingKeys: String, CodingKey {
            case id, due, request
        }

        package init(id: String, due: Double, request: AgentRequest) {
            self.id = id
            self.due = due
            self.request = request
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            due = try container.decode(Double.self, forKey: .due)
            do {
                request = try container.decode(SavedRequest.self, forKey: .request).request()
                // The saved request leaves the id to the entry: the toast that comes due is the one of this id (it
                // came as `toastkit-<uuid>`, which `close --id`, `wait --id` and the settling never found).
                request.options.id = id
            } catch let error as SavedRequest.Invalid {
                throw AgentStore.Refusal(description: "scheduled toast \"\(id)\": \(error.description) is not valid")
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(due, forKey: .due)
            try container.encode(SavedRequest(request), forKey: .request)
        }
    }

    private struct File: Codable {
        var format: String
        var version: Int
        var toasts: [Entry]
    }

    package static let format = "toastkit-scheduled"
    package static let version = 1
    /// The largest file read back.
    package static let maximumSize = 16 << 20

    /// The file's name in its folder.
    package static let fileName = "scheduled.json"
    /// The folder (the user's state folder).
    package let folder: String
    /// The file.
    package let path: String
    private let lockPath: String

    private init(folder: String) {
        self.folder = folder
        path = "\(folder)/\(Self.fileName)"
        lockPath = "\(folder)/scheduled.lock"
    }

    /// The user's store, in ``ToastModel/PrivateFiles/stateFolder(environment:)``; its folder is made (0700) or made
    /// private.
    package static func open(environment: [String: String]) throws(PrivateFileError) -> ScheduleStore {
        guard let folder = PrivateFiles.stateFolder(environment: environment) else {
            throw PrivateFileError("cannot keep scheduled toasts", reason: "neither XDG_STATE_HOME nor HOME is set")
        }
        try PrivateFiles.prepareFolder(folder, tighten: true)
        return ScheduleStore(folder: folder)
    }

    /// Every scheduled toast, soonest first (none when the file cannot be locked).
    package func load() -> [Entry] {
        loadIfLocked() ?? []
    }

    /// Every scheduled toast, soonest first; nil when the file cannot be locked (nothing is known then).
    package func loadIfLocked() -> [Entry]? {
        guard let lock = try? PrivateFiles.Lock(lockPath) else { return nil }
        defer { lock.unlock() }
        return read().sorted { ($0.due, $0.id) < ($1.due, $1.id) }
    }

    /// Keeps `entry` (replacing a schedule of the same id).
    package func put(_ entry: Entry) throws(PrivateFileError) {
        try change { entries in
            entries.removeAll { $0.id == entry.id }
            entries.append(entry)
        }
    }

    /// Forgets the schedule of `id`; whether there was one.
    @discardableResult
    package func remove(_ id: String) throws(PrivateFileError) -> Bool {
        var found = false
        try change { entries in
            found = entries.contains { $0.id == id }
            entries.removeAll { $0.id == id }
        }
        return found
    }

    /// Takes the schedule of `id` due at `due` for this agent to show: false when it is gone (another agent of the
    /// user showed it, or it was cancelled or scheduled anew).
    package func claim(_ id: String, due: Double) throws(PrivateFileError) -> Bool {
        var claimed = false
        try change { entries in
            claimed = entries.contains { $0.id == id && $0.due == due }
            if claimed { entries.removeAll { $0.id == id } }
        }
        return claimed
    }

    /// Puts back toasts an agent claimed and no server showed (``ClaimedSchedules``), due as they were (so at once),
    /// except those whose id was scheduled anew meanwhile: the newer schedule wins. Returns the ids put back.
    package func giveBack(_ given: [Entry]) throws(PrivateFileError) -> [String] {
        var putBack: [String] = []
        try change { entries in
            for entry in given where !entries.contains(where: { $0.id == entry.id }) {
                entries.append(entry)
                putBack.append(entry.id)
            }
        }
        return putBack
    }

    private func change(_ body: (inout [Entry]) -> Void) throws(PrivateFileError) {
        let lock = try PrivateFiles.Lock(lockPath)
        defer { lock.unlock() }
        var entries = read()
        let before = entries
        body(&entries)
        guard entries != before else { return }
        if entries.isEmpty {
            if unlink(path) != 0, errno != ENOENT { throw PrivateFileError.errno("cannot remove \(path)") }
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes: [UInt8]
        do {
            bytes = Array(try encoder.encode(File(format: Self.format, version: Self.version, toasts: entries)))
        } catch {
            throw PrivateFileError("cannot encode \(path)", reason: "\(error)")
        }
        try PrivateFiles.replace(path, with: bytes + [0x0A])
    }

    /// What the file holds, checked (the lock is held); a file that cannot be trusted is set aside.
    private func read() -> [Entry] {
        do {
            guard let bytes = try PrivateFiles.contents(of: path, maximumSize: Self.maximumSize) else { return [] }
            let file: File
            do {
                file = try JSONDecoder().decode(File.self, from: Data(bytes))
            } catch let refusal as AgentStore.Refusal {
                throw refusal
            } catch {
                throw AgentStore.Refusal(description: "it is not a file of scheduled toasts")
            }
            guard file.format == Self.format, file.version == Self.version else {
                throw AgentStore.Refusal(description: "it is not version \(Self.version) of \(Self.format)")
            }
            guard file.toasts.count <= AgentLimits.maximumLive else {
                throw AgentStore.Refusal(description: "it holds more than \(AgentLimits.maximumLive) toasts")
            }
            for entry in file.toasts {
                // Before 2020, or past the year 9999: no sender wrote that.
                guard entry.due.isFinite, entry.due > 1_577_836_800, entry.due < 253_402_300_800, !entry.id.isEmpty
                else {
                    throw AgentStore.Refusal(
                        description: "toast \"\(entry.id)\": the time \(entry.due) is out of range")
                }
            }
            return file.toasts
        } catch {
            ErrorLine.write("warning: the scheduled toasts are not read: \(error); the file is kept as \(path).refused")
            _ = rename(path, path + ".refused")
            return []
        }
    }
}
