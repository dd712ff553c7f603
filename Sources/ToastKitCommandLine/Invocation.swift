import ToastKit
import ToastKitAgent

/// What a command line asks for: the result of parsing, before anything is run.
enum Invocation: Sendable, Equatable {
    /// Print help: the top level (`nil`) or one command's.
    case help(Command?)
    /// Print the version.
    case version
    /// `toastkit send`.
    case send(SendOptions)
    /// `toastkit close`.
    case close(CloseTarget)
    /// `toastkit later`: the kept toasts of `application` (the command line's, `toastkit`, unless `--app NAME`).
    case later(show: Bool, json: Bool, application: String)
    /// `toastkit capabilities`.
    case capabilities(json: Bool)
    /// `toastkit server-info`.
    case serverInfo(json: Bool)
    /// `toastkit listen`.
    case listen(json: Bool)
    /// `toastkit agent`.
    case agent(AgentOptions)
    /// `toastkit wait --id ID`.
    case wait(id: String, json: Bool)
    /// `toastkit list`.
    case list(json: Bool)
    /// `toastkit doctor`.
    case doctor(json: Bool)
    /// `toastkit run`.
    case run(RunOptions)
    /// `toastkit progress`: `send`'s options for the toast that follows the lines of standard input.
    case progress(SendOptions)
    /// A command of the tool toastkit stands in for that shows no notification (dunstify's `-C`, `-c`, `-s`).
    case toolCommand(ToolCommand, CommandDialect)

    /// Whose command line it was: what it prints and how it exits (``DialectOutput``).
    var dialect: CommandDialect {
        switch self {
        case .send(let options): options.dialect
        case .toolCommand(_, let dialect): dialect
        default: .toastkit
        }
    }
}

/// dunstify's commands that show no notification.
enum ToolCommand: Sendable, Equatable {
    /// `-C ID`: close a notification.
    case close(UInt32)
    /// `-c`: the server's capabilities, one per line.
    case capabilities
    /// `-s`: the server's name, vendor, version and specification version.
    case serverInfo
    /// `--help` and `--version` of the tool.
    case help
    case version
}

/// The commands.
enum Command: String, Sendable, CaseIterable {
    case send
    case close
    case later
    case capabilities
    case serverInfo = "server-info"
    case listen
    case wait
    case list
    case run
    case progress
    case doctor
    case agent
    case notifySend = "notify-send"
    case dunstify
}

/// What `toastkit close` closes.
enum CloseTarget: Sendable, Equatable {
    /// A toast sent with `--id`.
    case id(String)
    /// A notification by the server's number.
    case serverID(UInt32)
}
