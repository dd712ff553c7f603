import Glibc
import ToastKit
import ToastKitAgent

/// `toastkit agent`'s options as given on the command line (nil: the config file's value, else the default).
struct AgentOptions: Sendable, Equatable {
    /// `--idle-timeout SECONDS` (0: never exit when idle).
    var idleTimeout: Duration?
    /// `--max-visible N`.
    var maxVisible: Int?
    /// `--replace`: take the name from a running agent.
    var replace = false
    /// `--keeper JOURNAL`: run as the keeper of the agent whose journal is JOURNAL (``AgentKeeper``; the agent
    /// starts it, with the pipe it says goodbye on as standard input).
    var keeper: String?
    /// `--if-scheduled`: start only when the user has scheduled toasts (the login's autostart entry: a reminder that
    /// came due while the user was away is shown at once, one due later on time), else exit 0 at once.
    var ifScheduled = false

    /// The most toasts on screen at once that `--max-visible` accepts.
    static let maxVisibleLimit = AgentSettings.maxVisibleLimit

    /// `--idle-timeout`'s value, checked (``AgentSettings/idleTimeout(_:source:)``).
    static func idleTimeout(_ value: String, source: String) throws(CommandFailure) -> Duration {
        do {
            return try AgentSettings.idleTimeout(value, source: source)
        } catch {
            throw .data(error.message)
        }
    }

    /// `--max-visible`'s value, checked (``AgentSettings/maxVisible(_:source:)``).
    static func maxVisible(_ value: String, source: String) throws(CommandFailure) -> Int {
        do {
            return try AgentSettings.maxVisible(value, source: source)
        } catch {
            throw .data(error.message)
        }
    }
}

extension AgentSettings {
    /// The settings for `options` and the config file of `environment` (``AgentSettings/resolve(idleTimeout:maxVisible:replace:environment:)``),
    /// its failures as the command's: an unreadable file exit 74, a bad setting exit 65.
    static func resolve(_ options: AgentOptions, environment: [String: String]) throws(CommandFailure) -> AgentSettings
    {
        do {
            return try resolve(
                idleTimeout: options.idleTimeout, maxVisible: options.maxVisible, replace: options.replace,
                environment: environment)
        } catch {
            throw CommandFailure(error.unreadable ? .ioError : .dataError, error.message)
        }
    }
}

/// `toastkit agent`: serves until it has been idle for its idle time, its bus goes away (its session's toasts end
/// with it), or it gets SIGINT or SIGTERM (it then saves its live toasts for the next agent and exits 0).
enum AgentCommand {
    static func run(_ options: AgentOptions, environment: CommandEnvironment) async throws(CommandFailure) -> ExitCode {
        if let journal = options.keeper {
            return AgentKeeper.keep(journal: journal, environment: environment.variables)
        }
        if options.ifScheduled, (try? ScheduleStore.open(environment: environment.variables))?.load().isEmpty ?? true {
            return .success
        }
        let settings = try AgentSettings.resolve(options, environment: environment.variables)
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGHUP])
        let started: ToastAgent?
        // Started before the agent takes its name, so that no moment of its service goes unwatched; told goodbye
        // however this command ends (an agent that gave way, or failed at start, is restarted by nobody).
        var keeper: Int32?
        defer { keeper.map(AgentKeeper.goodbye) }
        do {
            started = try await ToastAgent.start(
                settings: settings, environment: environment.variables, version: ToolVersion.current
            ) { journal in
                keeper = AgentKeeper.start(journal: journal, environment: environment.variables)
            }
        } catch {
            throw CommandFailure(error.stateUnusable ? .ioError : .unavailable, error.message)
        }
        guard let agent = started else {
            // Another agent has the name: this one is not needed (a race between two sends that both started one).
            Output.error("an agent already runs on this session bus (use --replace to take over)")
            return .success
        }
        enum Stop: Sendable { case idle, signal(Int32), busClosed(String), replaced }
        let (stops, stop) = AsyncStream<Stop>.makeStream()
        let watchers = [
            Task {
                for await _ in agent.exits {}; _ = stop.yield(.idle)
            },
            Task { for await signal in signals.signals { _ = stop.yield(.signal(signal)) } },
            Task { _ = stop.yield(.busClosed(await agent.connection.waitUntilClosed().message)) },
            Task {
                if await agent.nameLost() { _ = stop.yield(.replaced) }
            },
        ]
        defer { for watcher in watchers { watcher.cancel() } }
        var reason = Stop.idle
        for await first in stops {
            reason = first
            break
        }
        switch reason {
        case .busClosed(let why):
            Output.error("agent: the session bus closed (\(why)); its session's toasts end with it")
        case .replaced:
            // The new agent adopts the toasts from the saved file; this one lets go without closing them.
            Output.error("agent: another agent took over")
        case .idle, .signal:
            break
        }
        switch reason {
        case .replaced: agent.stop(.handOver)
        case .busClosed: agent.stop(.endSession)
        case .idle, .signal: agent.stop(.save)
        }
        if case .busClosed = reason {} else { await agent.releaseDesktop() }
        return .success
    }
}
