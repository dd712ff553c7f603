import Glibc
import ToastKit
import ToastKitAgent

/// Turns a command line into an ``Invocation``. Pure: no I/O, no environment; every error is a
/// ``CommandFailure`` with its exit code (64 for the shape of the command line, 65 for a bad value).
enum CommandLineParser {
    /// Parses arguments given as strings (without the program name).
    static func parse(_ arguments: [String]) throws(CommandFailure) -> Invocation {
        try parse(arguments: arguments.map { Argument($0) })
    }

    /// Parses arguments decoded from raw bytes (without the program name), as the program called `program` (its
    /// last path component): `notify-send` and `dunstify` take those tools' command lines.
    static func parse(arguments: [Argument], program: String) throws(CommandFailure) -> Invocation {
        let dialect = CommandDialect(program: program)
        if dialect != .toastkit { return try parseTool(arguments[...], dialect: dialect) }
        return try parse(arguments: arguments)
    }

    /// The command line of the tool toastkit stands in for (`notify-send …`, `toastkit dunstify …`).
    static func parseTool(_ arguments: ArraySlice<Argument>, dialect: CommandDialect) throws(CommandFailure)
        -> Invocation
    {
        let beforeDashes = arguments.prefix { $0.text != "--" }
        if beforeDashes.contains(where: { ["--help", "-?", "--help-all"].contains($0.text) }) {
            return .toolCommand(.help, dialect)
        }
        if beforeDashes.contains(where: { $0.text == "--version" || (dialect == .notifySend && $0.text == "-v") }) {
            return .toolCommand(.version, dialect)
        }
        if dialect == .dunstify {
            let split = try SplitArguments(
                arguments, specs: Dialects.dunstify + Dialects.dunstifyCommands, command: "dunstify")
            if split.has("capabilities") { return .toolCommand(.capabilities, dialect) }
            if split.has("serverinfo") { return .toolCommand(.serverInfo, dialect) }
            if let close = split.options.last(where: { $0.spec.long == "close" }) {
                let id = try Dialects.gInt(try close.text(), flag: "-C")
                // dunstify reads it as unsigned: -1 closes 4294967295; 0 closes nothing.
                if id != 0 { return .toolCommand(.close(UInt32(bitPattern: id)), dialect) }
            }
        }
        return .send(try parseSend(arguments, dialect: dialect))
    }

    /// Parses arguments decoded from raw bytes (without the program name).
    static func parse(arguments: [Argument]) throws(CommandFailure) -> Invocation {
        guard let first = arguments.first else {
            throw .usage("missing command (\(commandList)); see toastkit --help")
        }
        let rest = arguments.dropFirst()
        switch first.text {
        case "--help", "-?", "-h":
            return .help(nil)
        case "--version", "-v", "-V":
            return .version
        case "help":
            guard let topic = rest.first else { return .help(nil) }
            guard let command = Command(rawValue: topic.text) else {
                throw .usage("help: unknown command \"\(topic.text)\" (\(commandList))")
            }
            return .help(command)
        default:
            break
        }
        guard let command = Command(rawValue: first.text) else {
            if first.text.hasPrefix("-") {
                throw .usage("unknown option \(first.text); see toastkit --help")
            }
            let name = try first.text(as: "the command")
            throw .usage("unknown command \"\(name)\" (\(commandList)); see toastkit --help")
        }
        if let dialect = CommandDialect(rawValue: command.rawValue), dialect != .toastkit {
            return try parseTool(rest, dialect: dialect)
        }
        if command == .run {
            // Only run's own options may ask for help: `toastkit run make --help` is make's.
            let own = rest.prefix { $0.text != "--" && ($0.text.hasPrefix("-") || $0.text == "-") }
            if own.contains(where: { $0.text == "--help" || $0.text == "-?" || $0.text == "-h" }) {
                return .help(command)
            }
            return .run(try parseRun(rest))
        }
        let beforeDashes = rest.prefix { $0.text != "--" }
        if beforeDashes.contains(where: { $0.text == "--help" || $0.text == "-?" }) {
            return .help(command)
        }
        if command != .send, command != .progress, beforeDashes.contains(where: { $0.text == "-h" }) {
            return .help(command)
        }
        switch command {
        case .send: return .send(try parseSend(rest))
        case .progress: return .progress(try parseProgress(rest))
        case .close: return .close(try parseClose(rest))
        case .later:
            let split = try SplitArguments(rest, specs: Specs.later, command: "later")
            try noPositionals(split, command: "later")
            var application = CommandLineLater.application
            if let option = split.options.last(where: { $0.spec.long == "app" }) {
                application = try option.text()
                guard !application.isEmpty else { throw .usage("later: --app needs an application name") }
            }
            return .later(show: split.has("show"), json: split.has("json"), application: application)
        case .capabilities:
            return .capabilities(json: try jsonOnly(rest, command: "capabilities"))
        case .serverInfo:
            return .serverInfo(json: try jsonOnly(rest, command: "server-info"))
        case .listen:
            return .listen(json: try jsonOnly(rest, command: "listen"))
        case .list:
            return .list(json: try jsonOnly(rest, command: "list"))
        case .doctor:
            return .doctor(json: try jsonOnly(rest, command: "doctor"))
        case .run:
            return .run(try parseRun(rest))
        case .wait:
            let split = try SplitArguments(rest, specs: Specs.wait, command: "wait")
            try noPositionals(split, command: "wait")
            guard let option = split.options.last(where: { $0.spec.long == "id" }) else {
                throw .usage("wait: missing --id ID; see toastkit wait --help")
            }
            let id = try option.text()
            guard !id.isEmpty else { throw .data("--id: the id is empty") }
            return .wait(id: id, json: split.has("json"))
        case .agent:
            return .agent(try parseAgent(rest))
        case .notifySend, .dunstify:
            preconditionFailure("parsed above")
        }
    }

    // MARK: - agent

    private static func parseAgent(_ arguments: ArraySlice<Argument>) throws(CommandFailure) -> AgentOptions {
        let split = try SplitArguments(arguments, specs: Specs.agent, command: "agent")
        try noPositionals(split, command: "agent")
        var options = AgentOptions()
        for option in split.options {
            let value = try option.text()
            switch option.spec.long {
            case "idle-timeout": options.idleTimeout = try AgentOptions.idleTimeout(value, source: "--idle-timeout")
            case "max-visible": options.maxVisible = try AgentOptions.maxVisible(value, source: "--max-visible")
            case "keeper": options.keeper = value
            case "if-scheduled": options.ifScheduled = true
            default: options.replace = true
            }
        }
        return options
    }

    /// The commands an error names (`notify-send` and `dunstify` are the other tools' command lines, not listed).
    static var commandList: String {
        Command.allCases.filter { $0 != .notifySend && $0 != .dunstify }.map(\.rawValue).joined(separator: ", ")
    }

    /// Takes `--user NAME|UID|all` (or `--user=…`) from among the options before the command, and returns it with
    /// the arguments without it (the other global options stay, for the command run as that user).
    static func userOption(_ arguments: [[UInt8]]) throws(CommandFailure) -> (user: String?, rest: [[UInt8]]) {
        var user: String?
        var rest: [[UInt8]] = []
        var index = 0
        while index < arguments.count {
            let text = String(decoding: arguments[index], as: UTF8.self)
            if text == "--user" || text.hasPrefix("--user=") {
                let value: String
                if text == "--user" {
                    guard index + 1 < arguments.count else {
                        throw .usage("--user: missing value (a user name, a uid, or all)")
                    }
                    value = String(decoding: arguments[index + 1], as: UTF8.self)
                    index += 2
                } else {
                    value = String(text.dropFirst("--user=".count))
                    index += 1
                }
                guard !value.isEmpty else { throw .usage("--user: missing value (a user name, a uid, or all)") }
                user = value
            } else if text == "--backend" {
                rest += arguments[index..<min(index + 2, arguments.count)]
                index += 2
            } else if text.hasPrefix("--backend=") {
                rest.append(arguments[index])
                index += 1
            } else {
                break
            }
        }
        return (user, rest + arguments[min(index, arguments.count)...])
    }

    /// Takes the options that come before the command (`--backend auto|notifications|portal`, or
    /// `--backend=…`) off the front of `arguments`, and returns them with the rest, which ``parse(arguments:)``
    /// parses.
    static func globalOptions(_ arguments: [Argument]) throws(CommandFailure) -> (NotificationBackend, [Argument]) {
        var backend = NotificationBackend.automatic
        var rest = arguments[...]
        while let first = rest.first, first.text == "--backend" || first.text.hasPrefix("--backend=") {
            rest = rest.dropFirst()
            let value: String
            if first.text == "--backend" {
                guard let next = rest.first else {
                    throw .usage("--backend: missing value (auto, notifications or portal)")
                }
                value = try next.text(as: "--backend")
                rest = rest.dropFirst()
            } else {
                value = String(first.text.dropFirst("--backend=".count))
            }
            guard !value.isEmpty else { throw .usage("--backend: missing value (auto, notifications or portal)") }
            guard let chosen = NotificationBackend(rawValue: value) else {
                throw .data("--backend \(value): expected auto, notifications or portal")
            }
            backend = chosen
        }
        return (backend, Array(rest))
    }

    private static func jsonOnly(_ arguments: ArraySlice<Argument>, command: String) throws(CommandFailure) -> Bool {
        let split = try SplitArguments(arguments, specs: Specs.jsonOnly, command: command)
        try noPositionals(split, command: command)
        return split.has("json")
    }

    private static func noPositionals(_ split: SplitArguments, command: String) throws(CommandFailure) {
        if let extra = split.positionals.first {
            throw .usage("\(command): unexpected argument \"\(extra.text)\"; see toastkit \(command) --help")
        }
    }

    // MARK: - run

    /// `run [options] [--] CMD…` or `run [options] --pid PID`: the options end at `--` or at the first word that is
    /// not one (so `toastkit run make -j4` passes `-j4` to make).
    private static func parseRun(_ arguments: ArraySlice<Argument>) throws(CommandFailure) -> RunOptions {
        var end = arguments.startIndex
        var commandStart = arguments.endIndex
        while end < arguments.endIndex {
            let text = arguments[end].text
            if text == "--" {
                commandStart = end + 1
                break
            }
            guard text.hasPrefix("-"), text != "-" else {
                commandStart = end
                break
            }
            let takesValue = Specs.run.first { "--\($0.long)" == text || $0.short.map { "-\($0)" } == text }?.takesValue
            end += takesValue == true ? 2 : 1
        }
        let split = try SplitArguments(
            arguments[arguments.startIndex..<min(end, arguments.endIndex)], specs: Specs.run, command: "run")
        var options = RunOptions()
        for word in arguments[min(commandStart, arguments.endIndex)...] {
            options.command.append(Array(try word.text(as: "the command").utf8))
        }
        for option in split.options {
            let flag = option.spec.display
            let value = try option.text()
            switch option.spec.long {
            case "tail":
                guard let lines = Int(value), (0...20).contains(lines) else {
                    throw .data("\(flag) \(value): expected a number of lines from 0 to 20")
                }
                options.tail = lines
            case "min-seconds":
                guard let seconds = DurationText.seconds(value) else {
                    throw .data("\(flag) \(value): expected seconds (30) or a duration (90s, 5m, 1h)")
                }
                options.minimumSeconds = seconds
            case "pid":
                guard let pid = Int32(value), pid > 0 else { throw .data("\(flag) \(value): expected a process id") }
                options.pid = pid
            case "app-name": options.appName = value
            case "duration": options.duration = try duration(value, flag: flag)
            case "lang":
                // An empty language (`--lang "$CODE"` with CODE unset) is the locale's, as without --lang: a label's
                // language never costs the command its run or its toast.
                if value.isEmpty { continue }
                guard ToastLabels(languageCode: value) != nil else {
                    throw .data("\(flag) \(value): no built-in labels in that language")
                }
                options.language = value
            default: break
            }
        }
        if options.pid != nil, !options.command.isEmpty {
            throw .usage("run: give a command or --pid PID, not both")
        }
        if options.pid == nil, options.command.isEmpty {
            throw .usage("run: missing the command to run (toastkit run [options] -- CMD…); see toastkit run --help")
        }
        return options
    }

    // MARK: - close

    private static func parseClose(_ arguments: ArraySlice<Argument>) throws(CommandFailure) -> CloseTarget {
        let split = try SplitArguments(arguments, specs: Specs.close, command: "close")
        try noPositionals(split, command: "close")
        var target: CloseTarget?
        for option in split.options {
            guard target == nil else {
                throw .usage("close: give one of --id ID or --server-id N, once")
            }
            let value = try option.text()
            if option.spec.long == "id" {
                guard !value.isEmpty else { throw .data("--id: the id is empty") }
                target = .id(value)
            } else {
                guard let number = UInt32(value), number > 0 else {
                    throw .data("--server-id \(value): expected a notification number from 1 to \(UInt32.max)")
                }
                target = .serverID(number)
            }
        }
        guard let target else { throw .usage("close: missing --id ID or --server-id N; see toastkit close --help") }
        return target
    }

    // MARK: - send

    /// Parses `send`'s command line in `dialect`: toastkit's (notify-send's plus toastkit's options), or that of
    /// the tool toastkit stands in for (``Dialects``).
    /// The folder this process runs in (`/` when it cannot be read).
    static var workingDirectory: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A percentage from 0 to 100 (`40`, `12.5%`), or `indeterminate` (`-`): what `--progress` and the lines of
    /// `toastkit progress` take; nil for anything else.
    static func progress(_ value: String) -> ToastProgress? {
        if value == "indeterminate" || value == "-" { return .indeterminate }
        let number = value.hasSuffix("%") ? String(value.dropLast()) : value
        guard let percent = Double(number), percent.isFinite, (0...100).contains(percent) else { return nil }
        return .fraction(percent / 100)
    }

    /// `toastkit progress`: `send`'s options, without the ones that wait for the toast's end or give the progress.
    static func parseProgress(_ arguments: ArraySlice<Argument>) throws(CommandFailure) -> SendOptions {
        let options = try parseSend(arguments)
        guard options.progress == nil else {
            throw .usage("progress: the progress comes from standard input, one line each (\"40\", \"40 Copying\")")
        }
        guard !options.waits else {
            throw .usage(
                "progress: --wait, and actions without --on-action, wait for the toast's end: give --on-action, or run "
                    + "toastkit wait --id ID after progress")
        }
        guard options.due == nil else { throw .usage("progress: --in and --at cannot be used: it shows at once") }
        guard options.message != .standardInput else {
            throw .usage("progress: standard input gives the steps; the message comes as an argument or with each step")
        }
        return options
    }

    static func parseSend(_ arguments: ArraySlice<Argument>, dialect: CommandDialect = .toastkit)
        throws(CommandFailure) -> SendOptions
    {
        let command = dialect == .toastkit ? "send" : dialect.programName
        let split = try SplitArguments(arguments, specs: Dialects.specs(for: dialect), command: command)
        guard let titleArgument = split.positionals.first else {
            if dialect == .dunstify { throw .usage("I need at least a summary") }
            if dialect == .notifySend { throw .usage("No summary specified.") }
            throw .usage("send: missing TITLE; see toastkit send --help")
        }
        guard split.positionals.count <= 2 || dialect == .dunstify else {
            let extra = split.positionals[2].text
            if dialect != .toastkit { throw .usage("Invalid number of options.") }
            throw .usage(
                "send: unexpected argument \"\(extra)\" (TITLE and MESSAGE are already given; quote text with spaces)")
        }
        if dialect == .toastkit, titleArgument.text == "-" {
            throw .usage("send: TITLE cannot be read from standard input; use - for MESSAGE")
        }
        var options = SendOptions(title: try titleArgument.text(as: "TITLE"))
        options.dialect = dialect
        if dialect == .notifySend, options.title.isEmpty { throw .usage("No summary specified.") }
        if split.positionals.count >= 2 {
            let message = split.positionals[1]
            if dialect == .toastkit, message.text == "-" {
                options.message = .standardInput
            } else {
                // As notify-send: the body's backslash escapes (\n, \t, \\, octal) are applied.
                let text = try message.text(as: "MESSAGE")
                options.message = .text(Dialects.compressEscapes(text))
            }
        }
        var confirmations: [(id: String, text: String, raw: String)] = []
        var replyPlaceholder: String?
        var commands: [(id: String, command: String, raw: String)] = []
        var shell = false
        var durationSeen = false
        var expireSeen = false
        var actionCount = 0
        for option in split.options {
            let flag = option.spec.display
            switch option.spec.meaning {
            case "status":
                let value = try option.text()
                if value.isEmpty {
                    // `-s "$STATUS"` with STATUS unset: no status (its icon and urgency), as without -s, and said so.
                    options.status = nil
                    options.warnings.append("\(flag): the status is empty; the toast is shown without one")
                    continue
                }
                guard let status = ToastStatus(rawValue: value) else {
                    let names = ToastStatus.allCases.map(\.rawValue).joined(separator: ", ")
                    throw .data("\(flag) \(value): unknown status (use \(names))")
                }
                options.status = status
            case "icon":
                let value = try option.text()
                if value.isEmpty {
                    // No icon, as notify-send and dunstify send it (app_icon ""): a cosmetic problem never costs the
                    // toast. `toastkit send` says so; the tools say nothing.
                    if dialect == .toastkit {
                        options.warnings.append("\(flag): the icon is empty; the toast is shown without one")
                    }
                    options.icon = nil
                } else {
                    options.icon = iconOption(value)
                }
            case "id":
                let value = try option.text()
                guard !value.isEmpty else { throw .data("\(flag): the id is empty") }
                options.id = value
            case "duration":
                durationSeen = true
                options.duration = .duration(try duration(try option.text(), flag: flag))
            case "expire-time":
                expireSeen = true
                let value = try option.text()
                if dialect != .toastkit {
                    // GOption's integers: C's strtol in base 0 (0x10 is 16, 010 is 8), any sign.
                    let milliseconds = try Dialects.gInt(value, flag: flag)
                    options.duration = .expireTime(max(milliseconds, -1))
                    continue
                }
                guard let milliseconds = Int32(value.trimmingSpaces), milliseconds >= -1 else {
                    throw .data(
                        "\(flag) \(value): expected milliseconds (-1 for the default, 0 to stay until closed)")
                }
                options.duration = .expireTime(milliseconds)
            case "action":
                actionCount += 1
                let value = try option.text()
                guard let action = try Dialects.action(value, flag: flag, index: actionCount - 1, dialect: dialect)
                else {
                    // dunstify waits even when its only action was malformed (and skipped), and says so.
                    if dialect == .dunstify {
                        options.wait = true
                        options.warnings.append("Malformed action. Expected \"action,label\", got \"\(value)\"")
                    }
                    continue
                }
                if action.id == "default", dialect != .dunstify || action.label?.isEmpty == false {
                    if dialect != .toastkit, options.tap != nil {
                        options.warnings.append("\(flag) \(value): left out (the click has one action)")
                        continue
                    }
                    guard options.tap == nil else {
                        throw .usage("\(flag): more than one action for clicking the toast (\"default\", --tap)")
                    }
                    options.tap = action
                    continue
                }
                if dialect != .toastkit,
                    options.actions.contains(where: { $0.id == action.id }) || options.actions.count >= 2
                {
                    // The tools send every action; a toast has two buttons (and the click). The script still runs.
                    options.warnings.append(
                        "\(flag) \(value): left out (a toast has at most two buttons, each with its own id)")
                    continue
                }
                guard options.actions.count < 2 else {
                    throw .usage(
                        "\(flag): at most two actions (the first is leading, the second trailing); "
                            + "use --tap for clicking the toast")
                }
                options.actions.append(action)
            case "tap":
                let value = try option.text()
                let (id, label) = splitPair(value)
                guard !id.isEmpty else { throw .data("\(flag) \(value): the action id is empty") }
                if let label, label.isEmpty { throw .data("\(flag) \(value): the label is empty") }
                options.tap = ActionOption(id: id, label: label)
            case "reply":
                // --reply LABEL (id "reply") or --reply ID=LABEL: a button of its own, counted with -A.
                let value = try option.text()
                let (first, second) = splitPair(value)
                let (id, label) = second.map { (first, $0) } ?? ("reply", first)
                guard !id.isEmpty else { throw .data("\(flag) \(value): the action id is empty") }
                guard !label.isEmpty else { throw .data("\(flag) \(value): the label is empty") }
                guard !["default", "later", "dismiss", "inline-reply"].contains(id) else {
                    throw .usage("\(flag) \(value): \"\(id)\" is reserved; give the reply another id")
                }
                guard !options.actions.contains(where: { $0.reply != nil }) else {
                    throw .usage("\(flag): one reply action per toast")
                }
                guard options.actions.count < 2 else {
                    throw .usage("\(flag): a toast has at most two buttons (-A/--action and --reply together)")
                }
                options.actions.append(ActionOption(id: id, label: label, reply: ToastReplyField()))
            case "reply-placeholder":
                replyPlaceholder = try option.text()
            case "confirm":
                let value = try option.text()
                let (id, text) = splitPair(value)
                guard let text, !id.isEmpty, !text.isEmpty else {
                    throw .data("\(flag) \(value): expected ID=TEXT")
                }
                confirmations.append((id, text, value))
            case "wait": options.wait = true
            case "json": options.json = true
            case "app-name":
                let value = try option.text()
                if dialect == .dunstify, value.isEmpty { throw .usage("Provided appname was empty") }
                options.appName = value
            case "app-icon": options.appIcon = try option.text()
            case "urgency":
                let value = try option.text()
                guard let urgency = Dialects.urgency(value, dialect: dialect) else {
                    if dialect == .dunstify {
                        options.warnings.append("Unknown urgency: \(value); assuming normal urgency")
                        options.urgency = .normal
                        continue
                    }
                    throw .data("\(flag) \(value): unknown urgency (use low, normal or critical)")
                }
                options.urgency = urgency
            case "category":
                let value = try option.text()
                options.category = value.isEmpty && dialect != .toastkit ? nil : value
            case "hint":
                let hint: Hint?
                switch dialect {
                case .toastkit:
                    let text = try option.text()
                    hint = try HintParser.parseForSend(text)
                    if let warning = HintParser.readAsLibnotify(text) { options.warnings.append(warning) }
                case .notifySend: hint = try HintParser.parseAsLibnotify(try option.text())
                case .dunstify:
                    // dunstify drops a hint it cannot read, with a warning, and shows the notification.
                    let text = try option.text()
                    do throws(CommandFailure) {
                        hint = try HintParser.parseAsDunstify(text)
                    } catch {
                        options.warnings.append(error.message)
                        continue
                    }
                }
                guard let hint else { continue }
                options.hints.removeAll { $0.name == hint.name }
                options.hints.append(hint)
            case "plain": options.plainText = true
            case "in":
                let value = try option.text()
                guard let seconds = DurationText.seconds(value), seconds <= ToastDuration.maximumSeconds else {
                    throw .data("\(flag) \(value): expected a duration (90s, 10m, 1h30m) or seconds")
                }
                guard options.due == nil else { throw .usage("--in and --at cannot be used together") }
                options.due = AgentStore.now() + seconds
            case "at":
                let value = try option.text()
                let now = AgentStore.now()
                guard let due = TimeText.seconds(value, now: now) else {
                    throw .data("\(flag) \(value): expected a time (17:00, 2026-12-24 09:00, 2026-12-24T09:00+01:00)")
                }
                guard due > now else { throw .data("\(flag) \(value): that time has passed") }
                guard options.due == nil else { throw .usage("--in and --at cannot be used together") }
                options.due = due
            case "progress":
                let value = try option.text()
                guard let progress = Self.progress(value) else {
                    throw .data("\(flag) \(value): expected a percentage from 0 to 100, or indeterminate")
                }
                options.progress = progress
            case "sound":
                let value = try option.text()
                if value.isEmpty {
                    // `--sound "$SOUND"` with SOUND unset: no sound of toastkit's, as without --sound, and said so.
                    options.sound = nil
                    options.warnings.append("\(flag): the sound is empty; the toast is shown without one")
                    continue
                }
                // A relative file is made absolute: the agent or the server plays it from another folder.
                let text = value.contains("/") && !value.hasPrefix("/") ? Self.workingDirectory + "/" + value : value
                guard let sound = ToastSound(text: text) else {
                    throw .usage("\(flag): expected a sound name (message-new-instant), a file, default or silent")
                }
                options.sound = sound
            case "dnd":
                let value = try option.text()
                guard let policy = ToastDoNotDisturbPolicy(rawValue: value) else {
                    throw .usage("\(flag) \(value): expected hold, drop or show")
                }
                options.doNotDisturb = policy
            case "terminal": options.terminal = options.terminal ?? "auto"
            case "terminal-code":
                let value = try option.text()
                guard TerminalDelivery.TerminalCode(rawValue: value) != nil else {
                    throw .usage("\(flag) \(value): expected 99, 777, 9 or plain")
                }
                options.terminal = value
            case "lang":
                let value = try option.text()
                if value.isEmpty {
                    // The labels' language is cosmetic: the locale's, as for a language without labels.
                    options.language = nil
                    options.warnings.append("\(flag): the language is empty; the locale's labels are used")
                } else if ToastLabels(languageCode: value) == nil {
                    let known = ToastLanguage.allCases.map(\.rawValue).joined(separator: ", ")
                    options.warnings.append(
                        "--lang \(value): no built-in labels in that language (there are \(known)); the locale's are used"
                    )
                } else {
                    options.language = value
                }
            case "default":
                let value = try option.text()
                guard !value.isEmpty else { throw .data("\(flag): the answer is empty") }
                options.defaultAnswer = value
            case "raw-icon":
                let value = try option.text()
                guard !value.isEmpty else { throw .data("\(flag): the icon is empty") }
                options.rawIcon = value
            case "transient": options.transient = true
            case "on-action":
                let value = try option.text()
                let (id, command) = splitPair(value)
                guard let command, !id.isEmpty, !command.isEmpty else {
                    throw .data("\(flag) \(value): expected ID=COMMAND")
                }
                guard !commands.contains(where: { $0.id == id }) else {
                    throw .usage("\(flag): more than one command for action \"\(id)\"")
                }
                commands.append((id, command, value))
            case "shell": shell = true
            case "no-agent": options.noAgent = true
            case "print-id": options.printID = true
            case "replace-id":
                let value = try option.text()
                if dialect != .toastkit {
                    let number = try Dialects.gInt(value, flag: flag)
                    // notify-send keeps a negative id out (a new notification); dunstify sends it as unsigned.
                    let id = dialect == .dunstify ? UInt32(bitPattern: number) : UInt32(max(number, 0))
                    options.replaceID = id == 0 ? nil : id
                    continue
                }
                guard let number = UInt32(value.trimmingSpaces) else {
                    throw .data("\(flag) \(value): expected a notification number (0 for none)")
                }
                options.replaceID = number == 0 ? nil : number
            default:
                throw CommandFailure(.software, "unhandled option \(flag)")
            }
        }
        if let replyPlaceholder {
            guard let index = options.actions.firstIndex(where: { $0.reply != nil }) else {
                throw .usage("--reply-placeholder: there is no --reply")
            }
            options.actions[index].reply?.placeholder = replyPlaceholder
        }
        if durationSeen && expireSeen {
            throw .usage("-t/--expire-time and -d/--duration cannot be used together")
        }
        var ids: Set<String> = []
        for action in options.actions + (options.tap.map { [$0] } ?? []) {
            guard ids.insert(action.id).inserted else {
                throw .data("-A/--action: more than one action has the id \"\(action.id)\"")
            }
        }
        for confirmation in confirmations {
            if options.tap?.id == confirmation.id {
                options.tap?.confirmation = confirmation.text
            } else if let index = options.actions.firstIndex(where: { $0.id == confirmation.id }) {
                options.actions[index].confirmation = confirmation.text
            } else {
                throw .usage(
                    "--confirm \(confirmation.raw): no -A/--action or --tap has the id \"\(confirmation.id)\"")
            }
        }
        if let answer = options.defaultAnswer, !ids.contains(answer) {
            throw .usage("--default \(answer): no -A/--action or --tap has the id \"\(answer)\"")
        }
        for command in commands {
            guard ids.contains(command.id) else {
                throw .usage("--on-action \(command.raw): no -A/--action or --tap has the id \"\(command.id)\"")
            }
            options.onAction[command.id] = try ActionCommand.argv(command.command, shell: shell)
        }
        if shell && commands.isEmpty { throw .usage("--shell applies to --on-action commands; none is given") }
        // `-A later=10m` (toastkit's own command line): the Later button brings the toast back by itself.
        if dialect == .toastkit, let index = options.actions.firstIndex(where: { $0.id == "later" }),
            let label = options.actions[index].label, let seconds = DurationText.seconds(label), seconds > 0
        {
            guard seconds <= ToastDuration.maximumSeconds else { throw .data("-A later=\(label): too long") }
            options.snooze = seconds
            options.actions[index].label = nil
        }
        if options.due != nil || options.snooze != nil {
            if options.noAgent {
                throw .usage(
                    "\(options.due != nil ? "--in/--at" : "-A later=DURATION") needs the toast agent (it shows the toast "
                        + "after send has exited); drop --no-agent")
            }
        }
        if options.due != nil {
            let asked = [
                options.wait ? "--wait" : nil, options.printID ? "-p/--print-id" : nil,
                options.onAction.isEmpty && commands.isEmpty && (!options.actions.isEmpty || options.tap != nil)
                    ? "-A/--tap without --on-action" : nil,
            ].compactMap { $0 }
            if let first = asked.first {
                throw .usage(
                    "\(first) cannot be used with --in/--at: send does not wait until the toast is shown (its "
                        + "actions need --on-action; `toastkit wait --id` once it is)")
            }
        }
        if options.terminal != nil {
            let asked = [
                options.wait ? "--wait" : nil, options.actions.isEmpty ? nil : "-A/--action",
                options.tap == nil ? nil : "--tap", commands.isEmpty ? nil : "--on-action",
            ].compactMap { $0 }
            if let first = asked.first {
                throw .usage("\(first) cannot be used with --terminal: the terminal reports nothing back")
            }
        }
        if options.noAgent && !commands.isEmpty {
            throw .usage("--on-action needs the toast agent (its commands run after send exits); drop --no-agent")
        }
        return options
    }

    static func splitPair(_ value: String) -> (String, String?) {
        guard let equals = value.firstIndex(of: "=") else { return (value, nil) }
        return (String(value[..<equals]), String(value[value.index(after: equals)...]))
    }

    private static func duration(_ value: String, flag: String) throws(CommandFailure) -> ToastDuration {
        switch value {
        case "auto", "automatic": return .automatic
        case "indefinite", "never": return .indefinite
        default:
            guard let seconds = DurationText.seconds(value), seconds <= ToastDuration.maximumSeconds else {
                throw .data(
                    "\(flag) \(value): expected seconds (2.5) or a duration (500ms, 10m, 1h30m), auto or indefinite")
            }
            return .seconds(seconds)
        }
    }

    /// A value with a slash (or a `file://` URI) is a file; anything else is a theme icon name.
    static func iconOption(_ value: String) -> IconOption {
        if value.hasPrefix("file://") { return .path(value) }
        if value.contains("/") { return .path(value) }
        let imageExtensions = [".png", ".svg", ".jpg", ".jpeg", ".xpm", ".gif", ".bmp", ".ico", ".webp"]
        if imageExtensions.contains(where: { value.lowercased().hasSuffix($0) }) { return .path(value) }
        return .name(value)
    }
}

extension SplitArguments {
    /// Whether the flag `--long` was given.
    func has(_ long: String) -> Bool { options.contains { $0.spec.long == long } }
}

/// The option tables of the commands.
enum Specs {
    static let send: [OptionSpec] = [
        OptionSpec(short: "s", long: "status", takesValue: true),
        OptionSpec(short: "i", long: "icon", takesValue: true),
        OptionSpec(short: nil, long: "id", takesValue: true),
        OptionSpec(short: "d", long: "duration", takesValue: true),
        OptionSpec(short: "A", long: "action", takesValue: true),
        OptionSpec(short: nil, long: "tap", takesValue: true),
        OptionSpec(short: nil, long: "confirm", takesValue: true),
        OptionSpec(short: nil, long: "reply", takesValue: true),
        OptionSpec(short: nil, long: "reply-placeholder", takesValue: true),
        OptionSpec(short: "w", long: "wait", takesValue: false),
        OptionSpec(short: nil, long: "json", takesValue: false),
        OptionSpec(short: "a", long: "app-name", takesValue: true),
        OptionSpec(short: "n", long: "app-icon", takesValue: true),
        OptionSpec(short: "u", long: "urgency", takesValue: true),
        OptionSpec(short: "c", long: "category", takesValue: true),
        OptionSpec(short: "h", long: "hint", takesValue: true),
        OptionSpec(short: "e", long: "transient", takesValue: false),
        OptionSpec(short: "p", long: "print-id", takesValue: false),
        OptionSpec(short: "r", long: "replace-id", takesValue: true),
        OptionSpec(short: "t", long: "expire-time", takesValue: true),
        OptionSpec(short: nil, long: "on-action", takesValue: true),
        OptionSpec(short: nil, long: "shell", takesValue: false),
        OptionSpec(short: nil, long: "no-agent", takesValue: false),
        OptionSpec(short: nil, long: "terminal", takesValue: false),
        OptionSpec(short: nil, long: "in", takesValue: true),
        OptionSpec(short: nil, long: "progress", takesValue: true),
        OptionSpec(short: nil, long: "dnd", takesValue: true),
        OptionSpec(short: nil, long: "sound", takesValue: true),
        OptionSpec(short: nil, long: "at", takesValue: true),
        OptionSpec(short: nil, long: "terminal-code", takesValue: true),
        OptionSpec(short: nil, long: "plain", takesValue: false),
        OptionSpec(short: nil, long: "lang", takesValue: true),
        OptionSpec(short: nil, long: "default", takesValue: true),
    ]
    static let wait: [OptionSpec] = [
        OptionSpec(short: nil, long: "id", takesValue: true),
        OptionSpec(short: nil, long: "json", takesValue: false),
    ]
    static let agent: [OptionSpec] = [
        OptionSpec(short: nil, long: "idle-timeout", takesValue: true),
        OptionSpec(short: nil, long: "max-visible", takesValue: true),
        OptionSpec(short: nil, long: "replace", takesValue: false),
        OptionSpec(short: nil, long: "keeper", takesValue: true, isInternal: true),
        OptionSpec(short: nil, long: "if-scheduled", takesValue: false),
    ]
    static let close: [OptionSpec] = [
        OptionSpec(short: nil, long: "id", takesValue: true),
        OptionSpec(short: nil, long: "server-id", takesValue: true),
    ]
    static let later: [OptionSpec] = [
        OptionSpec(short: nil, long: "show", takesValue: false),
        OptionSpec(short: nil, long: "app", takesValue: true),
        OptionSpec(short: nil, long: "json", takesValue: false),
    ]
    static let jsonOnly: [OptionSpec] = [OptionSpec(short: nil, long: "json", takesValue: false)]
    static let run: [OptionSpec] = [
        OptionSpec(short: nil, long: "tail", takesValue: true),
        OptionSpec(short: nil, long: "min-seconds", takesValue: true),
        OptionSpec(short: nil, long: "pid", takesValue: true),
        OptionSpec(short: "a", long: "app-name", takesValue: true),
        OptionSpec(short: "d", long: "duration", takesValue: true),
        OptionSpec(short: nil, long: "lang", takesValue: true),
    ]
}
