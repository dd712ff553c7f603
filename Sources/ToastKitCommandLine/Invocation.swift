import ToastKit

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

/// Where the message comes from.
enum MessageSource: Sendable, Equatable, Codable {
    /// The argument itself.
    case text(String)
    /// Standard input (`-`).
    case standardInput
}

/// How long the toast stays, as given on the command line.
enum DurationOption: Sendable, Equatable, Codable {
    /// `-d SECONDS|auto|indefinite`.
    case duration(ToastDuration)
    /// `-t MS` (notify-send's milliseconds; -1 the default, 0 never).
    case expireTime(Int32)

    /// The model's duration.
    var toastDuration: ToastDuration {
        switch self {
        case .duration(let duration): duration
        case .expireTime(let milliseconds):
            switch milliseconds {
            case ..<0: .automatic
            case 0: .indefinite
            default: .seconds(Double(milliseconds) / 1000)
            }
        }
    }
}

/// One action from `-A`/`--tap`.
struct ActionOption: Sendable, Equatable, Codable {
    /// The id printed when it is invoked.
    var id: String
    /// The label; `nil` uses the built-in label (`later`, `dismiss`, or "Open" for `--tap`).
    var label: String?
    /// Text shown briefly after the action (`--confirm ID=TEXT`).
    var confirmation: String?
}

/// The icon, as given: a theme name or a file.
enum IconOption: Sendable, Equatable, Codable {
    /// A theme icon name (SF Symbol names are mapped).
    case name(String)
    /// A file path, as given (checked and made absolute when the command runs).
    case path(String)
}

/// Everything `toastkit send` takes.
struct SendOptions: Sendable, Equatable, Codable {
    var title: String
    var message: MessageSource?
    var status: ToastStatus = .normal
    var icon: IconOption?
    var id: String?
    var duration: DurationOption?
    var actions: [ActionOption] = []
    var tap: ActionOption?
    var wait = false
    var json = false
    var appName: String?
    var appIcon: String?
    var urgency: ToastUrgency?
    var category: String?
    var hints: [Hint] = []
    var transient = false
    var printID = false
    var replaceID: UInt32?
    /// `--on-action ID=COMMAND`: the program and arguments (already split, or `/bin/sh -c` with `--shell`) for
    /// each action id.
    var onAction: [String: [String]] = [:]
    /// `--no-agent`: the direct path, even when the agent could be used.
    var noAgent = false

    init(title: String) {
        self.title = title
    }

    /// Whether the command stays until the toast ends: `--wait`, or any action (as notify-send's `-A`) unless
    /// `--on-action` hands the actions to the agent.
    var waits: Bool { wait || (onAction.isEmpty && (tap != nil || !actions.isEmpty)) }
}

/// One `-h TYPE:NAME:VALUE`.
struct Hint: Sendable, Equatable, Codable {
    var name: String
    var value: ToastHintValue
}
