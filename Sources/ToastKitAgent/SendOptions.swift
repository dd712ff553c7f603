package import ToastKit

// The options of `toastkit send`, as the command line parses them and the agent receives them: the vocabulary the
// client and the agent share (the agent's wire and disk forms are their own: `AgentRequest.dictionary`,
// `SavedRequest`).

/// Where the message comes from.
package enum MessageSource: Sendable, Equatable, Codable {
    /// The argument itself.
    case text(String)
    /// Standard input (`-`).
    case standardInput
}

/// How long the toast stays, as given on the command line.
package enum DurationOption: Sendable, Equatable, Codable {
    /// `-d SECONDS|auto|indefinite`.
    case duration(ToastDuration)
    /// `-t MS` (notify-send's milliseconds; -1 the default, 0 never).
    case expireTime(Int32)

    /// The model's duration.
    package var toastDuration: ToastDuration {
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
package struct ActionOption: Sendable, Equatable, Codable {
    /// The id printed when it is invoked.
    package var id: String
    /// The label; `nil` uses the built-in label (`later`, `dismiss`, or "Open" for `--tap`).
    package var label: String?
    /// Text shown briefly after the action (`--confirm ID=TEXT`).
    package var confirmation: String?

    /// An action `id` with an optional label and confirmation.
    package init(id: String, label: String? = nil, confirmation: String? = nil) {
        self.id = id
        self.label = label
        self.confirmation = confirmation
    }
}

/// The icon, as given: a theme name or a file.
package enum IconOption: Sendable, Equatable, Codable {
    /// A theme icon name (SF Symbol names are mapped).
    case name(String)
    /// A file path, as given (checked and made absolute when the command runs).
    case path(String)
}

/// Everything `toastkit send` takes.
package struct SendOptions: Sendable, Equatable, Codable {
    package var title: String
    package var message: MessageSource?
    package var status: ToastStatus = .normal
    package var icon: IconOption?
    package var id: String?
    package var duration: DurationOption?
    package var actions: [ActionOption] = []
    package var tap: ActionOption?
    package var wait = false
    package var json = false
    package var appName: String?
    package var appIcon: String?
    package var urgency: ToastUrgency?
    package var category: String?
    package var hints: [Hint] = []
    package var transient = false
    package var printID = false
    package var replaceID: UInt32?
    /// `--on-action ID=COMMAND`: the program and arguments (already split, or `/bin/sh -c` with `--shell`) for
    /// each action id.
    package var onAction: [String: [String]] = [:]
    /// `--no-agent`: the direct path, even when the agent could be used.
    package var noAgent = false

    package init(title: String) {
        self.title = title
    }

    /// Whether the command stays until the toast ends: `--wait`, or any action (as notify-send's `-A`) unless
    /// `--on-action` hands the actions to the agent.
    package var waits: Bool { wait || (onAction.isEmpty && (tap != nil || !actions.isEmpty)) }
}

/// One `-h TYPE:NAME:VALUE`.
package struct Hint: Sendable, Equatable, Codable {
    package var name: String
    package var value: ToastHintValue

    /// Hint `name` with `value`.
    package init(name: String, value: ToastHintValue) {
        self.name = name
        self.value = value
    }
}
