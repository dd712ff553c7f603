public import DBus
import Foundation
import Glibc
public import Testing

/// A private `dbus-daemon` for tests: its own config, its own socket directory, no service activation (so nothing
/// installed on the machine can auto-start and grab a name), stopped by its pid.
public final class PrivateBus: Sendable {
    /// The bus address (`unix:path=…`).
    public let address: String
    /// The daemon's pid.
    public let pid: Int32
    /// The daemon's private folder (config and socket).
    public let directory: String

    private init(address: String, pid: Int32, directory: String) {
        self.address = address
        self.pid = pid
        self.directory = directory
    }

    /// Starts a daemon and waits until it accepts connections.
    ///
    /// - Parameters:
    ///   - serviceDirectory: A folder of D-Bus service files the bus may activate (none by default).
    ///   - environment: The daemon's environment, which activated services inherit (nil: the test's).
    ///   - everyUser: Whether connections of every Unix user are let in (by default only the daemon's user, as on a
    ///     session bus): for a bus that stands for another user's, which the test itself (root) also joins.
    ///   - messageLimit: The largest message the bus carries, in bytes (nil: the harness's 100 MB). A desktop's
    ///     session bus says 1 GB, so libdbus's own bound, 128 MiB, is what it carries.
    public static func start(
        serviceDirectory: String? = nil, environment: [String: String]? = nil, everyUser: Bool = false,
        messageLimit: Int? = nil
    ) async throws -> PrivateBus {
        // Waiting for the daemon's address blocks: on a thread of its own, never on one of the test process's few
        // pool threads. With sixty suites starting their buses at once, waits on the pool starved every test's
        // async work for seconds (a presenter that never heard of its server within 15 s, in full runs only).
        try await onOwnThread {
            try startBlocking(
                serviceDirectory: serviceDirectory, environment: environment, everyUser: everyUser,
                messageLimit: messageLimit)
        }
    }

    private static func startBlocking(
        serviceDirectory: String?, environment: [String: String]?, everyUser: Bool, messageLimit: Int?
    ) throws -> PrivateBus {
        let daemon = try Tools.require("dbus-daemon", package: "dbus-daemon")
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-bus")
        let template = try String(
            contentsOfFile: "\(NotificationEnvironment.repositoryRoot)/scripts/harness/session-bus.conf",
            encoding: .utf8)
        var config = template.replacingOccurrences(of: "@DIRECTORY@", with: directory)
        if everyUser {
            config = config.replacingOccurrences(
                of: "<policy context=\"default\">", with: "<policy context=\"default\">\n    <allow user=\"*\"/>")
        }
        if let messageLimit {
            config = config.replacingOccurrences(
                of: "<limit name=\"max_message_size\">100000000</limit>",
                with: "<limit name=\"max_message_size\">\(messageLimit)</limit>")
        }
        if let serviceDirectory {
            config = config.replacingOccurrences(
                of: "</busconfig>", with: "  <servicedir>\(serviceDirectory)</servicedir>\n</busconfig>")
        }
        try config.write(toFile: "\(directory)/bus.conf", atomically: true, encoding: .utf8)
        let output = try PipePair()
        let process = try ChildProcess.spawn(
            daemon, ["--config-file=\(directory)/bus.conf", "--nofork", "--print-address=1"],
            environment: environment ?? ProcessInfo.processInfo.environment, fileDescriptors: [1: output.writeEnd])
        output.closeWriteEnd()
        // The daemon prints its address once it listens.
        let address = output.readLine().trimmingCharacters(in: .whitespacesAndNewlines)
        guard !address.isEmpty else {
            throw TestEnvironmentError("dbus-daemon exited without printing an address (config \(directory)/bus.conf)")
        }
        return PrivateBus(address: address, pid: process.pid, directory: directory)
    }

    /// A new connection to this bus.
    public func connect() async throws -> DBusConnection {
        try await DBusConnection.connect(to: .address(address))
    }

    /// Kills the daemon at once (SIGKILL) and waits until it is gone (a moment: nothing to wait out): a bus that dies.
    public func kill() {
        Tools.terminate(pid: pid, signal: SIGKILL)
    }

    /// Stops the daemon and removes its folder, without waiting for it to exit (a test's `defer` runs on one of the
    /// process's few pool threads: sixty of them waiting there at once starved every test's async work).
    public func stop() {
        Tools.terminateInBackground(pid: pid, signal: SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops the daemon, waits until it has exited, and removes its folder: for whoever checks that nothing is left
    /// running (off the pool).
    public func stopAndWait() {
        Tools.terminate(pid: pid, signal: SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}

extension PrivateBus {
    /// The bus of the running suite (set by the ``privateBus`` trait).
    @TaskLocal public static var current: PrivateBus?

    /// The bus of the running suite; fails the test if the suite has no `.privateBus` trait.
    public static var shared: PrivateBus {
        get throws {
            guard let current else { throw TestEnvironmentError("this suite needs the .privateBus trait") }
            return current
        }
    }
}

/// Starts one private bus for a whole suite and stops it when the suite ends.
public struct PrivateBusTrait: SuiteTrait, TestScoping {
    /// One bus per suite, shared by its tests.
    public var isRecursive: Bool { false }

    /// Runs the suite with ``PrivateBus/current`` set.
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        if PrivateBus.current != nil {
            try await function()
            return
        }
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        try await PrivateBus.$current.withValue(bus) { try await function() }
    }
}

extension Trait where Self == PrivateBusTrait {
    /// Gives the suite its own `dbus-daemon` (``PrivateBus/shared``).
    public static var privateBus: PrivateBusTrait { PrivateBusTrait() }
}

/// The parent of suites whose tests must run one at a time, across test targets: the 10,000-toast flood would
/// starve the real-time checks of the dunst and conformance tests (a 1 s toast must leave the server on time) if
/// they ran side by side on a 2-core machine. Nest such a suite with `extension OneAtATime { @Suite struct … }`.
@Suite(.serialized) public enum OneAtATime {}

/// A test environment problem: a missing tool or a daemon that did not start. Tests fail with it, never skip.
public struct TestEnvironmentError: Error, CustomStringConvertible {
    /// What is wrong and how to fix it.
    public let description: String
    /// Creates the error.
    public init(_ description: String) { self.description = description }
}

/// Small process helpers shared by the test harnesses.
public enum Tools {
    /// The full path of `tool` on PATH, or an error that says which Debian package to install.
    public static func require(_ tool: String, package: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(tool)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw TestEnvironmentError(
            "\(tool) is not installed: run `apt-get install \(package)` (or the README's test command)")
    }

    /// A new private folder under the temporary directory.
    public static func makeTemporaryDirectory(prefix: String) throws -> String {
        var template = Array("\(NSTemporaryDirectory())/\(prefix).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw TestEnvironmentError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// A Unix stream socket bound at `path` (as a bus daemon's is); the caller closes the descriptor.
    public static func bindUnixSocket(at path: String) throws -> Int32 {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw TestEnvironmentError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(socket)
            throw TestEnvironmentError("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(socket)
            throw TestEnvironmentError("cannot bind \(path): \(reason)")
        }
        return socket
    }

    /// Sends `signal` to `pid`, escalates to SIGKILL after 3 s, and reaps it if it is our child; returns once it is
    /// gone. It blocks: call it off the pool (``onOwnThread(_:)``), or use ``terminateInBackground(pid:signal:)``.
    public static func terminate(pid: Int32, signal: Int32) {
        guard Glibc.kill(pid, 0) == 0 else { return }
        _ = Glibc.kill(pid, signal)
        reap(pid)
    }

    /// Sends `signal` to `pid` now, and leaves the rest of ``terminate(pid:signal:)`` to a thread of its own: it
    /// returns at once, so a test's `defer` (on one of the process's few pool threads) never waits for a process to
    /// exit. Who needs it gone awaits that as an event (its name leaving the bus), or calls the other.
    public static func terminateInBackground(pid: Int32, signal: Int32) {
        guard Glibc.kill(pid, 0) == 0 else { return }
        _ = Glibc.kill(pid, signal)
        Thread { reap(pid) }.start()
    }

    private static func reap(_ pid: Int32) {
        for attempt in 0..<300 {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && Glibc.kill(pid, 0) != 0) { return }
            if attempt == 299 { _ = Glibc.kill(pid, SIGKILL) }
            usleep(10_000)
        }
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }
}

/// Runs `body`, which blocks, on a thread of its own and returns its result: a test's task never blocks one of
/// the few threads of the shared pool (a server written on the D-Bus layer in the same process needs them).
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
