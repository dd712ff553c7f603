import Foundation
import Glibc
import Synchronization
import TestSupport
import ToastKitAgent

/// Runs the built `toastkit` binary in a child process with a clean signal mask (posix_spawn), with arguments
/// given as raw bytes (so tests can pass bytes that are not UTF-8) and pipes for stdin, stdout and stderr.
final class ToolProcess: Sendable {
    let pid: pid_t
    let stdout: PipePair
    let stderr: PipePair
    private let stdin: PipePair

    /// What a finished run left.
    struct Result: Sendable {
        var status: Int32
        var output: String
        var error: String
        var lines: [String] { output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The binary: `TOASTKIT_BINARY` when set (scripts/test.sh runs this suite again with the fully static
    /// release build of scripts/build-cli.sh), else the one next to the test bundle (`swift build --build-tests`
    /// builds it there).
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["TOASTKIT_BINARY"], !path.isEmpty { return path }
        return builtExecutable("toastkit")
    }()

    /// Whether ``binary`` is statically linked: its ELF program headers have no `PT_INTERP` (no dynamic loader).
    static let isStatic: Bool = {
        guard let elf = FileManager.default.contents(atPath: binary), elf.count > 64 else { return false }
        func number(at offset: Int, size: Int) -> Int {
            (0..<size).reduce(0) { $0 | Int(elf[offset + $1]) << (8 * $1) }
        }
        let (offset, size, count) = (number(at: 0x20, size: 8), number(at: 0x36, size: 2), number(at: 0x38, size: 2))
        return !(0..<count).contains { index in
            let start = offset + index * size
            return start + 4 <= elf.count && number(at: start, size: 4) == 3  // PT_INTERP
        }
    }()

    /// The package's executable `name` as `swift build --build-tests` left it, next to the test bundle.
    static func builtExecutable(_ name: String) -> String {
        var candidates: [String] = []
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent(name).path)
        }
        let first = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        candidates.append(first.appendingPathComponent(name).path)
        for bundle in Bundle.allBundles {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent(name).path)
        }
        candidates.append("\(NotificationEnvironment.repositoryRoot)/.build/debug/\(name)")
        return candidates.first { access($0, X_OK) == 0 } ?? candidates[0]
    }

    private init(pid: pid_t, stdin: PipePair, stdout: PipePair, stderr: PipePair) {
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
    }

    /// Starts `toastkit` (or `executable`: a launcher such as `bwrap` or `flatpak` that runs it) with `arguments`.
    static func start(
        _ arguments: [[UInt8]], environment: [String: String], executable: String = binary
    ) throws -> ToolProcess {
        let stdin = try PipePair()
        let stdout = try PipePair()
        let stderr = try PipePair()
        let child = try ChildProcess.spawn(
            executable, rawArguments: arguments, environment: environment,
            fileDescriptors: [0: stdin.readEnd, 1: stdout.writeEnd, 2: stderr.writeEnd])
        let pid = child.pid
        stdout.closeWriteEnd()
        stderr.closeWriteEnd()
        return ToolProcess(pid: pid, stdin: stdin, stdout: stdout, stderr: stderr)
    }

    /// Writes `bytes` (a few lines: less than a pipe holds) to the child's stdin and leaves it open.
    func writeInput(_ bytes: [UInt8]) {
        let written = bytes.withUnsafeBytes { write(stdin.writeEnd, $0.baseAddress!, $0.count) }
        precondition(written == bytes.count, "a short write to the child's stdin: \(written) of \(bytes.count)")
    }

    /// Writes `bytes` to the child's stdin on a thread of its own, then closes it.
    func feed(_ bytes: [UInt8]?) {
        let stdin = self.stdin
        let thread = Thread {
            if let bytes {
                var offset = 0
                while offset < bytes.count {
                    let written = bytes.withUnsafeBytes {
                        write(stdin.writeEnd, $0.baseAddress! + offset, $0.count - offset)
                    }
                    if written < 0 && errno == EINTR { continue }
                    if written <= 0 { break }
                    offset += written
                }
            }
            stdin.closeWriteEnd()
        }
        thread.start()
    }

    /// The next stdout line, read on a thread of its own (so the test's task never blocks a pool thread).
    func nextLine() async -> String {
        let stdout = self.stdout
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: stdout.readLine()) }.start()
        }
    }

    /// The next stderr line.
    func nextErrorLine() async -> String {
        let stderr = self.stderr
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: stderr.readLine()) }.start()
        }
    }

    /// Sends `signal` to the child.
    func signal(_ signal: Int32) { _ = kill(pid, signal) }

    /// Reads what is left on stdout and stderr and waits for the exit.
    func finish() async -> Result {
        let (stdout, stderr, pid) = (self.stdout, self.stderr, self.pid)
        return await withCheckedContinuation { continuation in
            Thread {
                let errorBox = Mutex<[UInt8]>([])
                let readerDone = DispatchSemaphore(value: 0)
                Thread {
                    let bytes = stderr.readAll()
                    errorBox.withLock { $0 = bytes }
                    readerDone.signal()
                }.start()
                let output = stdout.readAll()
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                readerDone.wait()
                let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                continuation.resume(
                    returning: Result(
                        status: code, output: String(decoding: output, as: UTF8.self),
                        error: String(decoding: errorBox.withLock { $0 }, as: UTF8.self)))
            }.start()
        }
    }
}

/// Runs `toastkit` to completion.
func toastkit(
    _ arguments: [String], environment: [String: String], stdin: [UInt8]? = nil
) async throws -> ToolProcess.Result {
    try await toastkit(raw: arguments.map { Array($0.utf8) }, environment: environment, stdin: stdin)
}

/// Runs `toastkit` with raw argument bytes to completion.
func toastkit(
    raw arguments: [[UInt8]], environment: [String: String], stdin: [UInt8]? = nil
) async throws -> ToolProcess.Result {
    let process = try ToolProcess.start(arguments, environment: environment)
    process.feed(stdin)
    return await process.finish()
}

/// The JSON objects a run printed, one per line (`--json`); lines that are not an object are left out.
func events(_ output: String) -> [[String: Any]] {
    output.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

/// Runs `toastkit` as `user` (a real second user: `setpriv` with its uid, gid and groups) to completion.
func toastkit(
    as user: TestUsers.User, _ arguments: [String], environment: [String: String], stdin: [UInt8]? = nil
) async throws -> ToolProcess.Result {
    let process = try ToolProcess.start(
        asUser: user, arguments.map { Array($0.utf8) }, environment: environment)
    process.feed(stdin)
    return await process.finish()
}

extension ToolProcess {
    /// Starts `toastkit` with `arguments` as `user` (through `setpriv`).
    static func start(
        asUser user: TestUsers.User, _ arguments: [[UInt8]], environment: [String: String]
    ) throws -> ToolProcess {
        let drop = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups", "--", binary]
        return try start(
            drop.map { Array($0.utf8) } + arguments, environment: environment, executable: "/usr/bin/setpriv")
    }
}
