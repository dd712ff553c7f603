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
        if let first = options.actions.first { swipe.leading = Self.action(first) }
        if options.actions.count > 1 { swipe.trailing = Self.action(options.actions[1]) }
        let message = ToastMessage(
            id: options.id ?? "toastkit-\(UUID().uuidString.lowercased())",
            status: options.status,
            title: options.title,
            message: text,
            icon: try icon(options.icon),
            duration: options.duration?.toastDuration ?? .automatic,
            tapAction: options.tap.map { Self.action($0, tap: true) },
            swipeActions: options.actions.isEmpty ? nil : swipe)
        do {
            try message.validate()
        } catch {
            throw ToastOptionError(Self.describe(error))
        }
        return message
    }

    /// The model's action for an option: the built-ins `later` and `dismiss`, or an action with its label
    /// (`--tap ID` without a label shows the built-in "Open").
    package static func action(_ option: ActionOption, tap: Bool = false) -> ToastAction {
        var action: ToastAction
        switch option.id {
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
        return action
    }

    /// The icon: a theme name as it is, a file checked and made absolute.
    package static func icon(_ option: IconOption?) throws(ToastOptionError) -> ToastIcon? {
        switch option {
        case nil: return nil
        case .name(let name)?: return .system(name)
        case .path(let path)?:
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            var info = stat()
            guard stat(absolute, &info) == 0 else {
                throw ToastOptionError("-i/--icon \(path): \(String(cString: strerror(errno)).lowercased())")
            }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw ToastOptionError("-i/--icon \(path): not a regular file")
            }
            guard access(absolute, R_OK) == 0 else { throw ToastOptionError("-i/--icon \(path): cannot be read") }
            return .file(absolute)
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
