import Dispatch
import FoundationEssentials
import Glibc
import ToastKitAgent
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
}
