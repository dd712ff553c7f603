import Dispatch
import FoundationEssentials
import Glibc
import ToastModel

/// `--on-action ID=COMMAND`: what runs when action `ID` of a toast is invoked, after the sending script has gone.
///
/// The command is split into words as a shell would split a simple command — blanks separate words, `'…'` and
/// `"…"` quote, a backslash escapes the next character — and run with `execvp`, **not** through a shell: no
/// variables, globs, pipes or redirections, so text from a toast can never become shell code. `--shell` runs
/// it with `/bin/sh -c COMMAND` instead, for those who want a shell.
enum ActionCommand {
    /// The program and its arguments for `command`.
    ///
    /// - Throws: a usage error for an empty command or an unclosed quote.
    static func argv(_ command: String, shell: Bool) throws(CommandFailure) -> [String] {
        if shell { return ["/bin/sh", "-c", command] }
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in command {
            if escaped {
                word.append(character)
                escaped = false
                inWord = true
                continue
            }
            switch (quote, character) {
            case (nil, "\\"), ("\"", "\\"):
                escaped = true
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case ("'", "'"), ("\"", "\""):
                quote = nil
            case (nil, " "), (nil, "\t"), (nil, "\n"):
                if inWord { words.append(word) }
                word = ""
                inWord = false
            default:
                word.append(character)
                inWord = true
            }
        }
        if escaped { word.append("\\") }
        guard quote == nil else { throw .usage("--on-action: unclosed \(quote!) in \(command)") }
        if inWord { words.append(word) }
        guard !words.isEmpty else { throw .usage("--on-action: the command is empty") }
        return words
    }

    /// The log of the commands' output: `$XDG_STATE_HOME/toastkit/actions.log` (`~/.local/state/toastkit/`),
    /// or the private runtime folder when neither is set.
    static func logPath(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/toastkit/actions.log" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/toastkit/actions.log" }
        return IDStore.directory(environment: environment) + "/actions.log"
    }

    /// The variables an `--on-action` command needs from its sender, and nothing more is ever taken from the agent:
    /// `send` captures its whole environment (and working folder) for a toast with commands; a caller of `Present`
    /// that gives none gets these from the agent, so the command can still reach the desktop.
    static let sessionVariables = [
        "HOME", "PATH", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "LANG",
    ]

    /// The environment of a command of `request`: the sender's own, captured when it sent the toast; for a caller
    /// that sent none, `fallback`'s ``sessionVariables`` only; then `TOASTKIT_ACTION`, `TOASTKIT_ID` and
    /// `TOASTKIT_ACTIVATION_TOKEN` (empty when the server sent none).
    static func environment(
        of request: AgentRequest, action: String, toastID: String, activationToken: String?,
        fallback: [String: String]
    ) -> [String: String] {
        var environment =
            request.environment
            ?? fallback.filter { sessionVariables.contains($0.key) }
        environment["TOASTKIT_ACTION"] = action
        environment["TOASTKIT_ID"] = toastID
        environment["TOASTKIT_ACTIVATION_TOKEN"] = activationToken ?? ""
        return environment
    }
}
