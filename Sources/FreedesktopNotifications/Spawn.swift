import CSpawn
import Glibc

/// Starts programs for ToastKit's processes, and reads how they ended: a sound player (for a server that plays no
/// sound), a reply prompt, the agent itself (detached, from `send`), `--on-action` commands (from the agent) and the
/// commands of `toastkit run` and `--user`. Always with a clean signal mask and default dispositions for the signals
/// `toastkit` handles or ignores, so its own handling never leaks into the program.
package enum Spawn {
    /// Starts `argv` (`argv[0]` looked up on `environment`'s `PATH` when it has no slash) with `environment`; standard input is
    /// `/dev/null`, standard output and errors go to `output` (or `/dev/null`). `newSession` puts it in a session
    /// of its own (`setsid`), so the terminal's Ctrl-C and hang-up never reach it. With `workingDirectory` it starts
    /// in that folder (a folder that is gone is a failure to start, `ENOENT`, never another folder).
    ///
    /// - Returns: the process id, or the `errno` of the failure.
    package static func start(
        _ argv: [String], environment: [String: String], output: Int32?, newSession: Bool,
        workingDirectory: String? = nil
    ) -> Result<Int32, Errno> {
        start(
            argv.map { Array($0.utf8) }, environment: environment, standardInput: nil,
            standardOutput: output, standardError: output, newSession: newSession, workingDirectory: workingDirectory)
    }

    /// Starts `argv` (raw bytes) with `environment`. Standard input is `standardInput` when given, `/dev/null` when
    /// nil (or, with `inheritsInput`, this process's); standard output and errors go to the descriptors given,
    /// `/dev/null` when nil. With `closesOthers`, every other descriptor is closed in the program, whether or not it
    /// is close-on-exec.
    ///
    /// A program named without a slash is looked up on the `PATH` of `environment` — the program's own, never this
    /// process's (`posix_spawnp` would search this process's) — with relative entries taken from
    /// `workingDirectory`, as the program's own shell would find it; without `PATH`, on `/bin:/usr/bin`.
    package static func start(
        _ argv: [[UInt8]], environment: [String: String], standardInput: Int32?, inheritsInput: Bool = false,
        standardOutput: Int32?, standardError: Int32?, newSession: Bool, workingDirectory: String? = nil,
        closesOthers: Bool = false
    ) -> Result<Int32, Errno> {
        guard let name = argv.first else { return .failure(Errno(EINVAL)) }
        let program: [UInt8]
        switch ProgramPath.find(name, path: environment["PATH"], workingDirectory: workingDirectory) {
        case .success(let found): program = found
        case .failure(let error): return .failure(error)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let workingDirectory { posix_spawn_file_actions_addchdir_np(&actions, workingDirectory) }
        if let standardInput {
            posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        } else if !inheritsInput {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        for (descriptor, target) in [(standardOutput, Int32(1)), (standardError, Int32(2))] {
            if let descriptor {
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        // POSIX_SPAWN_SETSID (glibc 2.26), which the Glibc module does not export without _GNU_SOURCE.
        if newSession { flags |= 0x80 }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        if closesOthers { posix_spawn_file_actions_addclosefrom_np(&actions, 3) }

        var pid: pid_t = 0
        let result = withCStrings([program] + argv) { arguments in
            withCStrings(environment.map { Array("\($0.key)=\($0.value)".utf8) }) { variables in
                posix_spawn(&pid, arguments[0]!, &actions, &attributes, Array(arguments.dropFirst()), variables)
            }
        }
        return result == 0 ? .success(pid) : .failure(Errno(result))
    }

    /// Waits for the started program `pid` (without blocking when `blocking` is false), through interruptions.
    package static func wait(_ pid: Int32, blocking: Bool = true) -> Wait {
        var status: Int32 = 0
        var reaped: Int32
        repeat { reaped = waitpid(pid, &status, blocking ? 0 : WNOHANG) } while reaped < 0 && errno == EINTR
        if reaped == 0 { return .running }
        // ECHILD: the kernel reaped it (SIGCHLD ignored after all), or another waiter took it.
        return reaped == pid ? .ended(ProgramEnd(waitStatus: status)) : .notSeen
    }

    /// What a wait for a started program found.
    package enum Wait: Equatable, Sendable {
        /// It still runs (a wait that does not block).
        case running
        /// It ended, so.
        case ended(ProgramEnd)
        /// It is gone but its end was not seen here: reaped elsewhere.
        case notSeen

        /// How it ended, when that was seen.
        package var end: ProgramEnd? {
            if case .ended(let end) = self { end } else { nil }
        }
    }

    /// Opens `path` for appending (created 0600, never through a symbolic link), or nil.
    package static func openLog(_ path: String) -> Int32? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        return descriptor >= 0 ? descriptor : nil
    }

    /// Appends `line` to an open log.
    package static func append(_ line: String, to descriptor: Int32) {
        _ = line.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
    }

    /// The current time, UTC, as `2026-12-01T10:00:00Z`.
    package static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}

/// How a program ended, read from its `waitpid` status: one reading for every program ToastKit starts.
package enum ProgramEnd: Equatable, Sendable, CustomStringConvertible {
    /// It exited with this code.
    case exited(Int32)
    /// This signal ended it.
    case signaled(Int32)

    /// Reads a `waitpid` status.
    package init(waitStatus status: Int32) {
        self = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
    }

    /// "exit 3" or "signal 9", as logs and reasons say it.
    package var description: String {
        switch self {
        case .exited(let code): "exit \(code)"
        case .signaled(let signal): "signal \(signal)"
        }
    }

    /// The status a shell gives it: the exit code, or 128 and the signal.
    package var shellStatus: Int32 {
        switch self {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    }
}

/// An `errno` value with its text.
package struct Errno: Error, Sendable, CustomStringConvertible {
    /// The `errno` value.
    package var code: Int32
    /// The error for `code`.
    package init(_ code: Int32) { self.code = code }
    /// Its text (`strerror`).
    package var description: String { String(cString: strerror(code)) }
}

/// Calls `body` with a NULL-terminated C array of `strings`.
private func withCStrings<R>(_ strings: [[UInt8]], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { bytes in
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (index, byte) in bytes.enumerated() { copy[index] = CChar(bitPattern: byte) }
        copy[bytes.count] = 0
        return copy
    }
    pointers.append(nil)
    defer { for pointer in pointers { pointer?.deallocate() } }
    return body(pointers)
}
