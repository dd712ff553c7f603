package import ToastKit

// The options of `toastkit send`, as the command line parses them and the agent receives them: the vocabulary the
// client and the agent share (the agent's wire and disk forms are their own: `AgentRequest.dictionary`,
// `SavedRequest`).

/// Where the message comes from.
package enum MessageSource: Sendable, Equatable {
    /// The argument itself.
    case text(String)
    /// Standard input (`-`).
    case standardInput
}

/// How long the toast stays, as given on the command line.
package enum DurationOption: Sendable, Equatable {
    /// `-d SECONDS|auto|indefinite`.
    case duration(ToastDuration)
    /// `-t MS` (notify-send's milliseconds; -1 the server's default, 0 never).
    case expireTime(Int32)
    /// No duration was given and the server's settings decide, as for notify-send without `-t` (`expire_timeout`
    /// -1): the wire and disk form of a toast whose duration the client resolved to the server's.
    case serverDefault

    /// The model's duration; nil when the server decides (``serverDefault``, `-t -1`).
    package var toastDuration: ToastDuration? {
        switch self {
        case .duration(let duration): duration
        case .serverDefault: nil
        case .expireTime(let milliseconds):
            switch milliseconds {
            case ..<0: nil
            case 0: .indefinite
            default: .seconds(Double(milliseconds) / 1000)
            }
        }
    }
}

/// Whose command line a send follows: `toastkit send`'s, or that of the tool toastkit stands in for when it is
/// called by that tool's name (a link named `notify-send` or `dunstify`, or `toastkit notify-send …`). The dialect
/// decides the parsing, the default app name, what is printed and the exit codes; what the server receives is
/// built the same way for all three (``ToastOptions``).
package enum CommandDialect: String, Sendable, Equatable, CaseIterable {
    /// `toastkit send`: notify-send's command line plus toastkit's options, toastkit's exit codes.
    case toastkit
    /// libnotify's `notify-send` (0.7 and 0.8): exit 0 for every ending, 1 for every failure.
    case notifySend = "notify-send"
    /// dunst's `dunstify` (1.9): `-A key,label`, `-r`, `-b`, `-C`, its output and exit codes.
    case dunstify

    /// The tool's name, as a program is called.
    package var programName: String {
        switch self {
        case .toastkit: "toastkit"
        case .notifySend: "notify-send"
        case .dunstify: "dunstify"
        }
    }
}

/// One action from `-A`/`--tap`.
package struct ActionOption: Sendable, Equatable {
    /// The id printed when it is invoked.
    package var id: String
    /// The label; `nil` uses the built-in label (`later`, `dismiss`, or "Open" for `--tap`).
    package var label: String?
    /// Text shown briefly after the action (`--confirm ID=TEXT`).
    package var confirmation: String?
    /// For `--reply`: the text field (its placeholder).
    package var reply: ToastReplyField?

    /// An action `id` with an optional label and confirmation.
    package init(id: String, label: String? = nil, confirmation: String? = nil, reply: ToastReplyField? = nil) {
        self.id = id
        self.label = label
        self.confirmation = confirmation
        self.reply = reply
    }
}

/// The icon, as given: a theme name or a file.
package enum IconOption: Sendable, Equatable {
    /// A theme icon name (SF Symbol names are mapped).
    case name(String)
    /// A file path, as given (checked and made absolute when the command runs).
    case path(String)
}

/// Everything `toastkit send` takes.
package struct SendOptions: Sendable, Equatable {
    package var title: String
    package var message: MessageSource?
    /// `-s`: a status preset; nil when none is given (no icon then, unless `-i` asks for one).
    package var status: ToastStatus?
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
    /// `--terminal` (`"auto"`: the code the terminal calls for) or `--terminal-code CODE` (`99`, `777`, `9`,
    /// `plain`): the toast goes to the terminal as an escape code, not to a bus.
    package var terminal: String?
    /// `--in` / `--at`: when the toast is to be shown, in seconds since 1970 (the agent keeps it until then).
    package var due: Double?
    /// `-A later=DURATION`: the Later action brings the toast back by itself after this many seconds (a snooze)
    /// instead of keeping it for `toastkit later`.
    package var snooze: Double?
    /// `--progress PERCENT|indeterminate`: how far the task has come.
    package var progress: ToastProgress?
    /// `--dnd hold|drop|show`: what the toast does while Do Not Disturb is on; nil for the dialect's default
    /// (``doNotDisturbPolicy``).
    package var doNotDisturb: ToastDoNotDisturbPolicy?
    /// `--sound NAME|FILE|default|silent`: the sound to play when the toast first appears (a file path is absolute).
    package var sound: ToastSound?
    /// Whether the notification of ``replaceID`` already played the toast's sound (`send` showed the toast itself,
    /// then handed it to the agent as a replacement). Not an option.
    package var soundPlayed = false
    /// Whether `send` without `--wait` keeps quiet about Do Not Disturb (the steps of `toastkit progress`: its final
    /// toast says it once). Not an option.
    package var quietAboutDoNotDisturb = false
    /// Whose command line this is: the client's parsing, output and exit codes; for the agent, whether a toast
    /// without any text is allowed (dunstify sends one, for an icon-only OSD).
    package var dialect: CommandDialect = .toastkit
    /// `--plain`: the message is plain text, shown as typed (markup characters included); by default it is markup
    /// as notify-send passes it, kept valid by the sanitizer.
    package var plainText = false
    /// `--lang CODE`: the language of the built-in labels (Later, Dismiss, Open); the locale's when `nil`.
    package var language: String?
    /// `--default ID`: the answer printed and returned when a toast with actions is dismissed or expires.
    package var defaultAnswer: String?
    /// dunstify's `-I FILE`: the image, sent as the `image-path` hint (the client checks the file and turns it into
    /// the hint before anything is sent; never sent to the agent as such).
    package var rawIcon: String?
    /// What the parser noticed and `send` prints on stderr before it sends (a malformed dunstify action, a hint
    /// read as notify-send reads it); never sent to the agent.
    package var warnings: [String] = []

    /// The built-in labels of this toast: those of `--lang`, else of the locale.
    package var labels: ToastLabels {
        language.flatMap { ToastLabels(languageCode: $0) } ?? .current
    }

    package init(title: String) {
        self.title = title
    }

    /// Whether the command stays until the toast ends: `--wait`, or any action (as notify-send's `-A`) unless
    /// `--on-action` hands the actions to the agent.
    package var waits: Bool { wait || (onAction.isEmpty && (tap != nil || !actions.isEmpty)) }
}

/// One `-h TYPE:NAME:VALUE`.
package struct Hint: Sendable, Equatable {
    package var name: String
    package var value: ToastHintValue

    /// Hint `name` with `value`.
    package init(name: String, value: ToastHintValue) {
        self.name = name
        self.value = value
    }
}

extension SendOptions {
    /// What the toast does while Do Not Disturb is on: `--dnd`, else `hold` for toastkit and `show` for notify-send
    /// and dunstify, which hand every notification to the server whatever its state.
    package var doNotDisturbPolicy: ToastDoNotDisturbPolicy {
        doNotDisturb ?? (dialect == .toastkit ? .hold : .show)
    }
}
