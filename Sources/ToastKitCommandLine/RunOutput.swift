// A run's output (`toastkit run`): the last lines, for its toast, and the whole of it, in the run's log.
import FoundationEssentials
import Glibc
import Synchronization
import ToastKit
import ToastKitAgent

/// The last lines of a run's output (both streams, as they came), for the toast.
final class OutputTail: Sendable {
    private struct State {
        var lines: [String] = []
        var partial: [UInt8] = []
    }

    private let state = Mutex(State())
    private let count: Int

    init(lines: Int) {
        count = lines
    }

    /// Takes a piece of output. Only the end of it is looked at: the last lines it completes (as many as the tail
    /// keeps, blank ones not counted) and what follows them, so a chatty command costs little more than its bytes'
    /// copy.
    func append(_ bytes: ArraySlice<UInt8>) {
        guard count > 0, !bytes.isEmpty else { return }
        state.withLock { state in
            guard let lastNewline = bytes.lastIndex(of: 0x0A) else {
                Self.extend(&state.partial, with: bytes)
                return
            }
            // The complete lines this piece ends, newest first, until `count` that are not blank.
            var found: [ArraySlice<UInt8>] = []
            var notBlank = 0
            var end = lastNewline
            var start = bytes.startIndex
            var reachedStart = false
            while true {
                if let previous = bytes[bytes.startIndex..<end].lastIndex(of: 0x0A) {
                    start = previous + 1
                } else {
                    start = bytes.startIndex
                    reachedStart = true
                }
                let line = bytes[start..<end]
                var kept = line.prefix(400)
                if reachedStart {
                    // The first line of the piece continues the unfinished one.
                    var first = state.partial
                    Self.extend(&first, with: line)
                    kept = first[...]
                }
                found.append(kept)
                // Counted as the toast shows it: the first 400 bytes.
                if !Self.isBlank(kept) { notBlank += 1 }
                if reachedStart || notBlank >= count { break }
                end = start - 1
            }
            if !reachedStart { state.lines = [] }
            for line in found.reversed() { Self.keep(Array(line), in: &state.lines, count: count) }
            state.partial = []
            Self.extend(&state.partial, with: bytes[(lastNewline + 1)...])
        }
    }

    private static func extend(_ partial: inout [UInt8], with bytes: ArraySlice<UInt8>) {
        let room = 400 - partial.count
        if room > 0 { partial.append(contentsOf: bytes.prefix(room)) }
    }

    private static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 < 0x20 || $0 == 0x7F }
    }

    /// The last lines, the unfinished one included; blank lines left out, control characters dropped.
    var lines: [String] {
        state.withLock { state in
            var lines = state.lines
            if !state.partial.isEmpty { Self.keep(state.partial, in: &lines, count: count) }
            return lines
        }
    }

    private static func keep(_ bytes: [UInt8], in lines: inout [String], count: Int) {
        let text = String(decoding: bytes, as: UTF8.self).unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }
        let line = trimmed(String(String.UnicodeScalarView(text)))
        guard !line.isEmpty else { return }
        lines.append(line)
        if lines.count > count { lines.removeFirst(lines.count - count) }
    }
}

/// The whole output of a run: `$XDG_STATE_HOME/toastkit/runs/<time>-<pid>.log` (0600, in a 0700 folder); the 20 newest
/// are kept. Without a place for it, the run goes on without a log and its toast without the output action.
struct RunLog {
    let path: String?
    let descriptor: Int32?

    init(environment: [String: String]) {
        guard let state = PrivateFiles.stateFolder(environment: environment) else {
            (path, descriptor) = (nil, nil)
            return
        }
        let folder = state + "/runs"
        do throws(PrivateFileError) {
            try PrivateFiles.prepareFolder(folder, tighten: true)
        } catch {
            Output.error("warning: run: no log of the output: \(error)")
            (path, descriptor) = (nil, nil)
            return
        }
        let stamp = Spawn.timestamp().filter { $0 != "-" && $0 != ":" }
        let file = "\(folder)/\(stamp)-\(getpid()).log"
        let opened = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard opened >= 0 else {
            Output.error(
                "warning: run: no log of the output: cannot create \(file): \(String(cString: strerror(errno)))")
            (path, descriptor) = (nil, nil)
            return
        }
        (path, descriptor) = (file, opened)
    }

    func close() {
        if let descriptor { Glibc.close(descriptor) }
    }

    /// Removes the oldest logs beyond the 20 newest (their names sort by time); run does it while its command runs,
    /// since removing a large log takes the file system a while.
    func pruneOlder() {
        guard let path, let slash = path.lastIndex(of: "/") else { return }
        Self.prune(String(path[..<slash]), keeping: 20)
    }

    private static func prune(_ folder: String, keeping count: Int) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let logs = names.filter { $0.hasSuffix(".log") }.sorted()
        for name in logs.dropLast(count) { unlink("\(folder)/\(name)") }
    }
}
