import FoundationEssentials
import Glibc
package import ToastKit

/// Why send options make no toast, in the words `toastkit send` prints (exit 65).
package struct ToastOptionError: Error, Sendable {
    package var message: String
    package init(_ message: String) { self.message = message }
}

/// The toast that send options make: the one conversion both the direct path and the agent use, so a toast is
/// built and checked the same way wherever it is shown, with the same words for what is wrong.
package enum ToastOptions {
    /// The toast for `options` with message `text`, checked: the tool and the agent build it the same way.
    package static func message(for options: SendOptions, text: String?) throws(ToastOptionError) -> ToastMessage {
        var swipe = ToastSwipeActions()
        let snoozes = options.snooze != nil
        if let first = options.actions.first { swipe.leading = Self.action(first, snoozes: snoozes) }
        if options.actions.count > 1 { swipe.trailing = Self.action(options.actions[1], snoozes: snoozes) }
        // dunstify sends a notification with no text at all (an icon-only OSD); the model needs some text, the
        // server gets none (CommandLineStyle sends the title as given).
        let untitled = options.dialect == .dunstify && options.title.isEmpty && (text ?? "").isEmpty
        let message = ToastMessage(
            id: options.id ?? "toastkit-\(UUID().uuidString.lowercased())",
            status: options.status ?? .normal,
            title: untitled ? " " : options.title,
            message: text,
            icon: icon(options.icon),
            duration: modelDuration(for: options),
            tapAction: options.tap.map { Self.action($0, tap: true, snoozes: snoozes) },
            swipeActions: options.actions.isEmpty ? nil : swipe,
            progress: options.progress,
            doNotDisturb: options.doNotDisturbPolicy,
            sound: options.sound)
        do {
            try message.validate()
        } catch {
            throw ToastOptionError(Self.describe(error))
        }
        return message
    }

    /// The toast's duration in the model — what its center times, and what a waiting `send` waits for on either path:
    /// ``duration(for:)``, and for the server's default no timer (the server closes it; CommandLineStyle sends -1).
    package static func modelDuration(for options: SendOptions) -> ToastDuration {
        duration(for: options) ?? .indefinite
    }

    /// How long the toast stays: the duration given (`-d`, or `-t` in milliseconds); without one, a toast with
    /// actions in `toastkit send` stays until it is answered; otherwise nil — the server's settings decide
    /// (`expire_timeout` -1), as for notify-send and dunstify without `-t`.
    package static func duration(for options: SendOptions) -> ToastDuration? {
        if let given = options.duration { return given.toastDuration }
        if options.dialect == .toastkit, !options.actions.isEmpty || options.tap != nil { return .indefinite }
        return nil
    }

    /// The model's action for an option: the built-ins `later` and `dismiss`, or an action with its label
    /// (`--tap ID` without a label shows the built-in "Open"). With `snoozes` (`-A later=10m`), `later` is an action
    /// of the agent's under the built-in label: it brings the toast back itself rather than keeping it for
    /// `toastkit later`.
    package static func action(_ option: ActionOption, tap: Bool = false, snoozes: Bool = false) -> ToastAction {
        var action: ToastAction
        switch option.id {
        case "later" where snoozes:
            action = ToastAction(id: "later", title: "")
            action.builtInLabel = .later
        case "later": action = .later
        case "dismiss": action = .dismiss
        default:
            action = ToastAction(id: option.id, title: option.label ?? "")
            if option.label == nil, tap { action.builtInLabel = .open }
        }
        if let label = option.label, action.builtInLabel != nil {
            action.title = label
            action.builtInLabel = nil
        }
        action.confirmation = option.confirmation
        action.reply = option.reply
        return action
    }

    /// The icon as `send` hands it on: a theme name as it is; a relative file that exists made absolute (a server
    /// cannot know the script's folder); anything else — an absolute path, a missing file, a `file://` URI or
    /// another URL — as given, as notify-send sends it. A file that cannot be shown is not an
    /// error — notify-send does not look either — but a warning: the toast is shown, without the icon.
    package static func resolvedIcon(_ option: IconOption?) -> (option: IconOption?, warning: String?) {
        guard case .path(let given)? = option else { return (option, nil) }
        if given.contains("://") {
            guard given.hasPrefix("file://") else {
                return (option, "-i/--icon \(given): servers do not fetch URLs; the toast is shown without an icon")
            }
            return (option, problem(withFile: String(given.dropFirst("file://".count)), given: given))
        }
        if given.hasPrefix("/") { return (option, problem(withFile: given, given: given)) }
        // A relative file that is there is made absolute: the server runs in another folder.
        let absolute = FileManager.default.currentDirectoryPath + "/" + given
        guard let problem = problem(withFile: absolute, given: given) else { return (.path(absolute), nil) }
        let tilde = given.hasPrefix("~") ? " (no shell expanded the ~)" : ""
        return (option, problem + tilde)
    }

    /// Why the icon file at `path` cannot be shown, or nil when it can.
    private static func problem(withFile path: String, given: String) -> String? {
        var info = stat()
        let reason: String?
        if stat(path, &info) != 0 {
            reason = String(cString: strerror(errno)).lowercased()
        } else if info.st_mode & S_IFMT != S_IFREG {
            reason = "not a regular file"
        } else if access(path, R_OK) != 0 {
            reason = "cannot be read"
        } else {
            reason = nil
        }
        return reason.map { "-i/--icon \(given): \($0); the toast is shown without it" }
    }

    /// The model's icon for an option: a theme name, or a file that can be shown (nil for anything else).
    package static func icon(_ option: IconOption?) -> ToastIcon? {
        switch option {
        case nil: return nil
        case .name(let name)?: return .system(name)
        case .path(let given)?:
            let path = given.hasPrefix("file://") ? String(given.dropFirst("file://".count)) : given
            guard path.hasPrefix("/"), problem(withFile: path, given: given) == nil else { return nil }
            return .file(path)
        }
    }

    /// A model validation error in the command line's words.
    package static func describe(_ error: ToastValidationError) -> String {
        let field: String
        switch error.field {
        case "title": field = "TITLE"
        case "message": field = "MESSAGE"
        case "id": field = "--id"
        case "duration": field = "-d/--duration"
        case "icon": field = "-i/--icon"
        case let name where name.hasPrefix("actions.tap"): field = "--tap"
        default: field = "-A/--action"
        }
        if error.field == "title", error.reason.contains("both are empty") {
            return "a toast needs a TITLE or a MESSAGE; both are empty"
        }
        return "\(field): \(error.reason)"
    }
}
