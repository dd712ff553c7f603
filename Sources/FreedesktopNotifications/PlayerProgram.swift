// Runs one sound player program for one file until it ends (or its time is up), and says why it failed in the
// player's own words: the last line it wrote.
import CSpawn
import Dispatch
import Glibc

/// A sound player program run for one file, in a session of its own (a script's Ctrl-C does not cut the sound), its
/// standard output and errors read as it runs: a player that cannot reach the sound server says why there
/// (`Connection failure: Connection refused`), and that line ends the reason it could not play.
enum PlayerProgram {
    /// The most of a player's output kept (its end), and the longest line of it a reason quotes.
    static let keptOutput = 4096
    static let quotedLine = 200

    /// Runs `argv` with `file` added until it ends (a pidfd says when; stopped after `limit`): nil when it played
    /// (exit 0), else why not — `paplay: exit 1: Connection failure: Connection refused`.
    static func run(_ argv: [String], file: String, environment: [String: String], limit: Duration) -> String? {
        guard let program = argv.first else { return "the sound player command is empty" }
        var ends: [Int32] = [-1, -1]
        let piped = pipe2(&ends, O_CLOEXEC) == 0
        let pid: Int32
        let started = Spawn.start(
            argv + [file], environment: environment, output: piped ? ends[1] : nil, newSession: true)
        if piped { close(ends[1]) }
        switch started {
        case .success(let started): pid = started
        case .failure(let error):
            if piped { close(ends[0]) }
            return "the sound player \(program) could not start: \(error)"
        }
        let reader: Int32? = piped ? ends[0] : nil
        let descriptor = pidfd_open(pid, 0)
        guard descriptor >= 0 else {
            // No pidfd (a kernel before 5.3): it plays on, its output read until it closes it, reaped when it ends, its
            // end not waited for.
            DispatchQueue.global(qos: .utility).async {
                if let reader {
                    var tail = OutputTail()
                    while tail.read(from: reader) {}
                    close(reader)
                }
                _ = Spawn.wait(pid)
            }
            return nil
        }
        var tail = OutputTail()
        let ended = waitForEnd(descriptor, reading: reader, into: &tail, limit: limit)
        close(descriptor)
        if !ended {
            // Its whole process group: it leads one of its own (a new session), and a wrapper's children go too.
            kill(-pid, SIGKILL)
        }
        let end = Spawn.wait(pid)
        if let reader {
            // What it wrote last, without waiting for an end of file a child of its may hold off.
            _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
            while tail.read(from: reader) {}
            close(reader)
        }
        guard ended else { return "the sound player \(program) did not end within \(limit): stopped" }
        switch end {
        case .ended(.exited(0)): return nil
        case .ended(let end):
            guard let line = tail.lastLine else { return "\(program): \(end)" }
            return "\(program): \(end): \(line)"
        // Reaped by someone else (the kernel, SIGCHLD being ignored): its end is not known, and it started.
        case .notSeen, .running: return nil
        }
    }

    /// Waits until the process of pidfd `descriptor` ends, for at most `limit`, reading `reader` (its output) into
    /// `tail` meanwhile so that a talkative player never blocks on a full pipe. Returns whether it ended.
    private static func waitForEnd(
        _ descriptor: Int32, reading reader: Int32?, into tail: inout OutputTail, limit: Duration
    ) -> Bool {
        let deadline = ContinuousClock.now + limit
        var pollers = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            // A negative descriptor is passed over by poll: no pipe, or its end of file was read.
            pollfd(fd: reader ?? -1, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            let ready = poll(&pollers, 2, Int32(clamping: max(1, milliseconds)))
            if ready < 0 {
                guard errno == EINTR else { return false }
                continue
            }
            if pollers[0].revents != 0 { return true }
            if pollers[1].revents != 0, !tail.read(from: pollers[1].fd) { pollers[1].fd = -1 }
        }
    }
}

/// The end of a player's output: its last ``PlayerProgram/keptOutput`` bytes.
struct OutputTail {
    private(set) var bytes: [UInt8] = []

    /// Reads once from `descriptor`; false at its end of file, or when there is nothing to read now (non-blocking) or
    /// it fails.
    mutating func read(from descriptor: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(descriptor, &buffer, buffer.count)
        if count < 0, errno == EINTR { return true }
        guard count > 0 else { return false }
        bytes += buffer.prefix(count)
        if bytes.count > PlayerProgram.keptOutput { bytes.removeFirst(bytes.count - PlayerProgram.keptOutput) }
        return true
    }

    /// The last line with something on it, without the spaces around it (at most ``PlayerProgram/quotedLine``
    /// characters), or nil.
    var lastLine: String? {
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
        guard let line = lines.last(where: { !SoundTheme.trimmed($0).isEmpty }) else { return nil }
        let text = SoundTheme.trimmed(line)
        return text.count > PlayerProgram.quotedLine ? String(text.prefix(PlayerProgram.quotedLine)) + "…" : text
    }
}
