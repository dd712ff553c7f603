// The user's scheduled toasts on disk (`send --in`, `--at`, a snooze): one file per toast in
// `$XDG_STATE_HOME/toastkit/scheduled/`, each changed alone under the user's lock and read back checked alone. The
// entry and its file's name are in ScheduleEntry.swift; taking in the single file of earlier versions in
// ScheduleMigration.swift.
import FoundationEssentials
import Glibc
package import ToastModel

/// The user's scheduled toasts (`send --in`, `--at`, a snooze): one file per toast in
/// `$XDG_STATE_HOME/toastkit/scheduled/` (``folder``), named after its id (``fileName(of:)``). Unlike the agent's
/// journal of live toasts, which belongs to one session bus, these are the user's: they outlive the agent, the session
/// and a reboot, and the next agent of the user — on any session — shows them when they are due (at once for one whose
/// time came while no agent ran).
///
/// A change touches the one file of its toast, so a schedule costs the same however many others there are: it is made
/// under an exclusive `flock` (`scheduled.lock`, beside the folder), held for that one file only, and written
/// crash-safe (temporary file, `fsync`, rename). Reading takes no lock: every file is replaced whole by a rename, so a
/// reader sees it as it was or as it is. Two agents of one user (two sessions at once) both keep every schedule, and
/// the first to reach its time claims it (``claim(_:due:)``: under the lock, the file is still there with that time,
/// and is removed): it is shown once.
///
/// Each file read back is checked before it is trusted — this user's own regular file, at most ``maximumSize`` bytes,
/// this format and version, values in range, the file of its toast's id — and one that fails is set aside alone as
/// `<file>.refused` with one line on the log: the others load.
///
/// Of a sender's environment (`--on-action`'s), a file keeps only what a command needs to reach the desktop and find
/// its program (``KeptEnvironment``); the rest goes to a runtime file that ends with the user's session, named by the
/// entry (`environment_set_aside`), and is merged back as the file is read. The single `scheduled.json` of earlier
/// versions is taken into the folder once and removed (``loadIfLocked()`` and every change look for it).
package final class ScheduleStore: Sendable {
    /// The format every file names.
    package static let format = "toastkit-scheduled"
    /// The version of an entry's file (version 1 was the single `scheduled.json`).
    package static let version = 2
    /// The largest entry file read back, or written: far beyond one toast (its text is cut at 64 KiB).
    package static let maximumSize = 1 << 20
    /// The folder's name in the user's state folder.
    package static let folderName = "scheduled"

    /// The folder of the entries' files: `scheduled` in the user's state folder.
    package let folder: String
    /// The lock every change is made under (the file earlier versions locked too).
    let lockPath: String
    /// The single file of earlier versions (``takeInOldFileIfThere()``).
    let oldPath: String
    /// The runtime files of the senders' variables not kept in the files (``KeptEnvironment``).
    package let environments: KeptEnvironment.Files

    private init(state: String, name: String, environments: KeptEnvironment.Files) {
        folder = "\(state)/\(name)"
        lockPath = "\(state)/\(name).lock"
        oldPath = "\(state)/\(name).json"
        self.environments = environments
    }

    /// The user's store, in ``ToastModel/PrivateFiles/stateFolder(environment:)``, its senders' variables not kept
    /// there in `environment`'s runtime folder (``KeptEnvironment/Files``); its folders are made (0700) or made private.
    ///
    /// - Parameter name: The folder's name in the state folder (its lock is `<name>.lock` beside it): ``folderName``
    ///   for the scheduled toasts; ``CommandLineLater/commandsFolderName`` keeps, in the same form, the requests of
    ///   toasts with `--on-action` commands kept with Later.
    package static func open(
        environment: [String: String], name: String = folderName
    ) throws(PrivateFileError) -> ScheduleStore {
        guard let state = PrivateFiles.stateFolder(environment: environment) else {
            throw PrivateFileError("cannot keep scheduled toasts", reason: "neither XDG_STATE_HOME nor HOME is set")
        }
        try PrivateFiles.prepareFolder(state, tighten: true)
        let store = ScheduleStore(
            state: state, name: name, environments: KeptEnvironment.Files(environment: environment))
        try PrivateFiles.prepareFolder(store.folder, tighten: true)
        return store
    }

    /// The file that keeps the schedule of `id`.
    package func path(of id: String) -> String {
        "\(folder)/\(Self.fileName(of: id))"
    }

    /// Every scheduled toast, soonest first (none when nothing can be known, see ``loadIfLocked()``).
    package func load() -> [Entry] {
        loadIfLocked() ?? []
    }

    /// Every scheduled toast, soonest first; nil when nothing can be known: the folder cannot be read, or the file of
    /// an earlier version is there and the lock to take it in cannot be had. A file with its sender's whole
    /// environment (an earlier version's) is written anew at once: the kept variables in the file, the rest in the
    /// runtime folder. Temporary files of writers that died are removed.
    package func loadIfLocked() -> [Entry]? {
        guard takeInOldFileIfThere(), let names = PrivateFiles.listing(of: folder) else { return nil }
        var entries: [Entry] = []
        var whole: [Entry] = []
        var temporaries: [String] = []
        for name in names {
            if PrivateFiles.isTemporary(name) { temporaries.append(name) }
            guard Self.isEntryFileName(name), let (entry, isWhole) = read(name) else { continue }
            if isWhole { whole.append(entry) } else { entries.append(entry) }
        }
        if !whole.isEmpty || !temporaries.isEmpty { entries += tidy(whole: whole, temporaries: temporaries) }
        return entries.sorted { ($0.due, $0.id) < ($1.due, $1.id) }
    }

    /// What the files `names` of ``folder`` hold now, for a reader told that they changed (``ScheduleWatch``): the
    /// entries there, and the ids the names stand for (an id without an entry: its schedule is gone). Nil when a name
    /// does not tell its id (a long id's hashed name) or the file of an earlier version waits to be taken in: only a
    /// whole ``loadIfLocked()`` can tell then.
    package func load(names: Set<String>) -> (entries: [Entry], ids: Set<String>)? {
        var ids: Set<String> = []
        for name in names {
            guard let id = Self.id(ofFileName: name) else { return nil }
            ids.insert(id)
        }
        guard !exists(oldPath) else { return nil }
        var entries: [Entry] = []
        var whole: [Entry] = []
        for name in names.sorted() {
            guard let (entry, isWhole) = read(name) else { continue }
            if isWhole { whole.append(entry) } else { entries.append(entry) }
        }
        if !whole.isEmpty { entries += tidy(whole: whole, temporaries: []) }
        return (entries, ids)
    }

    /// Keeps `entry` (replacing a schedule of the same id).
    ///
    /// - Throws: when the lock or the file cannot be had, the entry's file would be larger than ``maximumSize``, or
    ///   its name is another toast's (two long ids of one hash, ``fileName(of:)``).
    package func put(_ entry: Entry) throws(PrivateFileError) {
        try withLock { () throws(PrivateFileError) in
            let before: Entry?
            switch current(entry.id) {
            case .none: before = nil
            case .entry(let found, let whole):
                guard found != entry || whole else { return }
                before = found
            case .other(let other): throw taken(entry.id, by: other)
            }
            _ = try write(entry, before: before)
        }
    }

    /// Forgets the schedule of `id`; whether there was one.
    @discardableResult
    package func remove(_ id: String) throws(PrivateFileError) -> Bool {
        try withLock { () throws(PrivateFileError) -> Bool in
            guard case .entry(let before, _) = current(id) else { return false }
            try delete(before)
            return true
        }
    }

    /// Takes the schedule of `id` due at `due` for this agent to show: false when it is gone (another agent of the
    /// user showed it, or it was cancelled or scheduled anew). Under the lock, so of two agents (two processes, or two
    /// threads) that claim one schedule, one only gets true.
    package func claim(_ id: String, due: Double) throws(PrivateFileError) -> Bool {
        try withLock { () throws(PrivateFileError) -> Bool in
            guard case .entry(let before, _) = current(id), before.due == due else { return false }
            try delete(before)
            return true
        }
    }

    /// Puts back toasts an agent claimed and no server showed (``ScheduleClaims``), due as they were (so at once),
    /// except those whose id was scheduled anew meanwhile: the newer schedule wins. Returns the ids put back; one that
    /// cannot be written is said in one line and lost (the others are put back all the same).
    package func giveBack(_ given: [Entry]) throws(PrivateFileError) -> [String] {
        try withLock { () throws(PrivateFileError) -> [String] in
            var putBack: [String] = []
            for entry in given {
                guard case .none = current(entry.id) else { continue }
                do {
                    _ = try write(entry, before: nil)
                    putBack.append(entry.id)
                } catch {
                    ErrorLine.write("warning: the scheduled toast \"\(entry.id)\" no server showed is lost: \(error)")
                }
            }
            return putBack
        }
    }

    // MARK: - Under the lock

    /// Runs `body` under the lock, once the file of an earlier version (if any) is taken in.
    private func withLock<Value>(_ body: () throws(PrivateFileError) -> Value) throws(PrivateFileError) -> Value {
        let lock = try PrivateFiles.Lock(lockPath)
        defer { lock.unlock() }
        if exists(oldPath) { takeInOldFile() }
        return try body()
    }

    /// What the file of an id holds.
    enum Current {
        /// No file (or one that could not be trusted, now set aside).
        case none
        /// The id's schedule, with its sender's whole environment when its runtime file is there; `whole`: the file
        /// itself has variables that are not kept.
        case entry(Entry, whole: Bool)
        /// Another toast's schedule, of the same hashed name.
        case other(String)
    }

    /// What the file of `id` holds (the lock is held; a file that cannot be trusted is set aside).
    func current(_ id: String) -> Current {
        let name = Self.fileName(of: id)
        guard let (entry, whole) = read(name, locked: true) else { return .none }
        return entry.id == id ? .entry(entry, whole: whole) : .other(entry.id)
    }

    private func taken(_ id: String, by other: String) -> PrivateFileError {
        PrivateFileError(
            "cannot keep scheduled toast \"\(id)\"",
            reason: "its file \(path(of: id)) is toast \"\(other)\"'s (two long ids of one hash): use a shorter --id")
    }

    /// Writes `given` as its file (the lock is held; `before` is what the file held): the sender's variables that are
    /// not kept go to a runtime file first, then the file is written, then the runtime file it named before, if it
    /// names another now, is removed. Returns the entry as written, with its token.
    @discardableResult
    func write(_ given: Entry, before: Entry?) throws(PrivateFileError) -> Entry {
        var entry = given
        setAside(&entry, before: before)
        let path = path(of: entry.id)
        let old = before?.setAside
        do throws(PrivateFileError) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var bytes: [UInt8]
            do {
                bytes = Array(try encoder.encode(EntryFile(format: Self.format, version: Self.version, toast: entry)))
            } catch {
                throw PrivateFileError("cannot encode \(path)", reason: "\(error)")
            }
            bytes.append(0x0A)
            guard bytes.count <= Self.maximumSize else {
                throw PrivateFileError(
                    "cannot keep scheduled toast \"\(entry.id)\"",
                    reason: "it takes \(bytes.count) bytes, more than the \(Self.maximumSize) a schedule may")
            }
            // The folder again, should someone have removed it.
            try PrivateFiles.prepareFolder(folder, tighten: false)
            try PrivateFiles.replace(path, with: bytes, sweeping: false)
        } catch {
            // The file is as it was: a runtime file written for it is not needed.
            if let token = entry.setAside, token != old { environments.remove(token) }
            throw error
        }
        if let old, old != entry.setAside { environments.remove(old) }
        return entry
    }

    /// Removes the file of `entry` and the runtime file it names (the lock is held); the removal is flushed to disk,
    /// so a toast claimed is not back after a crash.
    private func delete(_ entry: Entry) throws(PrivateFileError) {
        let path = path(of: entry.id)
        if unlink(path) != 0, errno != ENOENT { throw PrivateFileError.errno("cannot remove \(path)") }
        if let token = entry.setAside { environments.remove(token) }
        PrivateFiles.syncFolder(folder)
    }

    /// Puts the variables of `entry`'s sender that the file does not keep in a runtime file of a new token, unless
    /// `before` has them under the entry's token already. A file that cannot be written costs the toast nothing: it is
    /// kept with its token, and a reader finds no file (the kept variables only).
    private func setAside(_ entry: inout Entry, before: Entry?) {
        let rest = entry.request.environment.map { KeptEnvironment.split($0).rest } ?? [:]
        guard !rest.isEmpty else {
            // Nothing more than the kept variables; one whose rest was lost keeps its token, so it is still said.
            if !entry.setAsideLost { entry.setAside = nil }
            return
        }
        if let before, before.setAside != nil, before.setAside == entry.setAside, !before.setAsideLost,
            before.id == entry.id, before.request.environment == entry.request.environment
        {
            return
        }
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

    /// Under the lock: removes the temporary files of writers that died (`temporaries`, names in the folder), and
    /// writes anew each entry of `whole` whose file still holds it (the kept variables in it, the rest in a runtime
    /// file). Returns `whole` as written (as it was where it could not be).
    private func tidy(whole: [Entry], temporaries: [String]) -> [Entry] {
        let lock: PrivateFiles.Lock
        do {
            lock = try PrivateFiles.Lock(lockPath)
        } catch {
            ErrorLine.write("warning: \(error)")
            return whole
        }
        defer { lock.unlock() }
        for name in temporaries { unlink("\(folder)/\(name)") }
        return whole.map { entry in
            guard case .entry(let found, whole: true) = current(entry.id), found == entry else { return entry }
            do {
                return try write(entry, before: entry)
            } catch {
                ErrorLine.write("warning: \(error)")
                return entry
            }
        }
    }

    // MARK: - Reading

    /// What the file `name` holds, checked, with its sender's whole environment when its runtime file is there; nil
    /// when there is none, or it cannot be trusted: then it is set aside alone (``refuse(_:_:locked:)``). `whole`: the
    /// file itself has variables that are not kept.
    private func read(_ name: String, locked: Bool = false) -> (entry: Entry, whole: Bool)? {
        switch examine(name) {
        case .none: return nil
        case .refused(let error):
            refuse(name, error, locked: locked)
            return nil
        case .entry(let entry, let whole): return (whole ? entry : merged(entry), whole)
        }
    }

    /// `entry`, which has the kept variables only, with its sender's others when the runtime file it names is there
    /// (marked ``Entry/setAsideLost`` when not).
    func merged(_ entry: Entry) -> Entry {
        guard let token = entry.setAside else { return entry }
        var merged = entry
        if let more = environments.read(id: entry.id, token: token) {
            merged.request.environment = more.merging(entry.request.environment ?? [:]) { _, kept in kept }
        } else {
            merged.setAsideLost = true
        }
        return merged
    }

    private enum Examined {
        case none
        case entry(Entry, whole: Bool)
        case refused(any Error)
    }

    /// The file `name` as it is on disk, checked (``decode(_:name:)``).
    private func examine(_ name: String) -> Examined {
        do {
            guard let bytes = try PrivateFiles.contents(of: "\(folder)/\(name)", maximumSize: Self.maximumSize) else {
                return .none
            }
            let (entry, whole) = try Self.decode(bytes, name: name)
            return .entry(entry, whole: whole)
        } catch {
            return .refused(error)
        }
    }

    /// Sets the file `name`, which could not be trusted (`error`), aside: under the lock (taken here unless `locked`),
    /// and only if it still cannot be (a writer may have replaced it since it was read). Without the lock it stays,
    /// unread, for the next look.
    private func refuse(_ name: String, _ error: any Error, locked: Bool) {
        guard !locked else { return setAside(name, error) }
        let lock: PrivateFiles.Lock
        do {
            lock = try PrivateFiles.Lock(lockPath)
        } catch let lockError {
            ErrorLine.write("warning: the scheduled toast file \(folder)/\(name) is not read: \(error) (\(lockError))")
            return
        }
        defer { lock.unlock() }
        guard case .refused(let again) = examine(name) else { return }
        setAside(name, again)
    }

    /// Renames the file `name` `<name>.refused`, with one line on the log saying why (`reason`).
    private func setAside(_ name: String, _ reason: any Error) {
        let path = "\(folder)/\(name)"
        ErrorLine.write(
            "warning: the scheduled toast file \(path) is not read: \(reason); it is kept as \(path).refused")
        _ = rename(path, path + ".refused")
    }

    /// Whether something is at `path` (not followed).
    func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
