public import Glibc
import Synchronization

/// A child process started with `posix_spawn`, with a clean signal mask.
///
/// Foundation's `Process` hands the child the spawning thread's signal mask; test runner threads block most
/// signals, so such children ignore SIGTERM and SIGINT (a test of Ctrl-C handling would pass or hang for the
/// wrong reason). Children started here get an empty mask and default handlers, like from a shell.
public final class ChildProcess: Sendable {
    /// The child's pid.
    public let pid: pid_t

    private init(pid: pid_t) { self.pid = pid }

    /// Starts `path` with `arguments` (not including argv[0]); `fileDescriptors` maps child fd → parent fd
    /// (unmapped 0/1/2 go to /dev/null).
    public static func spawn(
        _ path: String,
        _ arguments: [String],
        environment: [String: String],
        fileDescriptors: [Int32: Int32] = [:]
    ) throws -> ChildProcess {
        try spawn(
            path, rawArguments: arguments.map { Array($0.utf8) }, environment: environment,
            fileDescriptors: fileDescriptors)
    }

    /// Starts `path` with arguments given as raw bytes (so a test can pass bytes that are not UTF-8).
    public static func spawn(
        _ path: String,
        rawArguments arguments: [[UInt8]],
        environment: [String: String],
        fileDescriptors: [Int32: Int32] = [:]
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for target in Int32(0)...2 where fileDescriptors[target] == nil {
            posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        for (target, source) in fileDescriptors { posix_spawn_file_actions_adddup2(&actions, source, target) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([Array(path.utf8)] + arguments).map { bytes in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
            pointer[bytes.count] = 0
            return pointer
        }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer {
            argv.forEach { $0?.deallocate() }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                posix_spawn(
                    &pid, path, &actions, &attributes, UnsafeMutablePointer(mutating: argvBuffer.baseAddress!),
                    UnsafeMutablePointer(mutating: envpBuffer.baseAddress!))
            }
        }
        guard result == 0 else {
            throw TestEnvironmentError("cannot start \(path): \(String(cString: strerror(result)))")
        }
        return ChildProcess(pid: pid)
    }

    /// Waits for the child to end; returns its exit status, or 128 + the signal that ended it.
    @discardableResult
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// Sends `signal`.
    public func signal(_ signal: Int32) { _ = kill(pid, signal) }
}

/// A one-way channel (a Unix socket pair used as a pipe) whose ends close themselves.
public final class PipePair: Sendable {
    /// The read end.
    public let readEnd: Int32
    /// The write end.
    public let writeEnd: Int32
    private let writeClosed = Atomic(false)

    /// A new channel, close-on-exec on both ends.
    public init() throws {
        var fds: [Int32] = [0, 0]
        // A socket pair made close-on-exec atomically, so a child spawned by a parallel test never inherits an
        // end (and keeps a reader from seeing end of file); posix_spawn's dup2 clears the flag on the copy.
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            throw TestEnvironmentError("socketpair: \(String(cString: strerror(errno)))")
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    /// Closes the write end (the reader then sees end of file once the child's copy is closed too).
    public func closeWriteEnd() {
        if !writeClosed.exchange(true, ordering: .acquiringAndReleasing) { close(writeEnd) }
    }

    /// Reads until end of file.
    public func readAll() -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(readEnd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// Reads one line (without the newline), or what there is at end of file.
    public func readLine() -> String {
        var data: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(readEnd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == UInt8(ascii: "\n") { break }
            data.append(byte)
        }
        return String(decoding: data, as: UTF8.self)
    }

    deinit {
        close(readEnd)
        closeWriteEnd()
    }
}

/// The first line a writer puts in the FIFO at `path`, or "" when none comes within `seconds`: opened for reading and
/// writing, so opening never waits for the writer, and polled with a bound (a blocking wait would outlive the suite's
/// time limit).
public func firstLine(ofFIFO path: String, within seconds: Int32) async throws -> String {
    try await onOwnThread { () -> String in
        let reader = open(path, O_RDWR | O_CLOEXEC)
        defer { close(reader) }
        var ready = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, seconds * 1000) == 1 else { return "" }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(reader, &bytes, bytes.count)
        var text = String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self)
        while text.last == "\n" { text.removeLast() }
        return text
    }
}

/// The lines writers put in a FIFO, read through one descriptor kept open from creation to the end: a writer that
/// comes right after another never finds the FIFO without a reader (its line would be lost with the pipe's buffer
/// when the last descriptor closed), and never waits for one.
public final class FIFOLines: @unchecked Sendable {
    private let descriptor: Int32
    /// Read but not yet returned (touched by one reader at a time: ``next(within:)`` is not called concurrently).
    private var buffer: [UInt8] = []

    /// Opens the FIFO at `path` for reading (and writing, so opening never waits).
    public init(_ path: String) {
        descriptor = open(path, O_RDWR | O_CLOEXEC)
    }

    deinit { close(descriptor) }

    /// The next line, or "" when none comes within `seconds`.
    public func next(within seconds: Int32) async throws -> String {
        try await onOwnThread { () -> String in
            while true {
                if let end = self.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: self.buffer[..<end], as: UTF8.self)
                    self.buffer.removeSubrange(...end)
                    return line
                }
                var ready = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, seconds * 1000) == 1 else { return "" }
                var bytes = [UInt8](repeating: 0, count: 4096)
                let count = read(self.descriptor, &bytes, bytes.count)
                guard count > 0 else { return "" }
                self.buffer += bytes.prefix(count)
            }
        }
    }
}
