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
///
/// Of a sender's environment (`--on-action`'s), the file keeps only what a command needs to reach the desktop and
/// find its program (``KeptEnvironment``); the rest goes to a runtime file that ends with the user's session, named by
/// the entry (`environment_set_aside`), and is merged back as the file is read. A file of an earlier version, with
/// whole environments, still loads, and is written anew with the kept variables only.
package final class ScheduleStore: Sendable {
    /// One scheduled toast.
    package struct Entry: Codable, Sendable, Equatable {
        /// The toast's id.
        package var id: String
        /// When it is due, in seconds since 1970.
        package var due: Double
        /// The toast as its sender gave it (without its schedule), with its sender's whole environment while the
        /// runtime file of the rest is there (``KeptEnvironment``).
        package var request: AgentRequest
        /// The token of the runtime file that holds the sender's variables not kept on disk (nil: there were none).
        package var setAside: String?
        /// That file was not there when the entry was read (the session it was sent in ended, the machine restarted):
        /// the request has the kept variables only.
        package var setAsideLost = false

        package enum CodingKeys: String, CodingKey {
            case id, due, request
            case setAside = "environment_set_aside"
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
            setAside = try container.decodeIfPresent(String.self, forKey: .setAside)
            if let setAside, !KeptEnvironment.isToken(setAside) {
                throw AgentStore.Refusal(
                    description: "scheduled toast \"\(id)\": environment_set_aside \"\(setAside)\" is not valid")
            }
        }

        /// The disk form: the request with only the kept part of its environment (``KeptEnvironment/isKept(_:)``),
        /// and the token of the runtime file of the rest.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(due, forKey: .due)
            var kept = request
            kept.environment = request.environment.map { KeptEnvironment.split($0).kept }
            try container.encode(SavedRequest(kept), forKey: .request)
            try container.encodeIfPresent(setAside, forKey: .setAside)
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
    /// The runtime files of the senders' variables not kept in the file (``KeptEnvironment``).
    package let environments: KeptEnvironment.Files

    private init(folder: String, environments: KeptEnvironment.Files) {
        self.folder = folder
        self.environments = environments
        path = "\(folder)/\(Self.fileName)"
        lockPath = "\(folder)/scheduled.lock"
    }

    /// The user's store, in ``ToastModel/PrivateFiles/stateFolder(environment:)``, its senders' variables not kept
    /// there in `environment`'s runtime folder (``KeptEnvironment/Files``); its folder is made (0700) or made private.
    package static func open(environment: [String: String]) throws(PrivateFileError) -> ScheduleStore {
        guard let folder = PrivateFiles.stateFolder(environment: environment) else {
            throw PrivateFileError("cannot keep scheduled toasts", reason: "neither XDG_STATE_HOME nor HOME is set")
        }
        try PrivateFiles.prepareFolder(folder, tighten: true)
        return ScheduleStore(folder: folder, environments: KeptEnvironment.Files(environment: environment))
    }

    /// Every scheduled toast, soonest first (none when the file cannot be locked).
    package func load() -> [Entry] {
        loadIfLocked() ?? []
    }

    /// Every scheduled toast, soonest first; nil when the file cannot be locked (nothing is known then). A file an
    /// earlier version wrote, with its senders' whole environments, is written anew at once: the kept variables in the
    /// file, the rest in the runtime folder.
    package func loadIfLocked() -> [Entry]? {
        guard let lock = try? PrivateFiles.Lock(lockPath) else { return nil }
        defer { lock.unlock() }
        var (entries, whole) = read()
        if whole {
            do {
                entries = try write(entries, before: entries)
            } catch {
                ErrorLine.write("warning: \(error)")
            }
        }
        return entries.sorted { ($0.due, $0.id) < ($1.due, $1.id) }
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
        let (before, whole) = read()
        var entries = before
        body(&entries)
        guard entries != before || whole else { return }
        _ = try write(entries, before: before)
    }

    /// Writes `given` (the lock is held; `before` is what the file held): each sender's variables that are not kept
    /// go to a runtime file first, then the file is written, then the runtime files no entry names any more are
    /// removed. Returns the entries as written, with their tokens.
    private func write(_ given: [Entry], before: [Entry]) throws(PrivateFileError) -> [Entry] {
        var entries = given
        for index in entries.indices { setAside(&entries[index], before: before) }
        let old = Set(before.compactMap(\.setAside))
        let named = Set(entries.compactMap(\.setAside))
        do throws(PrivateFileError) {
            if entries.isEmpty {
                if unlink(path) != 0, errno != ENOENT { throw PrivateFileError.errno("cannot remove \(path)") }
            } else {
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
        } catch {
            // The file is as it was: the runtime files written for it are not needed.
            for token in named.subtracting(old) { environments.remove(token) }
            throw error
        }
        for token in old.subtracting(named) { environments.remove(token) }
        return entries
    }

    /// Puts the variables of `entry`'s sender that the file does not keep in a runtime file of a new token, unless
    /// `before` has them under the entry's token already. A file that cannot be written costs the toast nothing: it is
    /// kept with its token, and a reader finds no file (the kept variables only).
    private func setAside(_ entry: inout Entry, before: [Entry]) {
        let rest = entry.request.environment.map { KeptEnvironment.split($0).rest } ?? [:]
        guard !rest.isEmpty else {
            // Nothing more than the kept variables; one whose rest was lost keeps its token, so it is still said.
            if !entry.setAsideLost { entry.setAside = nil }
            return
        }
        let written = before.contains {
            $0.setAside != nil && $0.setAside == entry.setAside && !$0.setAsideLost && $0.id == entry.id
                && $0.request.environment == entry.request.environment
        }
        guard !written else { return }
        let token = KeptEnvironment.newToken()
        entry.setAside = token
        entry.setAsideLost = false
        do {
            try environments.write(rest, id: entry.id, token: token)
        } catch {
            ErrorLine.write(
                "warning: \(error); scheduled toast \"\(entry.id)\" is kept, its commands get its kept variables only"
                    + " unless this agent shows it")
        }
    }

    /// What the file holds, checked (the lock is held), each request with its sender's whole environment when its
    /// runtime file is there; a file that cannot be trusted is set aside. `whole`: an earlier version wrote it, with
    /// variables that are not kept.
    private func read() -> (entries: [Entry], whole: Bool) {
        do {
            guard let bytes = try PrivateFiles.contents(of: path, maximumSize: Self.maximumSize) else {
                return ([], false)
            }
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
            var whole = false
            let entries = file.toasts.map { entry in
                var entry = entry
                let (kept, rest) = KeptEnvironment.split(entry.request.environment ?? [:])
                if !rest.isEmpty {
                    whole = true
                } else if let token = entry.setAside {
                    if let more = environments.read(id: entry.id, token: token) {
                        entry.request.environment = more.merging(kept) { _, kept in kept }
                    } else {
                        entry.setAsideLost = true
                    }
                }
                return entry
            }
            return (entries, whole)
        } catch {
            ErrorLine.write("warning: the scheduled toasts are not read: \(error); the file is kept as \(path).refused")
            _ = rename(path, path + ".refused")
            return ([], false)
        }
    }
}
