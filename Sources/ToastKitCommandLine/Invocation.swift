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
    /// `toastkit later`.
    case later(show: Bool, json: Bool)
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
    case agent
}

/// What `toastkit close` closes.
enum CloseTarget: Sendable, Equatable {
    /// A toast sent with `--id`.
    case id(String)
    /// A notification by the server's number.
    case serverID(UInt32)
}
