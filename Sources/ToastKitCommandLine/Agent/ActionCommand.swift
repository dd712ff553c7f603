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

    /// Starts `argv` for an invoked action, without waiting for it: the environment is the agent's plus
    /// `TOASTKIT_ACTION`, `TOASTKIT_ID` and `TOASTKIT_ACTIVATION_TOKEN` (empty when the server sent none); its
    /// standard input is `/dev/null`, its output and errors are appended to `log` after a header line. A thread
    /// reaps it and notes its exit status in the log.
    ///
    /// - Returns: the process id, or the reason it could not start.
    static func run(
        _ argv: [String], action: String, toastID: String, activationToken: String?, log: String
    ) -> Result<pid_t, PrivateFileError> {
        try? PrivateFiles.prepareFolder(PrivateFiles.parent(of: log), tighten: false)
        guard let descriptor = Spawn.openLog(log) else { return .failure(.errno("cannot open \(log)")) }
        defer { close(descriptor) }
        Spawn.append(
            "[\(Spawn.timestamp())] toast \(toastID), action \(action): \(argv.joined(separator: " "))\n",
            to: descriptor)
        var environment = ProcessInfo.processInfo.environment
        environment["TOASTKIT_ACTION"] = action
        environment["TOASTKIT_ID"] = toastID
        environment["TOASTKIT_ACTIVATION_TOKEN"] = activationToken ?? ""
        let pid: pid_t
        switch Spawn.start(argv, environment: environment, output: descriptor, newSession: true) {
        case .success(let started): pid = started
        case .failure(let error):
            Spawn.append("[\(Spawn.timestamp())] could not start \(argv[0]): \(error)\n", to: descriptor)
            return .failure(PrivateFileError("cannot run \(argv[0])", reason: error.description))
        }
        let logPath = log
        DispatchQueue.global().async {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            let exit = status & 0x7f == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
            if let fd = Spawn.openLog(logPath) {
                Spawn.append("[\(Spawn.timestamp())] \(argv[0]) (pid \(pid)) ended: \(exit)\n", to: fd)
                close(fd)
            }
        }
        return .success(pid)
    }
}
