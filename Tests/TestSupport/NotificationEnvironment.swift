import DBus
import Foundation
import Glibc

/// A private headless desktop for one test: a private bus, Xvfb on a free display, and dunst with the project's
/// `scripts/harness/dunstrc`. Stopped by pid, in reverse order.
public final class NotificationEnvironment: Sendable {
    /// The bus.
    public let bus: PrivateBus
    /// The X display, such as `:3`.
    public let display: String
    /// The run folder (dunstrc, logs, the context-menu choice file).
    public let directory: String
    private let xvfbPID: Int32
    /// dunst's pid.
    public let serverPID: Int32

    private init(bus: PrivateBus, display: String, directory: String, xvfbPID: Int32, serverPID: Int32) {
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

    /// Starts bus, Xvfb and dunst, and returns once dunst owns `org.freedesktop.Notifications`.
    public static func start() async throws -> NotificationEnvironment {
        let xvfb = try Tools.require("Xvfb", package: "xvfb")
        let dunst = try Tools.require("dunst", package: "dunst")
        _ = try Tools.require("dunstctl", package: "dunst")
        let bus = try PrivateBus.start()
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-desktop")
        for folder in ["runtime", "state", "config", "cache"] {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(folder)", withIntermediateDirectories: true)
        }
        chmod("\(directory)/runtime", 0o700)

        // Xvfb picks a free display itself and prints its number when ready.
        let xvfbProcess = Process()
        xvfbProcess.executableURL = URL(fileURLWithPath: xvfb)
        xvfbProcess.arguments = ["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"]
        let displayPipe = Pipe()
        xvfbProcess.standardOutput = displayPipe
        xvfbProcess.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try xvfbProcess.run()
        let number = readLine(from: displayPipe)
        guard !number.isEmpty else {
            bus.stop()
            throw TestEnvironmentError("Xvfb did not report a display")
        }
        let display = ":\(number)"

        let harness = "\(repositoryRoot)/scripts/harness"
        let template = try String(contentsOfFile: "\(harness)/dunstrc", encoding: .utf8)
        try template.replacingOccurrences(of: "@HARNESS_DIR@", with: harness)
            .write(toFile: "\(directory)/dunstrc", atomically: true, encoding: .utf8)

        // Watch for dunst's name before starting it, so its arrival is awaited, not polled.
        let watcher = try await bus.connect()
        defer { watcher.close() }
        let owners = try await watcher.nameOwnerChanges(of: "org.freedesktop.Notifications")

        let server = Process()
        server.executableURL = URL(fileURLWithPath: dunst)
        server.arguments = ["-config", "\(directory)/dunstrc"]
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env["DISPLAY"] = display
        env["NOTIFY_HARNESS_DIR"] = directory
        env["XDG_CONFIG_HOME"] = "\(directory)/config"
        env["XDG_CACHE_HOME"] = "\(directory)/cache"
        env["XDG_RUNTIME_DIR"] = "\(directory)/runtime"
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        server.environment = env
        server.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        let log = FileManager.default.createFile(atPath: "\(directory)/dunst.log", contents: nil)
        server.standardError = log ? FileHandle(forWritingAtPath: "\(directory)/dunst.log") : nil
        try server.run()

        let environment = NotificationEnvironment(
            bus: bus, display: display, directory: directory, xvfbPID: xvfbProcess.processIdentifier,
            serverPID: server.processIdentifier)
        do {
            for try await change in owners where change.newOwner != nil { break }
        } catch {
            environment.stop()
            throw TestEnvironmentError("dunst did not take org.freedesktop.Notifications: \(error)")
        }
        return environment
    }

    /// Stops dunst, Xvfb and the bus, and removes the run folder.
    public func stop() {
        Tools.terminate(pid: serverPID, signal: SIGTERM)
        Tools.terminate(pid: xvfbPID, signal: SIGKILL)
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

private func readLine(from pipe: Pipe) -> String {
    var data = Data()
    while true {
        let chunk = pipe.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        data.append(chunk)
        if chunk.contains(UInt8(ascii: "\n")) { break }
    }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool.hasPrefix("/") ? tool : try require(tool, package: tool))
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        let inputPipe = Pipe()
        process.standardInput = inputPipe
        try process.run()
        if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try? inputPipe.fileHandleForWriting.close()
        // Read both pipes fully before waiting, so a chatty child never blocks on a full pipe.
        let errorData = DataHandoff()
        let reader = Thread { errorData.set(error.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderrData = errorData.wait()
        let status =
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
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
