import DBus
import FoundationEssentials
import FreedesktopNotifications
import Glibc
import Synchronization
import ToastKit
import ToastKitAgent

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
    /// How long `Present` may take: the agent's own call to the server (``AgentInterface/serverTimeout``), its wait
    /// for the toast's sound (``AgentInterface/soundWait``) and one second for the agent's part (its disk writes, its
    /// start). An agent that does not answer within it is exit 69,
    /// "the toast agent did not answer".
    static let presentTimeout: Duration = AgentInterface.serverTimeout + AgentInterface.soundWait + .seconds(1)

    /// Why a command does not go through the agent, or nil when it may.
    ///
    /// - Parameter portalChecked: The caller has already found that the portal is not used.
    static func bypassReason(
        _ options: SendOptions, environment: CommandEnvironment, portalChecked: Bool = false, serverTimed: Bool = true
    ) -> String? {
        if options.noAgent { return "--no-agent" }
        if let value = environment.variable("TOASTKIT_NO_AGENT"), !value.isEmpty, value != "0" {
            return "TOASTKIT_NO_AGENT is set"
        }
        if !portalChecked, environment.backendChoice.backend == .portal {
            return "the notification portal is used (\(environment.backendChoice.reason))"
        }
        // Nothing for the agent to hold: no timer (the server times the toast), no command, no id to wait for, no
        // toast of its own to update (`-r N` may name one).
        // `serverTimed` false: that is no reason (a toast the agent keeps for GNOME 46+, ``GNOMEAppTie``).
        if serverTimed, ToastOptions.duration(for: options) == nil, options.onAction.isEmpty, options.id == nil,
            options.replaceID == nil, options.due == nil, options.snooze == nil
        {
            return "the server times the toast"
        }
        return nil
    }

    /// What became of a call to the agent.
    enum CallError: Error {
        /// No agent answered and none could be started (the reason, or nil when the session bus itself cannot be
        /// reached — the direct path then reports that as it always has).
        case unreachable(String?)
        /// The agent answered with an error: the command ends with this failure.
        case failed(CommandFailure)
        /// The agent did not answer in time (it stopped, or hangs): a wait asks again, anything else ends with this.
        case noAnswer(CommandFailure)

        /// The failure the command ends with, when the agent was reached.
        var failure: CommandFailure? {
            switch self {
            case .failed(let failure), .noAnswer(let failure): failure
            case .unreachable: nil
            }
        }
    }

    /// What the next attempt does after an error from the bus or the agent.
    enum NextStep {
        /// No agent owns the name: start one (once) and try again.
        case startAgent
        /// The agent is going away (`Stopping`, or it left with the call unanswered): call again shortly, without
        /// starting one yet — the name is still its, or the next call finds it free and starts one.
        case callAgain
        case give(CallError)

        /// Whether this step starts an agent (then the next call waits longer for it).
        var startsAgent: Bool {
            if case .startAgent = self { return true }
            return false
        }
    }

    /// The step after a call to the agent failed with `error`.
    ///
    /// An agent that exits for being idle answers `Stopping`, and a call that reached it in the moment it closed gets
    /// the bus's `NoReply` for a recipient that left: neither took the call, so it is made again (to the next agent).
    /// Calls carry the toast's id, so even a call an agent did take before it died is only a replacement the second
    /// time, never a second toast.
    static func next(after error: DBusError) -> NextStep {
        switch error.name {
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner:
            return .startAgent
        case AgentInterface.ErrorName.stopping:
            return .callAgain
        case DBusError.Name.noReply where error.isRecipientDisconnected:
            return .callAgain
        case AgentInterface.ErrorName.queueFull:
            return .give(.failed(.unavailable(error.message)))
        case AgentInterface.ErrorName.unknownKey,
            // What agents before 0.2.1 said instead (their text is all that tells it apart).
            AgentInterface.ErrorName.invalidToast where error.message.hasPrefix("unknown key"):
            // An agent of an older version, still running after an upgrade: it cannot read this toast; the direct
            // path can.
            return .give(
                .unreachable(
                    "the running toast agent is older than this toastkit (\(error.message)); "
                        + "`toastkit agent --replace` starts the new one"))
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
            return .give(.noAnswer(.unavailable("the toast agent did not answer: \(error.message)")))
        default:
            return .give(.failed(.unavailable("the toast agent failed: \(error.name): \(error.message)")))
        }
    }

    // MARK: - Starting the agent

    /// A started agent process, watched until it took its name or exited.
    struct Started {
        let pid: pid_t
        let log: String

        /// What became of it.
        enum State {
            case running
            /// It exited 0: another agent had the name (that one answers, or, if it was exiting, one must be started
            /// again).
            case gaveWay
            /// It failed at start, with the reason.
            case failed(String)
        }

        /// Its state now (once it has exited, ask no more: it is reaped).
        func state() -> State {
            guard case .ended(let end) = Spawn.wait(pid, blocking: false) else { return .running }
            return end == .exited(0)
                ? .gaveWay : .failed("the toast agent exited with status \(end.shellStatus) at start (see \(log))")
        }
    }

    /// Starts `toastkit agent` detached.
    ///
    /// - Throws: the reason it could not be started.
    static func startAgent(environment: [String: String]) throws(CallError) -> Started {
        guard let program = program(environment: environment) else {
            throw .unreachable("cannot find the toastkit program to start the agent")
        }
        let log = PrivateFiles.parent(of: ActionEnvironment.logPath(environment: environment)) + "/agent.log"
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
        return ProcessEnvironment.findExecutable("toastkit", in: environment)
    }

    /// Starts an agent unless one this command started is still starting; one that gave way to an agent that has
    /// since gone (an idle exit) is replaced by a new one.
    static func ensureStarting(_ started: inout Started?, environment: [String: String]) throws(CallError) {
        if let current = started {
            switch current.state() {
            case .running: return
            case .gaveWay: started = nil
            case .failed(let reason): throw .unreachable(reason)
            }
        }
        started = try startAgent(environment: environment)
    }

    // MARK: - Blocking calls (the commands that run without tasks)

    /// Connects to the session bus and makes `call`, in one round trip.
    static func connect(calling call: DBusMethodCall) throws(CallError) -> (
        BlockingDBusConnection, [Result<DBusMessage, DBusError>]
    ) {
        do {
            return try BlockingDBusConnection.connect(to: .session, timeout: presentTimeout, calling: [call])
        } catch {
            throw .unreachable(nil)
        }
    }

    /// When a blocking call starts the agent that no one runs.
    enum StartRule {
        /// Whenever no agent owns the name (a call that needs the agent: `send`, `later`).
        case always
        /// Only when toasts wait for an agent on this bus: a hand-over a `send` wrote, or a killed agent's saved
        /// toasts (a query: `list` and `close` right after a `send` that started its agent without waiting must
        /// see that `send`'s toast, not an agent still starting).
        case whenToastsWait
    }

    /// Whether toasts wait for an agent on the bus of `connection` (``StartRule/whenToastsWait``).
    private static func toastsWait(on connection: BlockingDBusConnection, environment: [String: String]) -> Bool {
        guard
            let busID = try? connection.call([.bus("GetId")], timeout: .seconds(10))[0].get().arguments("s")[0]
                .stringValue
        else { return false }
        let store = try? AgentStore.open(environment: environment, busID: busID)
        let handOver = try? AgentStore.handOver(environment: environment, busID: busID)
        return store?.exists == true || handOver?.exists == true
    }

    /// Makes `call` on the agent over a fresh blocking connection (or goes on from `first`, a connection and the
    /// result of `call` made on it), starting the agent if no one owns its name (as `start` says).
    ///
    /// - Returns: the reply, and the connection (for more calls; the caller closes it).
    static func callBlocking(
        _ call: DBusMethodCall, timeout: Duration, environment: [String: String], start: StartRule = .always,
        first: (BlockingDBusConnection, Result<DBusMessage, DBusError>)? = nil
    ) throws(CallError) -> (DBusMessage, BlockingDBusConnection) {
        let connection: BlockingDBusConnection
        var result: Result<DBusMessage, DBusError>
        if let first {
            (connection, result) = first
        } else {
            do {
                let (opened, replies) = try BlockingDBusConnection.connect(
                    to: .session, timeout: timeout, calling: [call])
                connection = opened
                result = replies[0]
            } catch {
                throw .unreachable(nil)
            }
        }
        var started: Started?
        let startLimit = startLimit(environment)
        // From the first time an agent is needed: a call that waited an hour before its agent died gets the same.
        var deadline: ContinuousClock.Instant?
        while true {
            switch result {
            case .success(let reply): return (reply, connection)
            case .failure(let error):
                let step = next(after: error)
                switch step {
                case .give(let failure):
                    connection.close()
                    throw failure
                case .startAgent:
                    // Asked once: an agent this call started stays needed until it answers.
                    guard start == .always || started != nil || toastsWait(on: connection, environment: environment)
                    else {
                        connection.close()
                        throw .unreachable("no toast agent is running")
                    }
                    do throws(CallError) {
                        try ensureStarting(&started, environment: environment)
                    } catch {
                        connection.close()
                        throw error
                    }
                    fallthrough
                case .callAgain:
                    let limit = deadline ?? ContinuousClock.now + startLimit
                    deadline = limit
                    guard ContinuousClock.now < limit else {
                        connection.close()
                        throw .unreachable("the toast agent did not start within \(startLimit)")
                    }
                    usleep(step.startsAgent ? 10_000 : 2_000)
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
        var deadline: ContinuousClock.Instant?
        while true {
            do {
                return try await connection.call(call, timeout: timeout)
            } catch let error as DBusError {
                switch next(after: error) {
                case .give(let failure): throw failure
                case .startAgent:
                    guard startIfNeeded else { throw .unreachable("no toast agent is running") }
                    try ensureStarting(&started, environment: environment)
                    let limit = deadline ?? ContinuousClock.now + startLimit
                    deadline = limit
                    guard ContinuousClock.now < limit else {
                        throw .unreachable("the toast agent did not start within \(startLimit)")
                    }
                    try? await Task.sleep(for: .milliseconds(10))
                case .callAgain:
                    let limit = deadline ?? ContinuousClock.now + startLimit
                    deadline = limit
                    guard ContinuousClock.now < limit else {
                        throw .unreachable("the toast agent did not start within \(startLimit)")
                    }
                    try? await Task.sleep(for: .milliseconds(2))
                }
            } catch {
                throw .failed(CommandFailure(.software, "internal error: \(error)"))
            }
        }
    }
}

extension AgentRequest {
    /// The request `toastkit send` hands the agent: what only the sender knows resolved — the message text (read
    /// from standard input, cut at the limit; the icon was resolved by ``SendOptions/sent()``), the built-in labels in the
    /// sender's language. The agent checks the toast as the direct path does (the same function, the same words)
    /// and gives it an id when it has none.
    /// The sender's `environment` and working folder go with a toast that has `--on-action` commands, a reply, or a
    /// sound the agent may play.
    init(sending options: SendOptions, text: String?, environment: [String: String]) throws(CommandFailure) {
        var resolved = options
        resolved.message = text.map(MessageSource.text)
        resolved.appName = options.appName ?? options.dialect.programName
        // Built-in labels only where an action has no label of its own (reading the locale costs a little).
        let builtIn = (options.actions + (options.tap.map { [$0] } ?? [])).contains { $0.label == nil }
        let labels = builtIn ? options.labels : ToastLabels(language: .english)
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
        // The duration is carried as the client resolved it (-t as the duration it stands for, a question's
        // "until answered", the server's default): the agent never needs to know whose command line it was.
        resolved.duration = ToastOptions.duration(for: options).map(DurationOption.duration) ?? .serverDefault
        self.init(options: resolved, onAction: options.onAction)
        awaitShown = options.printID || options.json || options.waits
        let playsSound = options.sound.map { $0 != .silent } ?? false
        if !options.onAction.isEmpty || options.actions.contains(where: { $0.reply != nil }) || playsSound {
            // The commands run later as this script would have run them: in its folder, with its environment; a
            // reply's prompt opens where the script runs (its display); a sound plays as `send` would play it
            // itself (its TOASTKIT_SOUND_PLAYER, its PATH, its sound theme).
            self.environment = environment
            workingDirectory = FileManager.default.currentDirectoryPath
        }
    }
}
