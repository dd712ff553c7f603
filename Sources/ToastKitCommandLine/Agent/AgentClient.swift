import DBus
import FoundationEssentials
import Glibc
import Synchronization
import ToastKit

/// How the `toastkit` commands reach the agent (docs/agent.md): a call to `org.toastkit.Agent1` on the session
/// bus. With the D-Bus service file installed, the bus starts the agent for the first call; without it, `toastkit`
/// starts the agent itself, detached (`toastkit agent` in a session of its own, its errors in
/// `$XDG_STATE_HOME/toastkit/agent.log`), and waits at most ``startLimit(_:)`` for it to take its name.
enum AgentClient {
    /// How long a command waits by default for an agent it started to take its name.
    static let defaultStartLimit: Duration = .seconds(2)

    /// How long a command waits for an agent it started to take its name: `TOASTKIT_AGENT_START_TIMEOUT` seconds
    /// (a slow or loaded machine), else ``defaultStartLimit``.
    static func startLimit(_ environment: [String: String]) -> Duration {
        guard let text = environment["TOASTKIT_AGENT_START_TIMEOUT"], let seconds = Double(text), seconds.isFinite,
            seconds > 0
        else { return defaultStartLimit }
        return .milliseconds(Int64(min(seconds, 3600) * 1000))
    }
    /// How long `Present` may take: the agent's own call to the server (10 s) and a margin.
    static let presentTimeout: Duration = .seconds(15)

    /// Why a command does not go through the agent, or nil when it may.
    ///
    /// - Parameter portalChecked: The caller has already found that the portal is not used.
    static func bypassReason(
        _ options: SendOptions, environment: CommandEnvironment, portalChecked: Bool = false
    ) -> String? {
        if options.noAgent { return "--no-agent" }
        if let value = environment.variable("TOASTKIT_NO_AGENT"), !value.isEmpty, value != "0" {
            return "TOASTKIT_NO_AGENT is set"
        }
        if !portalChecked, environment.backendChoice.backend == .portal {
            return "the notification portal is used (\(environment.backendChoice.reason))"
        }
        return nil
    }

    /// What became of a call to the agent.
    enum CallError: Error {
        /// No agent answered and none could be started (the reason, or nil when the session bus itself cannot be
        /// reached — the direct path then reports that as it always has).
        case unreachable(String?)
        /// The agent answered with an error, or stopped answering: the command ends with this failure.
        case failed(CommandFailure)
    }

    /// What the next attempt does after an error from the bus or the agent.
    enum NextStep {
        /// No agent owns the name: start one (once) and try again.
        case startAgent
        case give(CallError)
    }

    /// The step after a call to the agent failed with `error`.
    static func next(after error: DBusError) -> NextStep {
        switch error.name {
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner:
            return .startAgent
        case AgentInterface.ErrorName.invalidToast:
            return .give(.failed(.data(error.message)))
        case AgentInterface.ErrorName.unavailable:
            return .give(.failed(.unavailable(error.message)))
        case AgentInterface.ErrorName.unknownToast:
            return .give(.failed(.data(error.message)))
        case AgentInterface.ErrorName.accessDenied, DBusError.Name.unknownMethod, DBusError.Name.unknownObject,
            DBusError.Name.invalidArgs:
            // Not this user's agent, or an agent of another version: the direct path still works.
            return .give(.unreachable("the toast agent refused the call: \(error.message)"))
        case DBusError.Name.noReply:
            return .give(.failed(.unavailable("the toast agent did not answer: \(error.message)")))
        default:
            return .give(.failed(.unavailable("the toast agent failed: \(error.name): \(error.message)")))
        }
    }

    // MARK: - Starting the agent

    /// A started agent process, watched until it took its name or exited.
    struct Started {
        let pid: pid_t
        let log: String

        /// Why it stopped, if it has exited with a failure (an exit 0 means another agent had the name: that one
        /// answers).
        func failure() -> String? {
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
            let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            return code == 0 ? nil : "the toast agent exited with status \(code) at start (see \(log))"
        }
    }

    /// Starts `toastkit agent` detached.
    ///
    /// - Throws: the reason it could not be started.
    static func startAgent(environment: [String: String]) throws(CallError) -> Started {
        guard let program = program(environment: environment) else {
            throw .unreachable("cannot find the toastkit program to start the agent")
        }
        let log = PrivateFiles.parent(of: ActionCommand.logPath(environment: environment)) + "/agent.log"
        try? PrivateFiles.prepareFolder(PrivateFiles.parent(of: log), tighten: false)
        let descriptor = Spawn.openLog(log)
        defer { if let descriptor { close(descriptor) } }
        if let descriptor {
            Spawn.append("[\(Spawn.timestamp())] started by toastkit (pid \(getpid()))\n", to: descriptor)
        }
        switch Spawn.start([program, "agent"], environment: environment, output: descriptor, newSession: true) {
        case .success(let pid): return Started(pid: pid, log: log)
        case .failure(let error): throw .unreachable("cannot start the toast agent (\(program)): \(error)")
        }
    }

    /// The `toastkit` program to run as the agent: this one (when this process is `toastkit`), else the one on
    /// `PATH`.
    static func program(environment: [String: String]) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length > 0 {
            let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let name = path.split(separator: "/").last ?? ""
            if name.hasPrefix("toastkit"), !path.contains(".xctest") { return path }
        }
        for folder in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/toastkit"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    // MARK: - Blocking calls (the commands that run without tasks)

    /// Makes `call` on the agent over a fresh blocking connection, starting the agent if no one owns its name.
    ///
    /// - Returns: the reply, and the connection (for more calls; the caller closes it).
    static func callBlocking(
        _ call: DBusMethodCall, timeout: Duration, environment: [String: String], startIfNeeded: Bool = true
    ) throws(CallError) -> (DBusMessage, BlockingDBusConnection) {
        let connection: BlockingDBusConnection
        var result: Result<DBusMessage, DBusError>
        do {
            let (opened, replies) = try BlockingDBusConnection.connect(
                to: .session, timeout: timeout, calling: [call])
            connection = opened
            result = replies[0]
        } catch {
            throw .unreachable(nil)
        }
        var started: Started?
        let startLimit = startLimit(environment)
        let deadline = ContinuousClock.now + startLimit
        while true {
            switch result {
            case .success(let reply): return (reply, connection)
            case .failure(let error):
                switch next(after: error) {
                case .give(let failure):
                    connection.close()
                    throw failure
                case .startAgent:
                    guard startIfNeeded else {
                        connection.close()
                        throw .unreachable("no toast agent is running")
                    }
                    do throws(CallError) {
                        if started == nil { started = try startAgent(environment: environment) }
                        if let failure = started?.failure() { throw CallError.unreachable(failure) }
                    } catch {
                        connection.close()
                        throw error
                    }
                    guard ContinuousClock.now < deadline else {
                        connection.close()
                        throw .unreachable("the toast agent did not start within \(startLimit)")
                    }
                    usleep(10_000)
                    result = connection.call([call], timeout: timeout)[0]
                }
            }
        }
    }

    // MARK: - Async calls (the commands that wait)

    /// Makes `call` on the agent over `connection`, starting the agent if no one owns its name.
    static func call(
        _ call: DBusMethodCall, on connection: DBusConnection, timeout: Duration, environment: [String: String],
        startIfNeeded: Bool = true
    ) async throws(CallError) -> DBusMessage {
        var started: Started?
        let startLimit = startLimit(environment)
        let deadline = ContinuousClock.now + startLimit
        while true {
            do {
                return try await connection.call(call, timeout: timeout)
            } catch let error as DBusError {
                switch next(after: error) {
                case .give(let failure): throw failure
                case .startAgent:
                    guard startIfNeeded else { throw .unreachable("no toast agent is running") }
                    if started == nil { started = try startAgent(environment: environment) }
                    if let failure = started?.failure() { throw .unreachable(failure) }
                    guard ContinuousClock.now < deadline else {
                        throw .unreachable("the toast agent did not start within \(startLimit)")
                    }
                    try? await Task.sleep(for: .milliseconds(10))
                }
            } catch {
                throw .failed(CommandFailure(.software, "internal error: \(error)"))
            }
        }
    }
}

extension AgentRequest {
    /// The request `toastkit send` hands the agent: what only the sender knows resolved — the message text (read
    /// from standard input, cut at the limit), the icon file's absolute path (checked), the built-in labels in the
    /// sender's language. The agent checks the toast as the direct path does (the same function, the same words)
    /// and gives it an id when it has none.
    init(sending options: SendOptions, text: String?) throws(CommandFailure) {
        var resolved = options
        resolved.message = text.map(MessageSource.text)
        if case .file(let path)? = try SendCommand.icon(options.icon) { resolved.icon = .path(path) }
        // Built-in labels only where an action has no label of its own (reading the locale costs a little).
        let builtIn = (options.actions + (options.tap.map { [$0] } ?? [])).contains { $0.label == nil }
        let labels = builtIn ? ToastLabels.current : ToastLabels(language: .english)
        func label(_ action: ActionOption, tap: Bool) -> ActionOption {
            var action = action
            guard action.label == nil else { return action }
            switch action.id {
            case "later": action.label = labels[.later]
            case "dismiss": action.label = labels[.dismiss]
            default: if tap { action.label = labels[.open] }
            }
            return action
        }
        resolved.actions = options.actions.map { label($0, tap: false) }
        resolved.tap = options.tap.map { label($0, tap: true) }
        // -t is carried as the duration it stands for.
        if let duration = options.duration { resolved.duration = .duration(duration.toastDuration) }
        self.init(options: resolved, onAction: options.onAction)
        awaitShown = options.printID || options.json || options.waits
    }
}
