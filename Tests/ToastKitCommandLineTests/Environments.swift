import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// A private bus with an optional fake server, and an environment for the tool that points at it.
struct BusOnlyEnvironment {
    let bus: PrivateBus
    let directory: String
    let environment: [String: String]

    /// - Parameter messageLimit: the largest message the bus carries (nil: the private bus's own default).
    init(messageLimit: Int? = nil) async throws {
        bus = try await PrivateBus.start(messageLimit: messageLimit)
        directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-cli")
        for folder in ["runtime", "state"] {
            try FileManager.default.createDirectory(
                atPath: "\(directory)/\(folder)", withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["XDG_RUNTIME_DIR"] = "\(directory)/runtime"
        environment["XDG_STATE_HOME"] = "\(directory)/state"
        environment["XDG_CONFIG_HOME"] = "\(directory)/config"
        environment["LANGUAGE"] = "en"
        // An agent started by a test may take seconds to start while the suites run in parallel: the product's 2 s
        // would send the toast the direct way (with a warning), and the test would check the wrong path.
        environment["TOASTKIT_AGENT_START_TIMEOUT"] = "30"
        var direct = environment
        direct["TOASTKIT_NO_AGENT"] = "1"
        self.environment = direct
        agentEnvironment = environment
    }

    /// The environment in which `send` goes through the agent (``environment`` pins the direct path).
    let agentEnvironment: [String: String]

    func stop() {
        bus.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Writes the agent's config file (`$XDG_CONFIG_HOME/toastkit/agent.conf` of `environment`) before an agent starts:
/// a test about an application's queue asks for `max-visible = 1`, so the queue is there to be seen behind one toast.
func configureAgent(_ settings: String, environment: [String: String]) throws {
    let config = try #require(environment["XDG_CONFIG_HOME"], "the environment has no XDG_CONFIG_HOME")
    try FileManager.default.createDirectory(atPath: "\(config)/toastkit", withIntermediateDirectories: true)
    try settings.write(toFile: "\(config)/toastkit/agent.conf", atomically: true, encoding: .utf8)
}

/// How to measure a tool's own peak memory: run it under GNU time (`time`, then ``PeakMemory/arguments``), then read
/// ``PeakMemory/kibibytes``. Not `wait4`'s `ru_maxrss` of a child this process spawns: Linux carries the high-water
/// mark of the spawning process's memory over the child's `exec` (a vfork child shares it until then), so that figure
/// is this test runner's peak (123 MiB in the full suite's runs 36 and 42; 421 MiB in fresh run 34), and it moves
/// with whatever other tests do meanwhile.
struct PeakMemory {
    /// GNU time.
    let time: String
    /// Where GNU time writes the peak.
    let file: String

    /// Fails, saying what to install, without GNU time.
    init(file: String) throws {
        time = try Tools.require("time", package: "time")
        self.file = file
    }

    /// GNU time's arguments before the command.
    var arguments: [String] { ["-f", "%M", "-o", file] }

    /// The peak resident memory GNU time wrote, in KiB (its last line: it may say first that the command failed).
    var kibibytes: Int {
        get throws {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let last = text.split(separator: "\n").last.map(String.init) ?? ""
            return try #require(Int(last), "GNU time wrote \(text)")
        }
    }
}

/// Runs `body` on a bus of its own with a fake notification server on it (`options`), and stops both.
func withFakeServer(
    _ options: FakeNotificationServer.Options = .init(),
    _ body: (BusOnlyEnvironment, FakeNotificationServer) async throws -> Void
) async throws {
    let environment = try await BusOnlyEnvironment()
    defer { environment.stop() }
    let server = try await FakeNotificationServer.start(on: environment.bus, options: options)
    defer { server.stop() }
    try await body(environment, server)
}

extension NotificationEnvironment {
    /// The tool's environment on this desktop, with English built-in labels, on the direct path
    /// (`TOASTKIT_NO_AGENT=1`): the suites written before the agent pin what a lone `toastkit` does.
    var toolEnvironment: [String: String] {
        var environment = agentEnvironment
        environment["TOASTKIT_NO_AGENT"] = "1"
        return environment
    }

    /// The tool's environment on this desktop, with English built-in labels, where `send` goes through the agent
    /// (started on demand in the desktop's private folders).
    var agentEnvironment: [String: String] {
        var environment = self.environment
        environment["LANGUAGE"] = "en"
        // As for BusOnlyEnvironment: the tests check the agent's path, however slowly it starts on a loaded machine.
        environment["TOASTKIT_AGENT_START_TIMEOUT"] = "30"
        return environment
    }

    /// Writes the agent's config file on this desktop before an agent starts (``configureAgent(_:environment:)``).
    func configureAgent(_ settings: String) throws {
        try ToastKitCommandLineTests.configureAgent(settings, environment: agentEnvironment)
    }

    /// The agent's saved toasts on this desktop's bus (`runtime/toastkit/agent-<bus id>.json`), or nil when there
    /// is no such file.
    var savedToastsPath: String? {
        let folder = "\(directory)/runtime/toastkit"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.first { $0.hasPrefix("agent-") && $0.hasSuffix(".json") }.map { "\(folder)/\($0)" }
    }

    /// The agents' log and saved toasts, for a failure message.
    var agentFiles: String {
        let saved = savedToastsPath.map { String($0.dropFirst(directory.count + 1)) } ?? "runtime/toastkit/agent-*.json"
        return ["state/toastkit/agent.log", saved].map { path in
            let text = (try? String(contentsOfFile: "\(directory)/\(path)", encoding: .utf8)) ?? "(none)"
            return "\(path):\n\(text)"
        }.joined(separator: "\n")
    }
}

extension DBusConnection {
    /// Returns once the toast agent owns its name on this connection's bus: a `send` that found no agent shows its
    /// toast itself, starts one and returns, and the new agent may still be taking its name (seen on a loaded machine:
    /// `ServiceUnknown` for a call made right after).
    func awaitAgent() async throws {
        let changes = try await bus.nameOwnerChanges(of: "org.toastkit.Agent1")
        if try await bus.nameOwner(of: "org.toastkit.Agent1") != nil { return }
        _ = try await Deadline.run(within: .seconds(30), "the agent's name") {
            for try await change in changes where change.newOwner != nil { return true }
            return nil
        }
    }

    /// The running agent's pid (`GetInfo`, which answers once the agent has its name and has adopted what was saved).
    func agentPID() async throws -> pid_t {
        try await awaitAgent()
        let info = try await call(
            destination: "org.toastkit.Agent1", path: "/org/toastkit/Agent1", interface: "org.toastkit.Agent1",
            member: "GetInfo")
        return pid_t(try #require(info.arguments("a{sv}")[0].variantDictionaryValue?["pid"]?.uint32Value))
    }

    /// Whether `sender` (a unique name) is a connection of the running agent's process: the agent talks to the server
    /// on a connection of its own, not the one that owns its name.
    func isAgentsConnection(_ sender: String) async throws -> Bool {
        let pid = try await call(.bus("GetConnectionUnixProcessID", [.string(sender)])).arguments("u").first
        return try await pid == .uint32(UInt32(agentPID()))
    }
}

extension BusOnlyEnvironment {
    /// Runs `send arguments` through an agent that runs already (a first `send` with an id starts one and shows its
    /// toast itself, so the toast of `arguments` is the agent's own, never handed over), and returns the run and the
    /// notification of `summary` the server got, once checked to come from the agent's process.
    func sendThroughRunningAgent(
        _ arguments: [String], summary: String, server: FakeNotificationServer
    ) async throws -> (run: ToolProcess.Result, shown: FakeNotificationServer.Notification) {
        let first = try await toastkit(["send", "--id", "first", "Primero"], environment: agentEnvironment)
        #expect(first.status == 0, "\(first.error)")
        let bus = try await self.bus.connect()
        defer { bus.close() }
        try await bus.awaitAgent()
        let run = try await toastkit(["send"] + arguments, environment: agentEnvironment)
        let shown = try await server.nextNotification(summary: summary)
        #expect(try await bus.isAgentsConnection(shown.sender), "sent by the agent")
        return (run, shown)
    }
}

/// Makes every scheduled toast in the state folder `state` due a second ago, as if its time had come while no agent
/// ran: a schedule an hour ahead is a schedule whatever the machine's load, where one a second or two ahead may be due
/// before the agent has it. Each file written as the store writes (private, then renamed over): an agent that follows
/// the folder never reads half of one.
func makeSchedulesDue(_ state: String) throws {
    let folder = "\(state)/toastkit/scheduled"
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }
    #expect(!names.isEmpty, "no schedule in \(folder)")
    for name in names {
        let path = "\(folder)/\(name)"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var file = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var toast = try #require(file["toast"] as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
        toast["due"] = AgentStore.now() - 1
        file["toast"] = toast
        let temporary = path + ".test"
        try JSONSerialization.data(withJSONObject: file).write(to: URL(fileURLWithPath: temporary))
        #expect(chmod(temporary, 0o600) == 0)
        #expect(rename(temporary, path) == 0)
    }
}

/// The text of the file at `path` once a line of it is written (it ends with a newline): what a command another
/// process runs (`--on-action`) writes, awaited within `seconds`.
func writtenLine(of path: String, within seconds: Int64, _ what: String) async throws -> String {
    try await Deadline.run(within: .seconds(seconds), what) { () -> String? in
        while true {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") { return text }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

extension PrivateBus {
    /// The path of the bus's socket (its address is `unix:path=…,guid=…`).
    var socketPath: String {
        get throws {
            try #require(address.split(separator: ",").first.map { String($0.dropFirst("unix:path=".count)) })
        }
    }
}

/// The keeper of agent `agent` (``AgentKeeper``): the process it started with `agent --keeper`.
func agentKeeper(of agent: pid_t) throws -> pid_t {
    for name in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
        guard let pid = pid_t(name),
            let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            stat[stat.index(after: close)...].split(separator: " ").dropFirst().first == "\(agent)"
        else { continue }
        let command = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(name)/cmdline"))) ?? Data()
        if String(decoding: command, as: UTF8.self).contains("--keeper") { return pid }
    }
    throw TestEnvironmentError("agent \(agent) has no keeper")
}

/// SIGKILLs agent `agent` and its keeper, the keeper first (it would start the next agent at once): the tests of
/// what the next command's agent adopts, as after a crash that took both (a killed session, the out-of-memory
/// killer). Returns once both have ended.
func killAgentAndItsKeeper(_ agent: pid_t) async throws {
    let keeper = try agentKeeper(of: agent)
    kill(keeper, SIGKILL)
    #expect(try await processEnds(keeper, within: 10), "the keeper \(keeper) ended")
    kill(agent, SIGKILL)
    #expect(try await processEnds(agent, within: 10), "the agent \(agent) ended")
}

/// SIGKILLs the agent `pid` and its keeper (nothing starts the next agent but the next command) and returns once
/// the agent's name is free.
func killAgent(_ pid: pid_t, _ bus: DBusConnection) async throws {
    let changes = try await bus.bus.nameOwnerChanges(of: "org.toastkit.Agent1")
    try await killAgentAndItsKeeper(pid)
    if try await bus.bus.nameOwner(of: "org.toastkit.Agent1") == nil { return }
    _ = try await Deadline.run(within: .seconds(5), "the killed agent's name released") {
        for try await change in changes where change.newOwner == nil { return true }
        return nil
    }
}
