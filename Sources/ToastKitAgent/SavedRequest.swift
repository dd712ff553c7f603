import ToastKit

/// A toast's request as the agent's journal keeps it on disk: every field under a key of its own (snake case),
/// plain JSON values, nothing derived from the command line's option types' shape — so the journal's format
/// (version 2, ``AgentStore``) changes only when this file does, and a value no agent could have written is refused
/// with its key's name.
package struct SavedRequest: Codable, Sendable, Equatable {
    /// An action: its id, label and confirmation text, and for `--reply` its placeholder (`reply_placeholder`, ""
    /// for none; absent for any other action).
    package struct Action: Codable, Sendable, Equatable {
        package var id: String
        package var label: String?
        package var confirmation: String?
        package var replyPlaceholder: String?

        enum CodingKeys: String, CodingKey {
            case id, label, confirmation
            case replyPlaceholder = "reply_placeholder"
        }
    }

    /// A hint: its name, its D-Bus type (`y b i u x d s`) and its value as text.
    package struct Hint: Codable, Sendable, Equatable {
        package var name: String
        package var type: String
        package var value: String
    }

    package var title: String
    package var message: String?
    package var status: String?
    package var icon: String?
    package var iconFile: String?
    /// Seconds; absent for the default duration.
    package var seconds: Double?
    package var indefinite: Bool?
    /// The server's default duration (`expire_timeout` -1).
    package var serverTimed: Bool?
    /// `--plain`.
    package var plainText: Bool?
    /// Whose command line it was, when not toastkit's.
    package var dialect: String?
    package var actions: [Action]?
    package var tap: Action?
    package var appName: String?
    package var appIcon: String?
    package var urgency: String?
    package var category: String?
    package var hints: [Hint]?
    package var transient: Bool?
    package var replaceID: UInt32?
    package var onAction: [String: [String]]?
    package var awaitShown: Bool?
    package var workingDirectory: String?
    package var environment: [String: String]?
    /// `-A later=DURATION`: seconds after which the Later action brings the toast back.
    package var snooze: Double?
    /// `--progress`: a fraction from 0 to 1; `indeterminate` for under way without a measure.
    package var progress: Double?
    package var indeterminateProgress: Bool?
    /// `--dnd`: `hold`, `drop` or `show`; nil for the dialect's default.
    package var dnd: String?
    /// `--sound`: a sound-theme name, an absolute file path, or `silent`.
    package var sound: String?

    package enum CodingKeys: String, CodingKey {
        case title, message, status, icon, seconds, indefinite, actions, tap, urgency, category, hints, transient
        case environment
        case iconFile = "icon_file"
        case appName = "app_name"
        case appIcon = "app_icon"
        case replaceID = "replace_id"
        case onAction = "on_action"
        case awaitShown = "await_shown"
        case serverTimed = "server_timed"
        case plainText = "plain_text"
        case dialect
        case workingDirectory = "working_directory"
        case snooze, progress, dnd, sound
        case indeterminateProgress = "indeterminate_progress"
    }

    /// The disk form of `request` (whose message is text and whose icon file is absolute, as `send` resolved them).
    package init(_ request: AgentRequest) {
        let options = request.options
        title = options.title
        if case .text(let text)? = options.message { message = text }
        status = options.status?.rawValue
        switch options.icon {
        case .name(let name)?: icon = name
        case .path(let path)?: iconFile = path
        case nil: break
        }
        if let given = options.duration {
            switch given.toastDuration {
            case .seconds(let value)?: seconds = value
            case .indefinite?: indefinite = true
            case nil: serverTimed = true
            case .automatic?: break
            }
        }
        plainText = options.plainText ? true : nil
        dialect = options.dialect == .toastkit ? nil : options.dialect.rawValue
        func action(_ option: ActionOption) -> Action {
            Action(
                id: option.id, label: option.label, confirmation: option.confirmation,
                replyPlaceholder: option.reply.map { $0.placeholder ?? "" })
        }
        actions = options.actions.isEmpty ? nil : options.actions.map(action)
        tap = options.tap.map(action)
        appName = options.appName
        appIcon = options.appIcon
        urgency = options.urgency.map(AgentRequest.name(of:))
        category = options.category
        hints = options.hints.isEmpty ? nil : options.hints.map { Self.hint($0) }
        transient = options.transient ? true : nil
        replaceID = options.replaceID
        onAction = request.onAction.isEmpty ? nil : request.onAction
        awaitShown = request.awaitShown ? true : nil
        snooze = options.snooze
        dnd = options.doNotDisturb?.rawValue
        sound = options.sound?.text
        switch options.progress {
        case .fraction(let value)?: progress = value
        case .indeterminate?: indeterminateProgress = true
        case nil: break
        }
        workingDirectory = request.workingDirectory
        environment = request.environment
    }

    /// Why a saved request cannot be used.
    package struct Invalid: Error, CustomStringConvertible {
        package var description: String
    }

    /// The request back, every value checked.
    package func request() throws(Invalid) -> AgentRequest {
        var options = SendOptions(title: title)
        options.message = message.map(MessageSource.text)
        if let status {
            guard let value = ToastStatus(rawValue: status) else { throw Invalid(description: "status \"\(status)\"") }
            options.status = value
        }
        if let icon { options.icon = .name(icon) }
        if let iconFile {
            guard !iconFile.isEmpty else { throw Invalid(description: "icon_file \"\"") }
            options.icon = .path(iconFile)
        }
        options.plainText = plainText ?? false
        if let dialect {
            guard let value = CommandDialect(rawValue: dialect) else {
                throw Invalid(description: "dialect \"\(dialect)\"")
            }
            options.dialect = value
        }
        if serverTimed == true {
            options.duration = .serverDefault
        } else if indefinite == true {
            options.duration = .duration(.indefinite)
        } else if let seconds {
            guard seconds.isFinite, seconds >= 0, seconds <= ToastDuration.maximumSeconds else {
                throw Invalid(description: "seconds \(seconds)")
            }
            options.duration = .duration(.seconds(seconds))
        } else {
            // Absent is the default duration, as journals before `server_timed` wrote it.
            options.duration = .duration(.automatic)
        }
        func option(_ action: Action) throws(Invalid) -> ActionOption {
            guard !action.id.isEmpty else { throw Invalid(description: "an action without an id") }
            return ActionOption(
                id: action.id, label: action.label, confirmation: action.confirmation,
                reply: action.replyPlaceholder.map { ToastReplyField(placeholder: $0.isEmpty ? nil : $0) })
        }
        let saved = actions ?? []
        guard saved.count <= 2 else { throw Invalid(description: "\(saved.count) actions") }
        options.actions = try saved.map { (action) throws(Invalid) in try option(action) }
        options.tap = try tap.map { (action) throws(Invalid) in try option(action) }
        options.appName = appName
        options.appIcon = appIcon
        if let urgency {
            guard let value = ["low": ToastUrgency.low, "normal": .normal, "critical": .critical][urgency] else {
                throw Invalid(description: "urgency \"\(urgency)\"")
            }
            options.urgency = value
        }
        options.category = category
        options.hints = try (hints ?? []).map { (hint) throws(Invalid) in
            ToastKitAgent.Hint(name: hint.name, value: try Self.value(of: hint))
        }
        options.transient = transient ?? false
        options.replaceID = replaceID
        if let progress {
            guard progress.isFinite, progress >= 0, progress <= 1 else {
                throw Invalid(description: "progress \(progress)")
            }
            options.progress = .fraction(progress)
        } else if indeterminateProgress == true {
            options.progress = .indeterminate
        }
        if let dnd {
            guard let policy = ToastDoNotDisturbPolicy(rawValue: dnd) else {
                throw Invalid(description: "dnd \"\(dnd)\"")
            }
            options.doNotDisturb = policy
        }
        if let sound {
            guard let value = ToastSound(text: sound) else { throw Invalid(description: "sound \"\(sound)\"") }
            options.sound = value
        }
        if let snooze {
            guard snooze.isFinite, snooze > 0, snooze <= ToastDuration.maximumSeconds else {
                throw Invalid(description: "snooze \(snooze)")
            }
            options.snooze = snooze
        }
        var request = AgentRequest(options: options, onAction: onAction ?? [:])
        // The checks `Present` makes of the same fields (``AgentRequest/init(_:)``): what no agent could have written.
        if let empty = request.onAction.first(where: { $0.value.first?.isEmpty ?? true }) {
            throw Invalid(description: "on_action \"\(empty.key)\" without a program")
        }
        if let name = environment?.keys.first(where: { $0.isEmpty || $0.contains("=") }) {
            throw Invalid(description: "environment variable \"\(name)\"")
        }
        let actionIDs = Set(options.actions.map(\.id) + (options.tap.map { [$0.id] } ?? []))
        if let unknown = request.onAction.keys.sorted().first(where: { !actionIDs.contains($0) }) {
            throw Invalid(description: "on_action \"\(unknown)\" names no action")
        }
        request.awaitShown = awaitShown ?? false
        if let workingDirectory, !workingDirectory.hasPrefix("/") {
            throw Invalid(description: "working_directory \"\(workingDirectory)\"")
        }
        request.workingDirectory = workingDirectory
        request.environment = environment
        return request
    }

    private static func hint(_ hint: ToastKitAgent.Hint) -> Hint {
        switch hint.value {
        case .byte(let value): Hint(name: hint.name, type: "y", value: String(value))
        case .bool(let value): Hint(name: hint.name, type: "b", value: String(value))
        case .int32(let value): Hint(name: hint.name, type: "i", value: String(value))
        case .uint32(let value): Hint(name: hint.name, type: "u", value: String(value))
        case .int64(let value): Hint(name: hint.name, type: "x", value: String(value))
        case .double(let value): Hint(name: hint.name, type: "d", value: String(value))
        case .string(let value): Hint(name: hint.name, type: "s", value: value)
        }
    }

    private static func value(of hint: Hint) throws(Invalid) -> ToastHintValue {
        let value: ToastHintValue? =
            switch hint.type {
            case "y": UInt8(hint.value).map(ToastHintValue.byte)
            case "b": Bool(hint.value).map(ToastHintValue.bool)
            case "i": Int32(hint.value).map(ToastHintValue.int32)
            case "u": UInt32(hint.value).map(ToastHintValue.uint32)
            case "x": Int64(hint.value).map(ToastHintValue.int64)
            case "d": Double(hint.value).map(ToastHintValue.double)
            case "s": .string(hint.value)
            default: nil
            }
        guard let value else { throw Invalid(description: "hint \"\(hint.name)\" (\(hint.type)) \"\(hint.value)\"") }
        return value
    }
}
