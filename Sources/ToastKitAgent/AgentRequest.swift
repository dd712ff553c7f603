// The toast a `send` hands to the agent (`Present`'s `a{sv}` argument): what it holds, its codec, and its checks.
package import DBus
package import ToastKit

/// A toast as `toastkit send` hands it to the agent: the send options with what only the sending process can know
/// resolved — the message text (standard input read), the icon file's absolute path, the built-in labels in the
/// sender's language — plus the commands to run on actions.
package struct AgentRequest: Sendable, Equatable {
    /// The send options (`message` is text, `icon` a theme name or an absolute path).
    package var options: SendOptions
    /// `--on-action ID=COMMAND`: the program and arguments to run when action `ID` is invoked.
    package var onAction: [String: [String]] = [:]
    /// Whether `Present` answers only once the toast is on screen (with its server id), also when it waits behind
    /// the front toast: for `-p`, `--json` and `--wait`. Otherwise a queued toast is answered at once.
    package var awaitShown = false
    /// The sender's working folder, for its `--on-action` commands (captured by `send`; absolute).
    package var workingDirectory: String?
    /// The sender's environment, for its `--on-action` commands (captured by `send`): they run as if the script
    /// had run them itself, never in the environment the agent was started with.
    package var environment: [String: String]?

    /// The keys of the `a{sv}`, and their types.
    package enum Key {
        package static let id = "id"  // s
        package static let title = "title"  // s, required
        package static let message = "message"  // s
        package static let status = "status"  // s: normal success warning error notification
        package static let icon = "icon"  // s: a theme icon name
        package static let iconFile = "icon-file"  // s: a path (absolute, or as given when missing) or a URI
        package static let duration = "duration"  // d seconds, or s "auto" / "indefinite" / "server"
        package static let actions = "actions"  // a(sss): id, label, confirmation ("" for none)
        package static let tap = "tap"  // (sss)
        package static let appName = "app-name"  // s
        package static let appIcon = "app-icon"  // s
        package static let urgency = "urgency"  // s: low normal critical
        package static let category = "category"  // s
        package static let hints = "hints"  // a{sv}: y b i u x d s values
        package static let transient = "transient"  // b
        package static let replaceID = "replace-id"  // u
        package static let onAction = "on-action"  // a{sas}: action id → program and arguments
        package static let awaitShown = "await-shown"  // b
        package static let workingDirectory = "working-directory"  // s: an absolute path
        package static let environment = "environment"  // a{ss}
        package static let plainText = "plain-text"  // b
        package static let dialect = "dialect"  // s: toastkit, notify-send, dunstify
        package static let due = "due"  // d: seconds since 1970 (a scheduled toast)
        package static let snooze = "snooze"  // d: seconds after which the Later action brings the toast back
        package static let progress = "progress"  // d: a fraction from 0 to 1, or s "indeterminate"
        package static let doNotDisturb = "dnd"  // s: hold, drop, show
        package static let sound = "sound"  // s: a sound-theme name, an absolute file path, or "silent"
        package static let soundPlayed = "sound_played"  // b: the notification of replace_id played the sound
        package static let reply = "reply"  // (ss): the id of the action that asks for a text, its placeholder

        package static let all: Set<String> = [
            id, title, message, status, icon, iconFile, duration, actions, tap, appName, appIcon, urgency, category,
            hints, transient, replaceID, onAction, awaitShown, workingDirectory, environment, plainText,
            dialect, due, snooze, progress, doNotDisturb, sound, soundPlayed, reply,
        ]
    }

    /// The `a{sv}` argument of `Present`.
    package var dictionary: DBusValue {
        var entries: [(String, DBusValue)] = [(Key.title, .string(options.title))]
        if let id = options.id { entries.append((Key.id, .string(id))) }
        if case .text(let text)? = options.message { entries.append((Key.message, .string(text))) }
        if let status = options.status { entries.append((Key.status, .string(status.rawValue))) }
        switch options.icon {
        case .name(let name)?: entries.append((Key.icon, .string(name)))
        case .path(let path)?: entries.append((Key.iconFile, .string(path)))
        case nil: break
        }
        switch options.duration {
        case nil: break
        case let given?:
            switch given.toastDuration {
            case .automatic?: break
            case nil: entries.append((Key.duration, .string("server")))
            case .indefinite?: entries.append((Key.duration, .string("indefinite")))
            case .seconds(let seconds)?: entries.append((Key.duration, .double(seconds)))
            }
        }
        if options.plainText { entries.append((Key.plainText, .boolean(true))) }
        if options.dialect != .toastkit { entries.append((Key.dialect, .string(options.dialect.rawValue))) }
        if !options.actions.isEmpty {
            entries.append((Key.actions, .array("(sss)", options.actions.map(Self.encode))))
        }
        if let tap = options.tap { entries.append((Key.tap, Self.encode(tap))) }
        if let reply = options.actions.first(where: { $0.reply != nil }) {
            entries.append(
                (Key.reply, .structure([.string(reply.id), .string(reply.reply?.placeholder ?? "")])))
        }
        if let appName = options.appName { entries.append((Key.appName, .string(appName))) }
        if let appIcon = options.appIcon { entries.append((Key.appIcon, .string(appIcon))) }
        if let urgency = options.urgency { entries.append((Key.urgency, .string(Self.name(of: urgency)))) }
        if let category = options.category { entries.append((Key.category, .string(category))) }
        if !options.hints.isEmpty {
            entries.append((Key.hints, .variantDictionary(options.hints.map { ($0.name, $0.value.dbusValue) })))
        }
        if options.transient { entries.append((Key.transient, .boolean(true))) }
        if let replaceID = options.replaceID { entries.append((Key.replaceID, .uint32(replaceID))) }
        if awaitShown { entries.append((Key.awaitShown, .boolean(true))) }
        if let due = options.due { entries.append((Key.due, .double(due))) }
        if let snooze = options.snooze { entries.append((Key.snooze, .double(snooze))) }
        if let policy = options.doNotDisturb { entries.append((Key.doNotDisturb, .string(policy.rawValue))) }
        if let sound = options.sound { entries.append((Key.sound, .string(sound.text))) }
        if options.soundPlayed { entries.append((Key.soundPlayed, .boolean(true))) }
        switch options.progress {
        case .fraction(let value)?: entries.append((Key.progress, .double(value)))
        case .indeterminate?: entries.append((Key.progress, .string("indeterminate")))
        case nil: break
        }
        if let workingDirectory { entries.append((Key.workingDirectory, .string(workingDirectory))) }
        if let environment {
            entries.append(
                (
                    Key.environment,
                    .dictionary(
                        key: "s", value: "s",
                        environment.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .string($0.value)) }
                    )
                ))
        }
        if !onAction.isEmpty {
            entries.append(
                (
                    Key.onAction,
                    .dictionary(
                        key: "s", value: "as",
                        onAction.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .strings($0.value)) })
                ))
        }
        return .variantDictionary(entries)
    }

    /// The toast the request asks for (its message is text: `send` read it).
    package func message() throws(ToastOptionError) -> ToastMessage {
        var text: String?
        if case .text(let value)? = options.message { text = value }
        return try ToastOptions.message(for: options, text: text)
    }

    /// A request for `options`, with commands for its actions.
    package init(options: SendOptions, onAction: [String: [String]] = [:]) {
        self.options = options
        self.onAction = onAction
    }

    /// Reads `Present`'s argument; every key is checked (a service any local process may call).
    ///
    /// - Throws: ``AgentRequestError`` naming the key and what is wrong with it.
    package init(_ value: DBusValue) throws(AgentRequestError) {
        guard let entries = value.variantDictionaryValue else {
            throw AgentRequestError("the toast must be a{sv}, not \(value.signature)")
        }
        if let unknown = entries.keys.sorted().first(where: { !Key.all.contains($0) }) {
            throw AgentRequestError("unknown key \"\(unknown)\"", unknownKey: true)
        }
        func string(_ key: String) throws(AgentRequestError) -> String? {
            guard let value = entries[key] else { return nil }
            guard let text = value.stringValue, case .string = value else {
                throw AgentRequestError("\(key) must be a string (s), not \(value.signature)")
            }
            return text
        }
        func boolean(_ key: String) throws(AgentRequestError) -> Bool? {
            guard let value = entries[key] else { return nil }
            guard let bool = value.boolValue else {
                throw AgentRequestError("\(key) must be a boolean (b), not \(value.signature)")
            }
            return bool
        }
        guard let title = try string(Key.title) else { throw AgentRequestError("title is missing") }
        var options = SendOptions(title: title)
        options.id = try string(Key.id)
        options.message = try string(Key.message).map(MessageSource.text)
        if let status = try string(Key.status) {
            guard let value = ToastStatus(rawValue: status) else {
                throw AgentRequestError("status \"\(status)\" is not normal, success, warning, error or notification")
            }
            options.status = value
        }
        // An empty icon is no icon (the toast is shown without one), as the client sends it.
        if let name = try string(Key.icon), !name.isEmpty { options.icon = .name(name) }
        if let path = try string(Key.iconFile), !path.isEmpty {
            // Sent as app_icon as it is; the agent reads an icon file only by an absolute path (ToastOptions.icon).
            options.icon = .path(path)
        }
        // Absent is "auto", as it always was (the server's default is "server", said explicitly).
        options.duration = .duration(.automatic)
        if let duration = entries[Key.duration] {
            switch duration {
            case .double(let seconds) where seconds >= 0 && seconds <= ToastDuration.maximumSeconds:
                options.duration = .duration(.seconds(seconds))
            case .string("auto"): options.duration = .duration(.automatic)
            case .string("indefinite"): options.duration = .duration(.indefinite)
            case .string("server"): options.duration = .serverDefault
            default:
                throw AgentRequestError(
                    "duration must be a number of seconds from 0 to \(Int(ToastDuration.maximumSeconds)) (d), "
                        + "\"auto\", \"indefinite\" or \"server\"; not \(duration)")
            }
        }
        if let actions = entries[Key.actions] {
            guard case .array(let signature, let items) = actions, signature.rawValue == "(sss)" else {
                throw AgentRequestError("actions must be a(sss), not \(actions.signature)")
            }
            guard items.count <= 2 else { throw AgentRequestError("actions: at most two, got \(items.count)") }
            options.actions = try items.map(Self.decodeAction)
        }
        if let tap = entries[Key.tap] { options.tap = try Self.decodeAction(tap) }
        if let reply = entries[Key.reply] {
            guard case .structure(let fields) = reply, fields.count == 2, let id = fields[0].stringValue,
                let placeholder = fields[1].stringValue
            else { throw AgentRequestError("reply must be (ss): the action's id, its placeholder") }
            guard let index = options.actions.firstIndex(where: { $0.id == id }) else {
                throw AgentRequestError("reply: no action has the id \"\(id)\"")
            }
            options.actions[index].reply = ToastReplyField(placeholder: placeholder.isEmpty ? nil : placeholder)
        }
        options.appName = try string(Key.appName)
        options.appIcon = try string(Key.appIcon)
        if let urgency = try string(Key.urgency) {
            guard let value = ["low": ToastUrgency.low, "normal": .normal, "critical": .critical][urgency] else {
                throw AgentRequestError("urgency \"\(urgency)\" is not low, normal or critical")
            }
            options.urgency = value
        }
        options.category = try string(Key.category)
        if let hints = entries[Key.hints] {
            guard let dictionary = hints.variantDictionaryValue else {
                throw AgentRequestError("hints must be a{sv}, not \(hints.signature)")
            }
            options.hints = try dictionary.sorted { $0.key < $1.key }.map { (name, value) throws(AgentRequestError) in
                Hint(name: name, value: try Self.hintValue(value, name: name))
            }
        }
        if let value = try boolean(Key.transient) { options.transient = value }
        if let dialect = try string(Key.dialect) {
            guard let value = CommandDialect(rawValue: dialect) else {
                throw AgentRequestError("dialect \"\(dialect)\" is not toastkit, notify-send or dunstify")
            }
            options.dialect = value
        }
        if let value = try boolean(Key.plainText) { options.plainText = value }
        if let value = try boolean(Key.soundPlayed) { options.soundPlayed = value }
        if let value = try boolean(Key.awaitShown) { self.awaitShown = value }
        if let due = entries[Key.due] {
            // After 2020 and before the year 10000, in seconds since 1970.
            guard case .double(let seconds) = due, seconds.isFinite, seconds > 1_577_836_800, seconds < 253_402_300_800
            else { throw AgentRequestError("due must be a time in seconds since 1970 (d), not \(due)") }
            options.due = seconds
        }
        if let policy = entries[Key.doNotDisturb] {
            guard case .string(let name) = policy, let value = ToastDoNotDisturbPolicy(rawValue: name) else {
                throw AgentRequestError("dnd must be \"hold\", \"drop\" or \"show\" (s), not \(policy)")
            }
            options.doNotDisturb = value
        }
        if let sound = entries[Key.sound] {
            guard case .string(let text) = sound, let value = ToastSound(text: text) else {
                throw AgentRequestError(
                    "sound must be a sound-theme name, an absolute file path or \"silent\" (s), not \(sound)")
            }
            options.sound = value
        }
        if let progress = entries[Key.progress] {
            switch progress {
            case .double(let value) where value.isFinite && value >= 0 && value <= 1:
                options.progress = .fraction(value)
            case .string("indeterminate"): options.progress = .indeterminate
            default:
                throw AgentRequestError(
                    "progress must be a fraction from 0 to 1 (d) or \"indeterminate\", not \(progress)")
            }
        }
        if let snooze = entries[Key.snooze] {
            guard case .double(let seconds) = snooze, seconds.isFinite, seconds > 0,
                seconds <= ToastDuration.maximumSeconds
            else { throw AgentRequestError("snooze must be a number of seconds above 0 (d), not \(snooze)") }
            guard options.actions.contains(where: { $0.id == "later" }) || options.tap?.id == "later" else {
                throw AgentRequestError("snooze: the toast has no Later action")
            }
            options.snooze = seconds
        }
        if let replaceID = entries[Key.replaceID] {
            guard let value = replaceID.uint32Value else {
                throw AgentRequestError("replace-id must be u, not \(replaceID.signature)")
            }
            options.replaceID = value
        }
        self.options = options
        if let folder = try string(Key.workingDirectory) {
            guard folder.hasPrefix("/") else {
                throw AgentRequestError("working-directory must be an absolute path: \(folder)")
            }
            workingDirectory = folder
        }
        if let variables = entries[Key.environment] {
            guard case .dictionary(let key, let value, let pairs) = variables, key.rawValue == "s",
                value.rawValue == "s"
            else { throw AgentRequestError("environment must be a{ss}, not \(variables.signature)") }
            var environment: [String: String] = [:]
            for pair in pairs {
                guard let name = pair.key.stringValue, let text = pair.value.stringValue, !name.isEmpty,
                    !name.contains("=")
                else { throw AgentRequestError("environment: a variable's name is empty or has \"=\"") }
                environment[name] = text
            }
            self.environment = environment
        }
        if let commands = entries[Key.onAction] {
            guard case .dictionary(let key, let value, let pairs) = commands, key.rawValue == "s",
                value.rawValue == "as"
            else { throw AgentRequestError("on-action must be a{sas}, not \(commands.signature)") }
            for pair in pairs {
                guard let id = pair.key.stringValue, let argv = pair.value.stringsValue, !argv.isEmpty,
                    !argv[0].isEmpty
                else { throw AgentRequestError("on-action: each action needs a program to run") }
                let actionIDs = options.actions.map(\.id) + (options.tap.map { [$0.id] } ?? [])
                guard actionIDs.contains(id) else {
                    throw AgentRequestError("on-action \"\(id)\": the toast has no action with this id")
                }
                onAction[id] = argv
            }
        }
    }

    private static func encode(_ action: ActionOption) -> DBusValue {
        .structure([.string(action.id), .string(action.label ?? ""), .string(action.confirmation ?? "")])
    }

    private static func decodeAction(_ value: DBusValue) throws(AgentRequestError) -> ActionOption {
        guard let fields = value.structValue, fields.count == 3, let id = fields[0].stringValue,
            let label = fields[1].stringValue, let confirmation = fields[2].stringValue
        else { throw AgentRequestError("an action must be (sss): id, label, confirmation; not \(value.signature)") }
        guard !id.isEmpty else { throw AgentRequestError("an action's id is empty") }
        return ActionOption(
            id: id, label: label.isEmpty ? nil : label, confirmation: confirmation.isEmpty ? nil : confirmation)
    }

    private static func hintValue(_ value: DBusValue, name: String) throws(AgentRequestError) -> ToastHintValue {
        guard let hint = ToastHintValue(dbusValue: value) else {
            throw AgentRequestError("hint \"\(name)\": a y, b, i, u, d or s value, not \(value.signature)")
        }
        return hint
    }

    package static func name(of urgency: ToastUrgency) -> String {
        switch urgency {
        case .low: "low"
        case .normal: "normal"
        case .critical: "critical"
        }
    }
}

/// What is wrong with a toast sent to the agent, in words.
package struct AgentRequestError: Error, Sendable, CustomStringConvertible {
    package var description: String
    /// The request has a key this version does not know (``AgentInterface/ErrorName/unknownKey``).
    package var unknownKey = false
    package init(_ description: String, unknownKey: Bool = false) {
        self.description = description
        self.unknownKey = unknownKey
    }
}

extension AgentRequest {
    /// What the agent's rules need to place the toast in a lane (``AgentLane/of(_:id:)``).
    package var traits: AgentToastTraits {
        var desktopEntry: String?
        if let hint = options.hints.first(where: { $0.name == "desktop-entry" }), case .string(let name) = hint.value {
            desktopEntry = name
        }
        return AgentToastTraits(
            // A toast the server times has no timer to hold the lane with: it is shown at once, as indefinite ones.
            indefinite: ToastOptions.duration(for: options).map { $0 == .indefinite } ?? true,
            question: !options.actions.isEmpty || options.tap != nil, waited: awaitShown,
            replacesServerID: options.replaceID != nil, desktopEntry: desktopEntry, appName: options.appName)
    }
}
