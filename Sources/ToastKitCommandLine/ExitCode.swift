import ToastKitAgent

/// The exit codes of `toastkit`, documented in `--help`, the man page and the README.
///
/// 1 is never used, so a shell's generic failure is never mistaken for an outcome.
enum ExitCode: Int32, Sendable, CaseIterable {
    /// Shown (without `--wait`), or an action was invoked (with `--wait`); also help, lists and queries.
    case success = 0
    /// The person dismissed the toast.
    case dismissed = 2
    /// The toast's time ran out.
    case expired = 3
    /// Another program (or `toastkit close`) closed the toast.
    case closed = 4
    /// The person chose the built-in Later action; the toast is kept (`toastkit later`).
    case deferred = 5
    /// Do Not Disturb was on and `--dnd drop` asked to drop the toast: it was never shown.
    case suppressed = 6
    /// EX_USAGE: the command line is malformed.
    case usage = 64
    /// EX_DATAERR: a value is not valid.
    case dataError = 65
    /// EX_UNAVAILABLE: no session bus, no notification server, or the server failed.
    case unavailable = 69
    /// EX_SOFTWARE: an internal error.
    case software = 70
    /// EX_IOERR: something the tool had to write could not be written — its standard output (the toast was
    /// shown, what it printed was lost), or the store of Later toasts (the toast was not kept).
    case ioError = 74
    /// 128 + SIGINT: interrupted while waiting; the toast was closed.
    case interrupted = 130
    /// 128 + SIGTERM: terminated while waiting; the toast was closed.
    case terminated = 143
}

/// A failure that ends the command: one line on stderr (`toastkit: …`) and an exit code.
struct CommandFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The exit code.
    var code: ExitCode
    /// The message, without the `toastkit: ` prefix.
    var message: String

    /// A failure; control characters in `message` (which may quote what the person typed, newlines included) are
    /// escaped, so the error is always one line.
    init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = Self.oneLine(message)
    }

    static func oneLine(_ text: String) -> String { TerminalText.escape(text) }

    /// A usage error (64).
    static func usage(_ message: String) -> CommandFailure { CommandFailure(.usage, message) }
    /// A bad value (65).
    static func data(_ message: String) -> CommandFailure { CommandFailure(.dataError, message) }
    /// An unavailable bus or server (69).
    static func unavailable(_ message: String) -> CommandFailure { CommandFailure(.unavailable, message) }

    /// The line printed on stderr.
    var line: String { "toastkit: \(message)" }

    var description: String { line }
}
