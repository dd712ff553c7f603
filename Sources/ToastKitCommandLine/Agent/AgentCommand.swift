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

    /// The most toasts on screen at once that `--max-visible` accepts.
    static let maxVisibleLimit = 10

    /// `--idle-timeout`'s value (or the config file's `idle-timeout`), checked.
    static func idleTimeout(_ value: String, source: String) throws(CommandFailure) -> Duration {
        guard let seconds = Double(value), seconds.isFinite, seconds >= 0, seconds <= 86_400 * 365 else {
            throw .data("\(source) \(value): expected a number of seconds (0 to stay until stopped)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// `--max-visible`'s value (or the config file's `max-visible`), checked.
    static func maxVisible(_ value: String, source: String) throws(CommandFailure) -> Int {
        guard let number = Int(value), (1...maxVisibleLimit).contains(number) else {
            throw .data("\(source) \(value): expected a whole number from 1 to \(maxVisibleLimit)")
        }
        return number
    }
}

/// What an agent runs with: the command line over the config file over the defaults.
struct AgentSettings: Sendable, Equatable {
    /// How long the agent stays with no live toast and no call being served; nil: until stopped.
    var idleTimeout: Duration? = .seconds(60)
    /// How many toasts are on screen at most.
    var maxVisible = 1
    /// Take the name from a running agent.
    var replace = false

    /// The config file: `$XDG_CONFIG_HOME/toastkit/agent.conf` (`~/.config/toastkit/agent.conf`).
    static func configPath(environment: [String: String]) -> String? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/toastkit/agent.conf" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.config/toastkit/agent.conf" }
        return nil
    }

    /// The settings for `options` and the config file of `environment`.
    ///
    /// The file has one `key = value` a line; `#` starts a comment; keys are `max-visible` and `idle-timeout`
    /// (as the options). A missing file is no error; an unreadable one, an unknown key or a bad value is (exit
    /// 65, with the file and line): an agent that silently ignored its configuration would be worse.
    static func resolve(_ options: AgentOptions, environment: [String: String]) throws(CommandFailure) -> AgentSettings
    {
        var settings = AgentSettings()
        if let path = configPath(environment: environment) {
            let bytes: [UInt8]?
            do {
                bytes = try PrivateFiles.contents(of: path)
            } catch {
                throw CommandFailure(.ioError, error.description)
            }
            if let bytes {
                try settings.read(String(decoding: bytes, as: UTF8.self), path: path)
            }
        }
        if let idleTimeout = options.idleTimeout { settings.idleTimeout = idleTimeout == .zero ? nil : idleTimeout }
        if let maxVisible = options.maxVisible { settings.maxVisible = maxVisible }
        settings.replace = options.replace
        return settings
    }

    /// Applies the config file's `text`.
    mutating func read(_ text: String, path: String) throws(CommandFailure) {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.prefix { $0 != "#" }.trimmingCharacters(in: " \t\r")
            guard !line.isEmpty else { continue }
            let place = "\(path):\(index + 1)"
            guard let equals = line.firstIndex(of: "=") else {
                throw .data("\(place): expected key = value, got \"\(line)\"")
            }
            let key = String(line[..<equals]).trimmingCharacters(in: " \t")
            let value = String(line[line.index(after: equals)...]).trimmingCharacters(in: " \t")
            switch key {
            case "max-visible": maxVisible = try AgentOptions.maxVisible(value, source: "\(place): max-visible")
            case "idle-timeout":
                let timeout = try AgentOptions.idleTimeout(value, source: "\(place): idle-timeout")
                idleTimeout = timeout == .zero ? nil : timeout
            default:
                throw .data("\(place): unknown setting \"\(key)\" (max-visible, idle-timeout)")
            }
        }
    }
}

extension StringProtocol {
    /// The text without the given characters at either end.
    func trimmingCharacters(in characters: String) -> String {
        let set = Set(characters)
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}

/// `toastkit agent`: serves until it has been idle for its idle time, its bus goes away (its session's toasts end
/// with it), or it gets SIGINT or SIGTERM (it then saves its live toasts for the next agent and exits 0).
enum AgentCommand {
    static func run(_ options: AgentOptions, environment: CommandEnvironment) async throws(CommandFailure) -> ExitCode {
        let settings = try AgentSettings.resolve(options, environment: environment.variables)
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGHUP])
        guard let agent = try await ToastAgent.start(settings: settings, environment: environment.variables) else {
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
                await agent.nameLost(); _ = stop.yield(.replaced)
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
        return .success
    }
}
