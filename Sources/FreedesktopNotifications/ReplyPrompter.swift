// Asks the person for a reply's text in a small dialog, for a notification service that draws no reply field of
// its own: the command in TOASTKIT_REPLY_PROMPT, or kdialog, zenity or yad, whichever is installed.
import CSpawn
import Dispatch
import Glibc
import Synchronization
package import ToastModel

/// How a presenter asks for a reply's text where the service has no reply field (every server but Plasma; the
/// portal): the person chose the reply action's button, and a dialog opens.
public enum ReplyPrompter: Sendable, Hashable {
    /// The first that is there: the command in `TOASTKIT_REPLY_PROMPT` (run by `/bin/sh -c`, see
    /// ``command(_:)``), then `kdialog` on KDE, then `zenity`, `yad` and `kdialog`.
    case automatic
    /// This program with these arguments. It is started with `TOASTKIT_REPLY_TITLE` (the toast's title),
    /// `TOASTKIT_REPLY_MESSAGE` (its message), `TOASTKIT_REPLY_ACTION` (the action's label) and
    /// `TOASTKIT_REPLY_PLACEHOLDER` in its environment (and `XDG_ACTIVATION_TOKEN` when the desktop sent one), prints
    /// the text on its standard output and exits 0; exit 1 (and nothing printed) is a cancel, any other exit a failure
    /// (`["rofi", "-dmenu"]`).
    case command([String])
    /// Never prompt: a reply action without a service field is cancelled, saying so.
    case off

    /// The most a prompt may print that is kept (a reply is a line or two; a runaway program is not read forever).
    static let outputLimit = 64 * 1024

    /// Asks for the text, on a thread of its own, for as long as the person takes. Cancelling the task closes the
    /// dialog (its whole process group: `SIGTERM`, then `SIGKILL` a second later) and answers ``ToastReplyPromptResult/cancelled``.
    package func prompt(_ prompt: ToastReplyPrompt, environment: [String: String]) async -> ToastReplyPromptResult {
        let dialog = PromptProcess()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DispatchQueue(label: "toastkit.reply-prompt").async {
                    continuation.resume(returning: self.promptNow(prompt, environment: environment, dialog: dialog))
                }
            }
        } onCancel: {
            dialog.close()
        }
    }

    /// The programs tried, in order, with their arguments for `prompt`.
    package func candidates(
        for prompt: ToastReplyPrompt, environment: [String: String]
    ) -> [(name: String, argv: [String])] {
        // The message as plain text (its markup tags would show as they are).
        let question = prompt.message.map { "\(prompt.actionTitle): \(BodyMarkup.strip($0))" } ?? prompt.actionTitle
        switch self {
        case .off:
            return []
        case .command(let argv):
            return argv.isEmpty ? [] : [(argv[0], argv)]
        case .automatic:
            if let command = environment["TOASTKIT_REPLY_PROMPT"], !command.isEmpty {
                return [("TOASTKIT_REPLY_PROMPT", ["/bin/sh", "-c", command])]
            }
            // Both expand backslash escapes in the label (g_strcompress); zenity's is text with mnemonics (`_`),
            // yad's is Pango markup. kdialog's is plain text; `--name=value`, so no value is taken for an option.
            let compressed = Self.doubling("\\", in: question)
            let kdialog = ("kdialog", ["kdialog", "--title=\(prompt.title)", "--inputbox=\(question)"])
            var list: [(name: String, argv: [String])] = [
                (
                    "zenity",
                    [
                        "zenity", "--entry", "--title=\(prompt.title)",
                        "--text=\(Self.doubling("_", in: compressed))",
                    ]
                ),
                ("yad", ["yad", "--entry", "--title=\(prompt.title)", "--text=\(BodyMarkup.escape(compressed))"]),
                kdialog,
            ]
            let desktop = (environment["XDG_CURRENT_DESKTOP"] ?? "").uppercased()
            if desktop.split(separator: ":").contains("KDE") { list.insert(kdialog, at: 0) }
            return list
        }
    }

    /// What would ask for a reply in `environment`: `TOASTKIT_REPLY_PROMPT`'s command, or the first prompt program
    /// installed; nil when there is none (or with ``off``, "nothing").
    package func firstChoice(environment: [String: String]) -> String? {
        let sample = ToastReplyPrompt(toastID: "", title: "", actionTitle: "", field: ToastReplyField())
        switch self {
        case .off: return "nothing (asking for a reply is off)"
        case .command(let argv): return argv.isEmpty ? nil : argv.joined(separator: " ")
        case .automatic:
            if let command = environment["TOASTKIT_REPLY_PROMPT"], !command.isEmpty { return command }
            return candidates(for: sample, environment: environment).first {
                ProcessEnvironment.findExecutable($0.argv[0], in: environment) != nil
            }?.name
        }
    }

    /// `text` with every `character` doubled (how a backslash or a mnemonic underscore stands for itself).
    static func doubling(_ character: Character, in text: String) -> String {
        var result = ""
        for each in text {
            result.append(each)
            if each == character { result.append(each) }
        }
        return result
    }

    /// The prompt, on this thread.
    private func promptNow(
        _ prompt: ToastReplyPrompt, environment: [String: String], dialog: PromptProcess
    ) -> ToastReplyPromptResult {
        var environment = environment
        environment["TOASTKIT_REPLY_TITLE"] = prompt.title
        environment["TOASTKIT_REPLY_MESSAGE"] = prompt.message ?? ""
        environment["TOASTKIT_REPLY_ACTION"] = prompt.actionTitle
        environment["TOASTKIT_REPLY_PLACEHOLDER"] = prompt.field.placeholder ?? ""
        if let token = prompt.activationToken { environment["XDG_ACTIVATION_TOKEN"] = token }
        for (name, argv) in candidates(for: prompt, environment: environment) {
            // A named program that is not installed: the next one. A command given is always tried.
            if self == .automatic, name != "TOASTKIT_REPLY_PROMPT" {
                guard ProcessEnvironment.findExecutable(argv[0], in: environment) != nil else { continue }
                // A dialog with no display exits 1, which would read as the person's cancel.
                guard !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
                else {
                    return .unavailable(
                        reason: "\(name) has no display to open on (neither DISPLAY nor WAYLAND_DISPLAY)")
                }
            }
            return Self.run(argv, name: name, environment: environment, dialog: dialog)
        }
        if self == .off { return .unavailable(reason: "asking for a reply is turned off") }
        return .unavailable(reason: "no prompt program: install zenity, kdialog or yad, or set TOASTKIT_REPLY_PROMPT")
    }

    /// Runs `argv` and reads what it prints until it ends: exit 0 is the text (one final newline dropped), exit 1,
    /// 5 (zenity's time-out) or 252 (yad's Escape) a cancel, anything else the program's failure. It ends when the
    /// program does (a pidfd says when), even if something it started still holds its output open.
    private static func run(
        _ argv: [String], name: String, environment: [String: String], dialog: PromptProcess
    ) -> ToastReplyPromptResult {
        var pipe: [Int32] = [0, 0]
        guard pipe2(&pipe, O_CLOEXEC) == 0 else {
            return .unavailable(reason: "\(name) could not start: \(Errno(errno))")
        }
        let started = dialog.open {
            Spawn.start(
                argv.map { Array($0.utf8) }, environment: environment, standardInput: nil, standardOutput: pipe[1],
                standardError: nil, newSession: true)
        }
        close(pipe[1])
        let pid: Int32
        switch started {
        case nil:
            close(pipe[0])
            return .cancelled
        case .success(let opened)?: pid = opened
        case .failure(let error)?:
            close(pipe[0])
            return .unavailable(reason: "\(name) could not start: \(error)")
        }
        let (output, exited) = readUntilExit(pid, output: pipe[0])
        close(pipe[0])
        let end = dialog.reap(pid, exited: exited)
        if dialog.isClosed { return .cancelled }
        switch end {
        case .ended(.exited(0)):
            // OK on an empty field sends nothing: a cancel.
            let text = text(of: output)
            return text.isEmpty ? .cancelled : .text(text)
        case .ended(.exited(1)), .ended(.exited(5)), .ended(.exited(252)): return .cancelled
        case .ended(let end): return .unavailable(reason: "\(name): \(end)")
        case .notSeen, .running:
            // Reaped by someone else (the kernel, SIGCHLD being ignored): what it printed is all there is.
            return output.isEmpty ? .cancelled : .text(text(of: output))
        }
    }

    /// What `pid` prints on `descriptor` (up to ``outputLimit``) until it exits, and what is left in the pipe then;
    /// and whether it was seen to exit. Without a pidfd (a kernel before 5.3), until the pipe's end.
    private static func readUntilExit(_ pid: Int32, output descriptor: Int32) -> (output: [UInt8], exited: Bool) {
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        /// Reads once: false at the pipe's end, or when nothing is there (non-blocking).
        func readOnce() -> Bool {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { return errno == EINTR }
            guard count > 0 else { return false }
            if output.count < outputLimit { output += buffer[0..<min(count, outputLimit - output.count)] }
            return true
        }
        let exit = pidfd_open(pid, 0)
        guard exit >= 0 else {
            while readOnce() {}
            return (output, false)
        }
        defer { close(exit) }
        var watched = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: exit, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            guard poll(&watched, 2, -1) >= 0 else {
                if errno == EINTR { continue }
                break
            }
            if watched[0].revents != 0, !readOnce() {
                // The pipe's end: only the exit is left to wait for (a negative descriptor is not polled).
                watched[0].fd = -1
            }
            if watched[1].revents != 0 {
                // It exited: what is in the pipe now is all of its text; a child of its own may hold the pipe open.
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
                while readOnce() {}
                return (output, true)
            }
        }
        return (output, false)
    }

    /// What a prompt printed, as text: valid UTF-8 (anything else replaced), without its final newline.
    private static func text(of output: [UInt8]) -> String {
        var bytes = output[...]
        if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// One prompt's program, for its reader and for whoever closes it: started only if not closed yet, signalled only
/// while not reaped (its pid is not reused under it).
final class PromptProcess: Sendable {
    private struct State {
        var pid: Int32?
        var isClosed = false
        var isReaped = false
    }
    private let state = Mutex(State())

    /// Whether ``close()`` was called.
    var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Starts the program with `start`, unless the prompt was already closed (nil).
    func open(_ start: () -> Result<Int32, Errno>) -> Result<Int32, Errno>? {
        state.withLock { state in
            guard !state.isClosed else { return nil }
            let started = start()
            if case .success(let pid) = started { state.pid = pid }
            return started
        }
    }

    /// Reaps the program and says how it ended (or that someone else reaped it). One that `exited` is reaped under
    /// the lock, so ``close()`` never signals its pid once it is free; otherwise it is waited for first.
    func reap(_ pid: Int32, exited: Bool) -> Spawn.Wait {
        if exited {
            return state.withLock { state in
                let end = Spawn.wait(pid)
                state.isReaped = true
                return end
            }
        }
        let end = Spawn.wait(pid)
        state.withLock { $0.isReaped = true }
        return end
    }

    /// Closes the dialog: its process group gets `SIGTERM`, and `SIGKILL` a second later if it is still there.
    func close() {
        guard send(SIGTERM, markingClosed: true) else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 1) { [self] in
            _ = send(SIGKILL, markingClosed: false)
        }
    }

    /// Sends `number` to the program's group while it is not reaped; whether it was sent.
    private func send(_ number: Int32, markingClosed: Bool) -> Bool {
        state.withLock { state in
            if markingClosed { state.isClosed = true }
            guard let pid = state.pid, !state.isReaped else { return false }
            // Its whole group: it leads one of its own (a new session), and a wrapper's children go too.
            kill(-pid, number)
            return true
        }
    }
}
