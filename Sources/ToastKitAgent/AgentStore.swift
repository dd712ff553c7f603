import FoundationEssentials
import Glibc
import Synchronization
import ToastKit
package import ToastModel

/// The agent's saved toasts: one journal per session bus, `agent-<bus id>.json` in the same private folder as the
/// `--id` store (``RuntimeFolder``: `$XDG_RUNTIME_DIR/toastkit/`, else the user's `/run/user/<uid>/toastkit/`, else
/// `/tmp/toastkit-<uid>/` unless another user took that name), so an agent that is killed leaves the toasts it had for
/// the next agent **of the same bus** to adopt.
///
/// The file is JSON lines: a header naming the format version and the bus, then one record per change — a toast put
/// (presented, or replaced), its server id, its timer started or stopped, its end — appended and flushed to disk
/// (`fdatasync`) in batches (``AgentSaver``): a change costs one appended line, not a rewrite of every live toast, so a
/// `Present` costs the same with 10,000 toasts live as with none. When the appended lines outnumber twice the live
/// toasts, the journal is compacted: rewritten crash-safe (temporary file, `fsync`, rename) as the header and one put
/// per live toast. A crash mid-append leaves a torn last line, which is ignored; the lines before it stand.
///
/// The bus id (`org.freedesktop.DBus.GetId`) is new for every bus: an agent on another session, after a logout and
/// login, or on a bus started by a test never sees this file (docs/decisions/0006-agent-lanes-and-sessions.md).
///
/// Only the agent that owns `org.toastkit.Agent1` on that bus writes it, so it needs no lock. What is read back is
/// checked before it is trusted: the file must be this user's own regular file of at most ``maximumSize`` bytes
/// (opened without blocking or following a link), of this format's version, for this bus, with values in range;
/// anything else is set aside with one line on the log and never adopted.
package final class AgentStore: Sendable {
    /// The journal's first line.
    private struct Header: Codable {
        var format: String
        var version: Int
        var busID: String

        enum CodingKeys: String, CodingKey {
            case format, version
            case busID = "bus_id"
        }
    }

    /// The format this version writes and reads (1 was one JSON document shared by every bus: never adopted).
    package static let version = 2
    package static let format = "toastkit-agent-journal"
    /// The largest saved file read back: far above what the bound on live toasts can produce.
    package static let maximumSize = 64 << 20

    /// The file.
    package let path: String
    /// The bus the file belongs to.
    package let busID: String

    /// The open journal (appends), and how many records it has beyond its last compaction. Touched by the saver's
    /// one writer only.
    private struct Writer {
        var descriptor: Int32 = -1
        var records = 0
    }
    private let writer = Mutex(Writer())

    private init(path: String, busID: String) {
        self.path = path
        self.busID = busID
    }

    deinit {
        writer.withLock { writer in
            if writer.descriptor >= 0 { close(writer.descriptor) }
        }
    }

    /// Opens the store of bus `busID`, creating its folder (0700) or making it private.
    package static func open(environment: [String: String], busID: String) throws(PrivateFileError) -> AgentStore {
        try open(kind: "agent", environment: environment, busID: busID)
    }

    /// Opens the hand-over file of bus `busID` (`handover-<bus id>.json`, beside the journal): the toast a `send`
    /// showed itself while no agent ran, for the agent it started to take over (docs/decisions/0007-hand-over.md).
    /// The same format and checks as the journal; written once by ``createHandOver(_:)``, read and removed by the
    /// agent.
    package static func handOver(environment: [String: String], busID: String) throws(PrivateFileError) -> AgentStore {
        try open(kind: "handover", environment: environment, busID: busID)
    }

    private static func open(kind: String, environment: [String: String], busID: String) throws(PrivateFileError)
        -> AgentStore
    {
        let directory = RuntimeFolder.path(environment: environment)
        try PrivateFiles.prepareFolder(directory, tighten: true)
        // A bus id is 32 hex digits; anything else (a bus that answers oddly) still gets a file name of its own, the
        // same in every agent (FNV-1a: `hashValue` is seeded anew in each process).
        let safe = busID.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
        let hash = busID.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        let name = safe && !busID.isEmpty ? busID : "bus-" + String(hash, radix: 16)
        return AgentStore(path: "\(directory)/\(kind)-\(name).json", busID: busID)
    }

    /// Whether the file exists (a link or anything else at the path counts: it is not followed).
    package var exists: Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Writes `toast` as the whole file, created here (never over an existing one, never through a link) and
    /// flushed to disk before this returns.
    ///
    /// - Returns: false, writing nothing, when the file already exists (a hand-over the agent has not taken yet).
    package func createHandOver(_ toast: Saved) throws(PrivateFileError) -> Bool {
        let bytes = try line(header) + line(Record.put(toast))
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if descriptor < 0 {
            if errno == EEXIST { return false }
            throw PrivateFileError.errno("cannot write \(path)")
        }
        defer { close(descriptor) }
        do throws(PrivateFileError) {
            try Self.write(bytes, to: descriptor, path: path)
        } catch {
            // Half a file must not stand for a toast: the caller hands the toast over another way.
            unlink(path)
            throw error
        }
        return true
    }

    /// Removes the file, taken over.
    package func removeHandOver() {
        unlink(path)
    }

    /// Seconds since 1970 (the saved time survives the agent; the folder does not survive a reboot).
    package static func now() -> Double {
        Date().timeIntervalSince1970
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    private func line(_ value: some Encodable) throws(PrivateFileError) -> [UInt8] {
        do {
            return Array(try Self.encoder.encode(value)) + [0x0A]
        } catch {
            throw PrivateFileError("cannot encode \(path)", reason: "\(error)")
        }
    }

    private var header: Header { Header(format: Self.format, version: Self.version, busID: busID) }

    /// Appends `records` in one write and flushes them to disk. Returns how many records the journal holds beyond
    /// its last compaction.
    @discardableResult
    package func append(_ records: [Record]) throws(PrivateFileError) -> Int {
        var bytes: [UInt8] = []
        for record in records { bytes += try line(record) }
        return try writer.withLock { writer throws(PrivateFileError) -> Int in
            if writer.descriptor < 0 {
                let descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
                guard descriptor >= 0 else { throw PrivateFileError.errno("cannot write \(path)") }
                var info = stat()
                guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid()
                else {
                    close(descriptor)
                    throw PrivateFileError("cannot write \(path)", reason: "it is not this user's regular file")
                }
                writer.descriptor = descriptor
                if info.st_size == 0 { bytes = try line(header) + bytes }
            }
            // A write cut short (a full disk) must not leave half a line for the next append to glue onto.
            let before = lseek(writer.descriptor, 0, SEEK_END)
            do throws(PrivateFileError) {
                try Self.write(bytes, to: writer.descriptor, path: path)
            } catch {
                if before >= 0 { _ = ftruncate(writer.descriptor, before) }
                throw error
            }
            writer.records += records.count
            return writer.records
        }
    }

    /// Rewrites the journal as the header and one put per toast of `toasts` (removes it when there are none).
    package func compact(_ toasts: [Saved]) throws(PrivateFileError) {
        try writer.withLock { writer throws(PrivateFileError) in
            if writer.descriptor >= 0 { close(writer.descriptor) }
            writer.descriptor = -1
            writer.records = 0
            if toasts.isEmpty {
                if unlink(path) != 0 && errno != ENOENT { throw PrivateFileError.errno("cannot remove \(path)") }
                return
            }
            let at = Self.now()
            var bytes = try line(header)
            for toast in toasts.sorted(by: { $0.id < $1.id }) { bytes += try line(Record.put(toast, at: at)) }
            try PrivateFiles.replace(path, with: bytes)
        }
    }

    /// Removes the file: its bus has closed, and its toasts with it.
    package func remove() throws(PrivateFileError) {
        try compact([])
    }

    private static func write(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(PrivateFileError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw PrivateFileError.errno("cannot write \(path)")
            }
            offset += written
        }
        guard fdatasync(descriptor) == 0 else { throw PrivateFileError.errno("cannot write \(path)") }
    }

    /// Why a saved file is not adopted.
    package struct Refusal: Error, CustomStringConvertible {
        package var description: String
    }

    /// The saved toasts, each with how many seconds ago its timer state was saved; nothing for a missing file. A
    /// file that cannot be trusted or read is set aside as `<file>.refused` with one line on stderr (never silently
    /// dropped, never fatal, never opened in a way that could block).
    package func load(now: Double = AgentStore.now()) -> [(toast: Saved, age: Double)] {
        do {
            guard let bytes = try PrivateFiles.contents(of: path, maximumSize: Self.maximumSize) else { return [] }
            let toasts = try Self.decode(bytes, busID: busID, now: now)
            // A torn last line (a crash mid-append) is cut off, so the next append starts a line of its own.
            if let last = bytes.lastIndex(of: 0x0A), last + 1 < bytes.count {
                let descriptor = Glibc.open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
                if descriptor >= 0 {
                    _ = ftruncate(descriptor, off_t(last + 1))
                    close(descriptor)
                }
            }
            return toasts
        } catch {
            ErrorLine.write(
                "warning: the agent's saved toasts are not adopted: \(error); the file is kept as \(path).refused")
            _ = rename(path, path + ".refused")
            return []
        }
    }

    /// The toasts a journal's `bytes` leave live, every value checked, each with the age of its timer state.
    package static func decode(_ bytes: [UInt8], busID: String, now: Double) throws -> [(toast: Saved, age: Double)] {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        // The last line is empty when the file ends in a newline, and torn when a write was cut short by a crash.
        if let last = lines.last, bytes.last != 0x0A || last.isEmpty { lines.removeLast() }
        let decoder = JSONDecoder()
        guard let first = lines.first, let header = try? decoder.decode(Header.self, from: Data(first)),
            header.format == format
        else { throw Refusal(description: "it is not a saved-toasts journal of version \(version)") }
        guard header.version == version else {
            throw Refusal(description: "version \(header.version) is not \(version)")
        }
        guard header.busID == busID else {
            throw Refusal(description: "it belongs to bus \(header.busID), not \(busID)")
        }
        var live: [String: (toast: Saved, at: Double)] = [:]
        var order: [String] = []
        for (number, text) in lines.enumerated().dropFirst() {
            let record: Record
            do {
                record = try decoder.decode(Record.self, from: Data(text))
            } catch let refusal as Refusal {
                throw Refusal(description: "line \(number + 1): \(refusal.description)")
            } catch {
                throw Refusal(description: "line \(number + 1) is not a record")
            }
            try check(record, line: number + 1, now: now)
            switch record.op {
            case "put":
                guard let toast = record.toast else { throw Refusal(description: "line \(number + 1): no toast") }
                if live[toast.id] == nil { order.append(toast.id) }
                live[toast.id] = (toast, record.at)
            case "server":
                guard let id = record.id, let serverID = record.serverID else { continue }
                live[id]?.toast.serverID = serverID
                live[id]?.toast.server = record.server
            case "timer":
                guard let id = record.id, let running = record.running, live[id] != nil else { continue }
                live[id]?.toast.remaining = record.remaining
                live[id]?.toast.running = running
                live[id]?.at = record.at
            case "end":
                guard let id = record.id else { continue }
                live[id] = nil
            default:
                throw Refusal(description: "line \(number + 1): unknown record \"\(record.op)\"")
            }
            guard live.count <= AgentLimits.maximumLive else {
                throw Refusal(description: "more than \(AgentLimits.maximumLive) live toasts")
            }
        }
        return order.compactMap { id in live[id].map { ($0.toast, max(0, now - $0.at)) } }
    }

    /// Refuses a record whose values no agent could have written.
    private static func check(_ record: Record, line: Int, now: Double) throws {
        // A save from the future (a clock set back) counts as just now; one from before 2020 is not believed.
        guard record.at.isFinite, record.at > 1_577_836_800, record.at < now + 86_400 else {
            throw Refusal(description: "line \(line): the time \(record.at) is not one this agent can believe")
        }
        let id = record.toast?.id ?? record.id ?? ""
        guard !id.isEmpty else { throw Refusal(description: "line \(line): the toast id is empty") }
        for remaining in [record.remaining, record.toast?.remaining].compactMap({ $0 }) {
            guard remaining.isFinite, remaining >= 0, remaining <= ToastDuration.maximumSeconds else {
                throw Refusal(description: "toast \"\(id)\": remaining \(remaining) is out of range")
            }
        }
    }
}
