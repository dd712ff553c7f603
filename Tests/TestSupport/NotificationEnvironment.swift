import DBus
import Foundation
import Glibc

/// A real notification server the tests can run under Xvfb.
public enum NotificationServerKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// dunst, with the project's `scripts/harness/dunstrc` (driven with `dunstctl`).
    case dunst
    /// GNOME's notification-daemon (driven with xdotool clicks; never expires anything under Xvfb).
    case notificationDaemon = "notification-daemon"
    /// xfce4-notifyd (driven with xdotool clicks).
    case xfce4Notifyd = "xfce4-notifyd"
    /// mate-notification-daemon (driven with xdotool clicks; its "x" reports reason 1).
    case mateNotificationDaemon = "mate-notification-daemon"

    /// The server's name.
    public var description: String { rawValue }

    /// The Debian package that provides it.
    public var package: String { rawValue }

    /// The executable and its arguments, or nil when the package is not installed.
    func command(dunstrc: String) -> (String, [String])? {
        let candidates: [String]
        var arguments: [String] = []
        switch self {
        case .dunst:
            return (try? Tools.require("dunst", package: "dunst")).map { ($0, ["-config", dunstrc]) }
        case .notificationDaemon:
            candidates = ["/usr/lib/notification-daemon/notification-daemon", "/usr/libexec/notification-daemon"]
            arguments = ["--replace"]
        case .xfce4Notifyd:
            candidates = [
                "/usr/lib/x86_64-linux-gnu/xfce4/notifyd/xfce4-notifyd",
                "/usr/lib/aarch64-linux-gnu/xfce4/notifyd/xfce4-notifyd",
                "/usr/lib/xfce4/notifyd/xfce4-notifyd",
            ]
        case .mateNotificationDaemon:
            candidates = [
                "/usr/lib/mate-notification-daemon/mate-notification-daemon", "/usr/libexec/mate-notification-daemon",
            ]
            arguments = ["--replace"]
        }
        return candidates.first { access($0, X_OK) == 0 }.map { ($0, arguments) }
    }
}

/// A private headless desktop for one test: a private bus, Xvfb on a free display, and a notification server
/// (dunst with the project's `scripts/harness/dunstrc` by default). Stopped by pid, in reverse order.
public final class NotificationEnvironment: Sendable {
    /// The bus.
    public let bus: PrivateBus
    /// The X display, such as `:3`.
    public let display: String
    /// The run folder (dunstrc, logs, the context-menu choice file).
    public let directory: String
    private let xvfbPID: Int32
    /// The server's pid.
    public let serverPID: Int32
    /// Which server runs.
    public let server: NotificationServerKind

    private init(
        bus: PrivateBus, display: String, directory: String, xvfbPID: Int32, serverPID: Int32,
        server: NotificationServerKind
    ) {
        self.server = server
        self.bus = bus
        self.display = display
        self.directory = directory
        self.xvfbPID = xvfbPID
        self.serverPID = serverPID
    }

    /// The repository's root, found from this file's path.
    public static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The environment a child process needs to use this desktop.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env["DISPLAY"] = display
        env["NOTIFY_HARNESS_DIR"] = directory
        env["XDG_RUNTIME_DIR"] = "\(directory)/runtime"
        env["XDG_STATE_HOME"] = "\(directory)/state"
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        return env
    }

    /// Starts bus, Xvfb and the server, and returns once the server owns `org.freedesktop.Notifications`.
    public static func start(server kind: NotificationServerKind = .dunst) async throws -> NotificationEnvironment {
        let xvfb = try Tools.require("Xvfb", package: "xvfb")
        guard kind.command(dunstrc: "") != nil else {
            throw TestEnvironmentError("\(kind) is not installed: run `apt-get install \(kind.package)`")
        }
        if kind == .dunst {
            _ = try Tools.require("dunstctl", package: "dunst")
        } else {
            _ = try Tools.require("xdotool", package: "xdotool")  // the GTK servers are driven with clicks
        }
        let bus = try PrivateBus.start()
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-desktop")
        for folder in ["runtime", "state", "config", "cache", "data"] {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(folder)", withIntermediateDirectories: true)
        }
        chmod("\(directory)/runtime", 0o700)

        // Xvfb picks a free display itself and prints its number when ready.
        let displayPipe = try PipePair()
        let xvfbProcess = try ChildProcess.spawn(
            xvfb, ["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"],
            environment: ProcessInfo.processInfo.environment, fileDescriptors: [1: displayPipe.writeEnd])
        displayPipe.closeWriteEnd()
        let number = displayPipe.readLine().trimmingCharacters(in: .whitespaces)
        guard !number.isEmpty else {
            Tools.terminate(pid: xvfbProcess.pid, signal: SIGKILL)
            bus.stop()
            throw TestEnvironmentError("Xvfb did not report a display")
        }
        let display = ":\(number)"

        let harness = "\(repositoryRoot)/scripts/harness"
        let template = try String(contentsOfFile: "\(harness)/dunstrc", encoding: .utf8)
        try template.replacingOccurrences(of: "@HARNESS_DIR@", with: harness)
            .write(toFile: "\(directory)/dunstrc", atomically: true, encoding: .utf8)

        // Watch for the server's name before starting it, so its arrival is awaited, not polled.
        let watcher = try await bus.connect()
        defer { watcher.close() }
        let owners = try await watcher.bus.nameOwnerChanges(of: "org.freedesktop.Notifications")

        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env["DISPLAY"] = display
        env["NOTIFY_HARNESS_DIR"] = directory
        env["XDG_CONFIG_HOME"] = "\(directory)/config"
        env["XDG_CACHE_HOME"] = "\(directory)/cache"
        env["XDG_DATA_HOME"] = "\(directory)/data"
        env["XDG_RUNTIME_DIR"] = "\(directory)/runtime"
        // Keep GTK servers off dconf, the accessibility bus and any Wayland compositor.
        env["GSETTINGS_BACKEND"] = "memory"
        env["NO_AT_BRIDGE"] = "1"
        env["GDK_BACKEND"] = "x11"
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        let log = open("\(directory)/server.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(log) }
        let (executable, arguments) = kind.command(dunstrc: "\(directory)/dunstrc")!
        let server = try ChildProcess.spawn(
            executable, arguments, environment: env, fileDescriptors: [1: log, 2: log])

        let environment = NotificationEnvironment(
            bus: bus, display: display, directory: directory, xvfbPID: xvfbProcess.pid,
            serverPID: server.pid, server: kind)
        do {
            for try await change in owners where change.newOwner != nil { break }
        } catch {
            environment.stop()
            throw TestEnvironmentError("\(kind) did not take org.freedesktop.Notifications: \(error)")
        }
        return environment
    }

    /// Stops the server, Xvfb and the bus, and removes the run folder.
    public func stop() {
        Tools.terminate(pid: serverPID, signal: SIGTERM)
        Tools.terminate(pid: xvfbPID, signal: SIGTERM)
        bus.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    /// Runs `dunstctl` with this desktop's bus and returns its output.
    @discardableResult
    public func dunstctl(_ arguments: String...) throws -> String {
        try run("dunstctl", arguments)
    }

    /// Runs a tool with this desktop's environment; fails on a non-zero exit.
    @discardableResult
    public func run(_ tool: String, _ arguments: [String], input: String? = nil) throws -> String {
        let result = try Tools.run(tool, arguments, environment: environment, input: input)
        guard result.status == 0 else {
            throw TestEnvironmentError(
                "\(tool) \(arguments.joined(separator: " ")) exited \(result.status): \(result.error)")
        }
        return result.output
    }

    /// How many notifications dunst shows now.
    public func displayedCount() throws -> Int {
        Int(try dunstctl("count", "displayed").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Makes the next `dunstctl context` choose the line matching `regex` (e.g. `,archive\]$`).
    public func chooseInContextMenu(_ regex: String) throws {
        try regex.write(toFile: "\(directory)/dmenu-pick", atomically: true, encoding: .utf8)
    }

    /// Saves a screenshot of the whole virtual screen as PNG.
    public func screenshot(to path: String) throws {
        try run("import", ["-window", "root", path])
    }
}

extension Tools {
    /// What a finished process left.
    public struct RunResult: Sendable {
        /// The exit status (128 + signal for a signal).
        public var status: Int32
        /// Standard output.
        public var output: String
        /// Standard error.
        public var error: String
    }

    /// Runs `tool` (found on PATH) to completion and collects its output.
    public static func run(
        _ tool: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        input: String? = nil
    ) throws -> RunResult {
        let path = tool.hasPrefix("/") ? tool : try require(tool, package: tool)
        let stdin = try PipePair()
        let stdout = try PipePair()
        let stderr = try PipePair()
        let child = try ChildProcess.spawn(
            path, arguments, environment: environment ?? ProcessInfo.processInfo.environment,
            fileDescriptors: [0: stdin.readEnd, 1: stdout.writeEnd, 2: stderr.writeEnd])
        stdout.closeWriteEnd()
        stderr.closeWriteEnd()
        // Feed stdin and drain stderr on their own threads, so a chatty child never blocks on a full pipe.
        let writer = Thread {
            if let input {
                var bytes = Array(input.utf8)
                var offset = 0
                while offset < bytes.count {
                    let written = bytes.withUnsafeMutableBytes {
                        write(stdin.writeEnd, $0.baseAddress! + offset, $0.count - offset)
                    }
                    if written <= 0 { break }
                    offset += written
                }
            }
            stdin.closeWriteEnd()
        }
        writer.start()
        let errorData = DataHandoff()
        let reader = Thread { errorData.set(Data(stderr.readAll())) }
        reader.start()
        let outputData = stdout.readAll()
        let status = child.wait()
        let stderrData = errorData.wait()
        return RunResult(
            status: status, output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: stderrData, as: UTF8.self))
    }
}

/// A one-shot handoff of data from a reader thread.
private final class DataHandoff: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?
    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.signal()
        condition.unlock()
    }
    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data!
    }
}
