import DBus
import Foundation
public import Glibc
import Synchronization

/// A private headless desktop for one test: a private bus, a display (Xvfb, or the Wayland compositor the server
/// needs) and one real notification server with its helpers. Everything it starts is stopped by pid, newest first,
/// with whatever those processes left behind.
///
/// ```swift
/// let desktop = try await NotificationEnvironment.start(server: .gnomeShell)
/// defer { desktop.stop() }
/// // desktop.bus.address for the code under test; desktop.popups(), dismiss(serverID:), … to act like a user.
/// ```
public final class NotificationEnvironment: Sendable {
    /// The session bus.
    public let bus: PrivateBus
    /// The X display (such as `:3`) of an X server; nil for GNOME Shell, mako and swaync, which need none.
    public let display: String?
    /// The run folder (configuration, logs, the dunst context-menu choice file).
    public let directory: String
    /// Which server runs (for a modern one: the Debian 12 server it is driven like).
    public let server: NotificationServerKind
    /// The modern server (issue 41) that runs from the Debian 13 chroot, or nil for the host's Debian 12 ``server``.
    public let modern: ModernServer?
    /// The screen size every desktop uses.
    public static let screen = (width: 1280, height: 800)

    private let state: Mutex<RunState>
    let support: Support

    /// What runs: the helpers started once, and the server group that ``restartServer(signal:)`` replaces.
    struct RunState {
        var helpers: [StartedProcess]
        var serverGroup: [StartedProcess]
        var stopped = false
    }

    /// What the server's helpers provide to the server and to the tools that drive it.
    struct Support: Sendable {
        /// The Wayland socket (absolute path) of GNOME Shell or sway.
        var waylandDisplay: String?
        /// sway's IPC socket.
        var swaySocket: String?
        /// GNOME Shell's and Plasma's stand-in system bus.
        var systemBus: PrivateBus?
        /// Plasma's KSplash stand-in (it hears when the shell is ready).
        var splash: SplashStandIn?
    }

    private init(
        bus: PrivateBus, display: String?, directory: String, server: NotificationServerKind, modern: ModernServer?,
        helpers: [StartedProcess], support: Support
    ) {
        self.bus = bus
        self.display = display
        self.directory = directory
        self.server = server
        self.modern = modern
        self.support = support
        state = Mutex(RunState(helpers: helpers, serverGroup: []))
    }

    /// The repository's root, found from this file's path.
    public static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The pid of the process that owns `org.freedesktop.Notifications` (for GNOME Shell the gjs proxy that forwards
    /// to the shell); it changes when the server is restarted.
    public var serverPID: Int32 {
        state.withLock { $0.serverGroup.last { $0.ownsNotifications }?.pid ?? $0.serverGroup.last?.pid ?? 0 }
    }

    /// Every pid this desktop started and has not stopped yet (the bus daemons included).
    public var pids: [Int32] {
        let started = state.withLock { ($0.helpers + $0.serverGroup).map(\.pid) }
        return [bus.pid] + (support.systemBus.map { [$0.pid] } ?? []) + started
    }

    /// The Wayland socket (an absolute path) of GNOME Shell or of the sway that mako and swaync run on.
    public var waylandDisplay: String? { support.waylandDisplay }

    /// The environment a child process needs to use this desktop: the bus, the display, `NOTIFY_HARNESS_DIR`, and
    /// private `XDG_RUNTIME_DIR`, `XDG_STATE_HOME` and `XDG_CONFIG_HOME` folders (for `toastkit`'s id map, Later
    /// store, agent state and agent config).
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for name in ["DISPLAY", "WAYLAND_DISPLAY", "SWAYSOCK", "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE"] {
            env.removeValue(forKey: name)
        }
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        if let display { env["DISPLAY"] = display }
        if let wayland = support.waylandDisplay { env["WAYLAND_DISPLAY"] = wayland }
        if let socket = support.swaySocket { env["SWAYSOCK"] = socket }
        env["NOTIFY_HARNESS_DIR"] = directory
        env["XDG_RUNTIME_DIR"] = "\(directory)/runtime"
        env["XDG_STATE_HOME"] = "\(directory)/state"
        env["XDG_CONFIG_HOME"] = "\(directory)/config"
        return env
    }

    // MARK: - Start and stop

    /// Runs `body` with a desktop of `kind` and a bus monitor on its bus, and stops both after it.
    public static func withWatched(
        _ kind: NotificationServerKind = .dunst, _ body: (NotificationEnvironment, BusWatcher) async throws -> Void
    ) async throws {
        let desktop = try await start(server: kind)
        defer { desktop.stop() }
        let watcher = try await BusWatcher(bus: desktop.bus.address)
        defer { watcher.stop() }
        try await body(desktop, watcher)
    }

    /// Starts the bus, the display and the server with its helpers, and returns once the server owns
    /// `org.freedesktop.Notifications` (and, for GNOME Shell, once the shell is ready to be driven).
    ///
    /// - Throws: ``TestEnvironmentError`` naming the Debian packages to install when something is missing, or the
    ///   part that did not start (with the end of its log).
    public static func start(server kind: NotificationServerKind = .dunst) async throws -> NotificationEnvironment {
        try await start(server: kind, modern: nil)
    }

    /// Starts a desktop with a modern server (issue 41) from the Debian 13 chroot, as ``start(server:)`` does with the
    /// host's: the bus and the display are the host's, the server's processes run in the chroot.
    ///
    /// - Throws: ``TestEnvironmentError`` saying to run `scripts/modern-chroot.sh` when the chroot is not made.
    public static func start(modern: ModernServer) async throws -> NotificationEnvironment {
        try await start(server: modern.kind, modern: modern)
    }

    static func start(server kind: NotificationServerKind, modern: ModernServer?) async throws
        -> NotificationEnvironment
    {
        if let modern { try modern.checkInstalled() } else { try kind.checkInstalled() }
        let bus = try await PrivateBus.start()
        let directory: String
        do {
            directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-desktop")
            for folder in ["runtime", "state", "config", "cache", "data"] {
                try FileManager.default.createDirectory(
                    atPath: "\(directory)/\(folder)", withIntermediateDirectories: true)
            }
            chmod("\(directory)/runtime", 0o700)
        } catch {
            bus.stop()
            throw error
        }
        let launcher = ServerLauncher(kind: kind, directory: directory, busAddress: bus.address, modern: modern)
        var helpers: [StartedProcess] = []
        var systemBus: PrivateBus?
        var splash: SplashStandIn?
        do {
            var display: String?
            if kind.usesX11 {
                let xvfb = try await launcher.startXvfb()
                helpers.append(xvfb.process)
                display = xvfb.display
            }
            let (more, support) = try await launcher.startHelpers(
                display: display, systemBus: &systemBus, splash: &splash)
            helpers += more
            let environment = NotificationEnvironment(
                bus: bus, display: display, directory: directory, server: kind, modern: modern, helpers: helpers,
                support: support)
            do {
                try await environment.startServerGroup(excludingOwners: [])
            } catch {
                environment.stop()
                throw error
            }
            return environment
        } catch {
            for process in helpers.reversed() { Tools.stopTree(process.pid) }
            splash?.stop()
            systemBus?.stop()
            bus.stop()
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    private func startServerGroup(excludingOwners excluded: Set<String>) async throws {
        let launcher = ServerLauncher(kind: server, directory: directory, busAddress: bus.address, modern: modern)
        // Anything the launcher started before it failed is recorded, so stop() ends it.
        let record: @Sendable (StartedProcess) -> Void = { process in
            self.state.withLock { $0.serverGroup.append(process) }
        }
        try await launcher.startServer(display: display, support: support, excludingOwners: excluded, record: record)
    }

    /// Records a process started for this desktop after it was up (the portal), so ``stop()`` stops it too.
    func recordHelper(_ process: StartedProcess) {
        state.withLock { $0.helpers.append(process) }
    }

    /// Stops the server (the process that owns `org.freedesktop.Notifications` and those that go with it: GNOME
    /// Shell with its proxy, plasmashell, mako, swaync, …) with `signal`, and starts it again on the same bus and
    /// display; returns once the new server owns the name. The helpers (Xvfb, sway, kactivitymanagerd, the
    /// stand-in system bus) keep running.
    public func restartServer(signal: Int32 = SIGTERM) async throws {
        try await stopServer(signal: signal)
        try await startServerGroup(excludingOwners: [])
    }

    /// Stops the server group only (see ``restartServer(signal:)``) and returns once the bus has seen the server's
    /// connections close (so no name still points at them when a new server starts).
    public func stopServer(signal: Int32 = SIGTERM) async throws {
        let watcher = try await bus.connect()
        defer { watcher.close() }
        var owners: Set<String> = []
        for name in server.busNames {
            if let owner = try await watcher.bus.nameOwner(of: name) { owners.insert(owner) }
        }
        // Each connection's unique name goes away (NameOwnerChanged to "") once the bus has seen it close.
        var watches: [(BusName, NameOwnerChanges)] = []
        for owner in owners {
            let unique = try BusName(validating: owner)
            watches.append((unique, try await watcher.bus.nameOwnerChanges(of: unique)))
        }
        defer { for (_, changes) in watches { changes.cancel() } }
        let group = state.withLock { state -> [StartedProcess] in
            defer { state.serverGroup = [] }
            return state.serverGroup
        }
        try await onOwnThread {
            for process in group.reversed() { Tools.stopTree(process.pid, signal: signal) }
        }
        for (unique, changes) in watches where try await watcher.bus.nameOwner(of: unique) != nil {
            _ = try await Deadline.run(within: .seconds(10), "\(unique) (\(server)) leaving the bus") {
                for try await change in changes where change.newOwner == nil { return true }
                return nil
            }
        }
    }

    /// Stops everything this desktop started (newest first, each with whatever it left behind), the buses, and
    /// removes the run folder, on a thread of its own: it returns at once. A test's `defer` runs on one of the
    /// process's few pool threads, and waiting there for Xvfb and a server to exit, while dozens of suites start,
    /// starved the other tests' async work. The process finishes what is left of it when it exits
    /// (``BackgroundStops``). Safe to call more than once.
    public func stop() {
        BackgroundStops.start(stopping())
    }

    /// ``stop()``, returning once everything has exited: for whoever checks that nothing is left (it blocks: call it
    /// off the pool).
    public func stopAndWait() {
        stopping()()
    }

    /// Marks the desktop stopped and returns the work that stops it (nothing when it was stopped already).
    private func stopping() -> @Sendable () -> Void {
        let processes = state.withLock { state -> [StartedProcess]? in
            guard !state.stopped else { return nil }
            state.stopped = true
            defer {
                state.helpers = []
                state.serverGroup = []
            }
            return state.helpers + state.serverGroup
        }
        guard let processes else { return {} }
        let (splash, systemBus, bus, directory) = (support.splash, support.systemBus, bus, directory)
        return {
            for process in processes.reversed() { Tools.stopTree(process.pid) }
            splash?.stop()
            systemBus?.stopAndWait()
            bus.stopAndWait()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    deinit { stop() }

    // MARK: - Tools

    /// Runs `dunstctl` with this desktop's bus and returns its output.
    @discardableResult
    public func dunstctl(_ arguments: String...) async throws -> String {
        try await run("dunstctl", arguments)
    }

    /// Runs a tool with this desktop's environment, on a thread of its own (a test's task never blocks one of the
    /// few threads of the cooperative pool while a tool runs); fails on a non-zero exit.
    @discardableResult
    public func run(_ tool: String, _ arguments: [String], input: String? = nil) async throws -> String {
        let environment = self.environment
        return try await onOwnThread {
            let result = try Tools.run(tool, arguments, environment: environment, input: input)
            guard result.status == 0 else {
                throw TestEnvironmentError(
                    "\(tool) \(arguments.joined(separator: " ")) exited \(result.status): \(result.error)")
            }
            return result.output
        }
    }

    /// How many notifications dunst shows now.
    public func displayedCount() async throws -> Int {
        Int(try await dunstctl("count", "displayed").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Makes the next `dunstctl context` choose the line matching `regex` (e.g. `,archive\]$`).
    public func chooseInContextMenu(_ regex: String) throws {
        try regex.write(toFile: "\(directory)/dmenu-pick", atomically: true, encoding: .utf8)
    }
}

/// One process a desktop started.
struct StartedProcess: Sendable {
    /// What it is, for messages (`gnome-shell`, `sway`, …).
    let name: String
    /// Its pid.
    let pid: Int32
    /// Its log file.
    let log: String
    /// Whether it is the one that owns `org.freedesktop.Notifications`.
    var ownsNotifications = false
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

    /// Whether `pid` is running (it exists and is not a zombie). Never reaps it.
    public static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != nil && state != "Z" && state != "X"
    }

    /// The pids of every (transitive) child of `pid`, read from `/proc`.
    public static func descendants(of pid: Int32) -> [Int32] {
        var children: [Int32: [Int32]] = [:]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let child = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { children[parent, default: []].append(child) }
        }
        var result: [Int32] = []
        var queue = children[pid] ?? []
        while !queue.isEmpty {
            let next = queue.removeFirst()
            result.append(next)
            queue += children[next] ?? []
        }
        return result
    }

    /// Stops `pid` (`signal`, then SIGKILL after 3 s; reaped if it is our child), then whatever it left running.
    public static func stopTree(_ pid: Int32, signal: Int32 = SIGTERM) {
        let children = descendants(of: pid)
        terminate(pid: pid, signal: signal)
        for child in children where isAlive(child) { terminate(pid: child, signal: SIGTERM) }
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
