// One `--user` child as root holds it: its pid, the pipes of its output and input, how it is looked at; and the
// signals root waits for, as bytes on a pipe. The loop that drives them is UserChildren's.
import CSpawn
import FreedesktopNotifications
import Glibc
import Synchronization

/// A child root started as a user, and the root ends of its pipes.
final class UserChildProcess {
    let pid: pid_t
    /// The user's name, for root's lines.
    let name: String
    private(set) var isAlive = true
    /// Its standard output and errors, copied to root's.
    private(set) var outputs: [OutputCopy]
    /// Its standard input, when root relays its own.
    let input: ChildInput

    private init(pid: pid_t, name: String, outputs: [OutputCopy], input: ChildInput) {
        self.pid = pid
        self.name = name
        self.outputs = outputs
        self.input = input
    }

    /// Starts `child` in a session of its own with no descriptor of root's but the pipes made here.
    static func start(_ child: UserChildren.Child, relaysInput: Bool, lineAtATime: Bool) -> Result<
        UserChildProcess, Errno
    > {
        var pipes: [[Int32]] = []
        defer { for ends in pipes { close(ends[1]) } }
        func pipe() -> [Int32]? {
            var ends: [Int32] = [-1, -1]
            guard pipe2(&ends, O_CLOEXEC) == 0 else { return nil }
            return ends
        }
        guard let output = pipe(), let errors = pipe() else { return .failure(Errno(errno)) }
        pipes = [output, errors]
        var inputEnds: [Int32]?
        if relaysInput {
            guard let ends = pipe() else {
                for ends in pipes { close(ends[0]) }
                return .failure(Errno(errno))
            }
            // Here the child reads, root writes: the child's end is [0].
            inputEnds = ends
        }
        let started = Spawn.start(
            child.argv, environment: child.environment, standardInput: inputEnds?[0], standardOutput: output[1],
            standardError: errors[1], newSession: true, workingDirectory: child.workingDirectory,
            closesOthers: true)
        if let inputEnds { close(inputEnds[0]) }
        guard case .success(let pid) = started else {
            for ends in pipes { close(ends[0]) }
            if let inputEnds { close(inputEnds[1]) }
            if case .failure(let error) = started { return .failure(error) }
            return .failure(Errno(EINVAL))
        }
        for descriptor in [output[0], errors[0], inputEnds?[1] ?? -1] where descriptor >= 0 {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        return .success(
            UserChildProcess(
                pid: pid, name: child.name,
                outputs: [
                    OutputCopy(descriptor: output[0], target: 1, lineAtATime: lineAtATime),
                    OutputCopy(descriptor: errors[0], target: 2, lineAtATime: lineAtATime),
                ], input: ChildInput(descriptor: inputEnds?[1] ?? -1)))
    }

    /// How the child stands, without waiting: its end or its stop, as ``UserDelivery`` events.
    func look(_ index: Int) -> [UserDelivery.Event] {
        guard isAlive else { return [] }
        var status: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &status, WNOHANG | WUNTRACED) } while reaped < 0 && errno == EINTR
        if reaped == 0 { return [] }
        if reaped == pid, status & 0xff == 0x7f { return [.stopped(index, signal: (status >> 8) & 0xff)] }
        isAlive = false
        return [.ended(index, reaped == pid ? ProgramEnd(waitStatus: status) : nil)]
    }

    /// Copies what the child wrote on the stream to `target` (1 or 2).
    func copy(_ target: Int32) {
        for stream in outputs where stream.target == target { stream.copy() }
    }

    /// Copies what is left of its output (it ended: all it wrote is in the pipes) and closes the pipes.
    func finishOutput() {
        for stream in outputs { stream.finish() }
        input.close()
    }
}

/// The root end of a child's output pipe, copied to root's own descriptor.
///
/// What a user's process writes is the user's: root bounds it. A line waiting for its end is written as it is past
/// ``lineLimit``; at the child's end only what is in the pipe then is copied (the user could keep the pipe full from
/// another process of theirs); and to a terminal, control characters are dropped (no escape sequence of the user's
/// reaches root's terminal), but for newlines and tabs.
final class OutputCopy {
    private(set) var descriptor: Int32
    /// Root's descriptor it goes to.
    let target: Int32
    private let lineAtATime: Bool
    private let toTerminal: Bool
    private var partial: [UInt8] = []
    /// A UTF-8 lead byte 0xC2 at the end of the last piece: the next byte decides whether it starts a C1 control.
    private var pendingLead = false

    /// The longest unfinished line kept for whole-line copying.
    static let lineLimit = 64 * 1024

    init(descriptor: Int32, target: Int32, lineAtATime: Bool) {
        self.descriptor = descriptor
        self.target = target
        self.lineAtATime = lineAtATime
        toTerminal = isatty(target) == 1
    }

    var isOpen: Bool { descriptor >= 0 }

    /// Reads what is there (at most `limit` bytes) and writes it on: whole lines when several children share root's
    /// output, so theirs never mix within a line.
    func copy(limit: Int = 65_536) {
        var buffer = [UInt8](repeating: 0, count: min(65_536, max(limit, 1)))
        var left = limit
        while descriptor >= 0, left > 0 {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, min($0.count, left)) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                if count == 0 || errno != EAGAIN { closeEnd() }
                return
            }
            left -= count
            let piece = clean(buffer[0..<count])
            if lineAtATime {
                let before = partial.count
                partial += piece
                if let last = piece.lastIndex(of: UInt8(ascii: "\n")) {
                    let end = before + (last - piece.startIndex)
                    RunCommand.writeAll(target, partial[...end])
                    partial.removeSubrange(...end)
                }
                if partial.count > Self.lineLimit {
                    RunCommand.writeAll(target, partial[...])
                    partial = []
                }
            } else {
                RunCommand.writeAll(target, piece[...])
            }
        }
    }

    /// Copies what is in the pipe now (the child ended: all it wrote is there) and closes it.
    func finish() {
        guard descriptor >= 0 else { return }
        var waiting: Int32 = 0
        // FIONREAD: what the pipe holds at this moment, never more (another process of the user may write on).
        if ioctl(descriptor, 0x541B, &waiting) == 0, waiting > 0 { copy(limit: Int(waiting)) }
        closeEnd()
    }

    /// The piece as it may be written: to a terminal, without control characters but newlines and tabs.
    private func clean(_ piece: ArraySlice<UInt8>) -> [UInt8] {
        guard toTerminal else { return Array(piece) }
        var kept: [UInt8] = []
        kept.reserveCapacity(piece.count)
        for byte in piece {
            if pendingLead {
                pendingLead = false
                // U+0080–U+009F, the C1 controls (CSI among them): dropped with their lead byte.
                if (0x80...0x9F).contains(byte) { continue }
                kept.append(0xC2)
            }
            if byte == 0xC2 {
                pendingLead = true
            } else if byte >= 0x20 && byte != 0x7F || byte == 0x0A || byte == 0x09 {
                kept.append(byte)
            }
        }
        return kept
    }

    private func closeEnd() {
        if pendingLead {
            partial.append(0xC2)
            pendingLead = false
        }
        if !partial.isEmpty {
            RunCommand.writeAll(target, partial[...])
            partial = []
        }
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}

/// The root end of a child's standard input: what root read and the child has not taken yet.
final class ChildInput {
    private(set) var descriptor: Int32
    private(set) var pending: [UInt8] = []
    private var closesWhenDrained = false

    init(descriptor: Int32) { self.descriptor = descriptor }

    var isOpen: Bool { descriptor >= 0 }
    var wantsToWrite: Bool { descriptor >= 0 && !pending.isEmpty }

    /// Queues `bytes` for the child.
    func append(_ bytes: ArraySlice<UInt8>) {
        if descriptor >= 0 { pending += bytes }
    }

    /// Writes what it can without blocking.
    func write() {
        while descriptor >= 0, !pending.isEmpty {
            let written = pending.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && errno == EAGAIN { return }
            if written <= 0 {
                // The child closed its input (EPIPE): what it did not read is dropped.
                close()
                return
            }
            pending.removeFirst(written)
        }
        if closesWhenDrained { close() }
    }

    /// Closes it once what is pending is written.
    func endOfInput() {
        closesWhenDrained = true
        if pending.isEmpty { close() }
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
        pending = []
    }
}

/// Root's standard input, read once and given to every child, no faster than the slowest takes it.
struct InputRelay {
    private var active: Bool
    private let label: String

    /// A relay of root's input (`active`) for the children of `label` (`--user all`).
    init(active: Bool, label: String) {
        self.active = active
        self.label = label
    }

    /// Whether to read more now: every child that still reads has taken all it was given.
    func wantsToRead(_ children: [UserChildProcess?]) -> Bool {
        guard active else { return false }
        // Paced by the fastest reader: one user who does not read never holds back the others' input (past
        // ``backlogLimit`` that user's input is closed).
        return children.compactMap { $0?.input }.contains { $0.isOpen && $0.pending.isEmpty }
    }

    /// The most of root's input kept for a child that has not read it: beyond, its input is closed, said in one line.
    static let backlogLimit = 1 << 20

    /// Reads a piece of root's input and queues it for every child; at its end, each child's input closes.
    mutating func read(into children: [UserChildProcess?]) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
        guard count > 0 else {
            active = false
            for child in children { child?.input.endOfInput() }
            return
        }
        for child in children.compactMap({ $0 }) where child.input.isOpen {
            child.input.append(buffer[0..<count])
            child.input.write()
            if child.input.pending.count > Self.backlogLimit {
                child.input.close()
                Output.error("\(label): \(child.name)'s command did not read its input; it was closed")
            }
        }
    }
}

/// Signals as bytes on a pipe: each handled signal writes its number, so a `poll` loop sees it with the rest.
final class SignalPipe {
    private static let writeEnd = Atomic<Int32>(-1)
    /// The end to poll and ``drain()``.
    let readEnd: Int32
    private let writeEnd: Int32
    private var previous: [(Int32, sigaction)] = []

    private init(readEnd: Int32, writeEnd: Int32) {
        self.readEnd = readEnd
        self.writeEnd = writeEnd
    }

    /// Handles `signals` until ``restore()`` (one installation at a time in a process).
    static func install(_ signals: [Int32]) -> SignalPipe {
        var ends: [Int32] = [-1, -1]
        _ = pipe2(&ends, O_CLOEXEC | O_NONBLOCK)
        let installed = SignalPipe(readEnd: ends[0], writeEnd: ends[1])
        // Handled, so never blocked here (a mask inherited from whoever started root would hide every child's end).
        var handled = sigset_t()
        sigemptyset(&handled)
        for number in signals { sigaddset(&handled, number) }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        writeEnd.store(ends[1], ordering: .sequentiallyConsistent)
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: received)
                _ = Glibc.write(SignalPipe.writeEnd.load(ordering: .sequentiallyConsistent), &byte, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            // SIGCHLD without SA_NOCLDSTOP: a child's stop is seen too.
            action.sa_flags = SA_RESTART
            var old = sigaction()
            sigaction(number, &action, &old)
            installed.previous.append((number, old))
        }
        return installed
    }

    /// The signals received since the last drain, in order.
    func drain() -> [Int32] {
        var signals: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return signals }
            signals += buffer[0..<count].map { Int32($0) }
        }
    }

    /// Puts the previous handlers back and closes the pipe.
    func restore() {
        for (number, old) in previous {
            var action = old
            sigaction(number, &action, nil)
        }
        Self.writeEnd.store(-1, ordering: .sequentiallyConsistent)
        close(readEnd)
        close(writeEnd)
    }
}
