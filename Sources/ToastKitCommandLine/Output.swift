import Glibc
import Synchronization
import ToastKitAgent

/// Writes lines straight to the file descriptors with `write(2)`: every line reaches a pipe at once (no stdio
/// buffering, so `-p` and `--json` lines can be read while the command still runs), and a closed pipe is an
/// error return (EPIPE) rather than a SIGPIPE (ignored at start), so the tool decides what it means.
///
/// A write to standard output that fails (a full disk) is remembered: the command then ends with exit 74
/// (``lostOutput``) instead of an outcome that would claim its output was delivered. A failed write to standard
/// error cannot be reported anywhere and is ignored.
///
/// A closed reader (`toastkit list --json | head -2`, `toastkit listen | grep -m1 …`) is not an error to report:
/// as a tool in a pipe does, the `toastkit` executable (``ToastKitCommand/main()``) ends at once and quietly, by the
/// SIGPIPE it had ignored (the shell sees 141), so a `listen` does not run on for nobody. A command run in-process
/// (``ToastKitCommand/run(arguments:environment:)``) never ends its host: it stops as for a lost write, with exit 74,
/// but without a line on stderr.
enum Output {
    /// The `errno` of the first write to standard output that failed in this run, if any.
    private static let standardOutputError = Mutex<Int32?>(nil)
    /// Whether a closed reader ends the process (the executable) rather than the command (a run in-process).
    private static let closedReaderEndsProcess = Atomic(false)

    /// Set by ``ToastKitCommand/main()``: this process is the `toastkit` executable.
    static var endsProcessOnClosedReader: Bool {
        get { closedReaderEndsProcess.load(ordering: .relaxed) }
        set { closedReaderEndsProcess.store(newValue, ordering: .relaxed) }
    }

    /// The failure to report when something written to standard output was lost, or nil.
    static var lostOutput: CommandFailure? {
        standardOutputError.withLock { $0 }.map { error in
            CommandFailure(.ioError, "cannot write to standard output: \(String(cString: strerror(error)))")
        }
    }

    /// Whether standard output was lost because its reader went away (EPIPE): quiet, unlike a full disk.
    static var readerIsGone: Bool { standardOutputError.withLock { $0 } == EPIPE }

    /// Forgets an earlier run's failed write (for ``ToastKitCommand/run(arguments:environment:)``).
    static func startRun() {
        standardOutputError.withLock { $0 = nil }
    }

    /// The exit code a command that ended with `code` really has: an outcome (0–5) whose output was lost becomes
    /// 74, with its error line on stderr.
    static func finalCode(_ code: ExitCode) -> ExitCode {
        guard code.rawValue <= ExitCode.deferred.rawValue, let failure = lostOutput else { return code }
        // A reader that went away is not worth a line (in-process; the executable has ended already).
        if !readerIsGone { error(failure.message) }
        return failure.code
    }

    /// Writes `line` and a newline to standard output.
    static func line(_ line: String) {
        write(1, line + "\n")
    }

    /// Writes a JSON object as one line to standard output.
    static func json(_ object: JSONObject) {
        write(1, object.serialized + "\n")
    }

    /// Writes `toastkit: <message>` to standard error, as one line (control characters escaped).
    static func error(_ message: String) {
        ErrorLine.write(message)
    }

    /// Writes text to standard output as it is.
    static func text(_ text: String) {
        write(1, text)
    }

    private static func write(_ descriptor: Int32, _ text: String) {
        guard let error = ErrorLine.writeAll(descriptor, text), descriptor == 1 else { return }
        if error == EPIPE, endsProcessOnClosedReader { endByClosedReader() }
        standardOutputError.withLock { $0 = $0 ?? error }
    }

    /// Ends the process as SIGPIPE would have: the reader of standard output is gone.
    private static func endByClosedReader() -> Never {
        signal(SIGPIPE, SIG_DFL)
        var pending = sigset_t()
        sigemptyset(&pending)
        sigaddset(&pending, SIGPIPE)
        pthread_sigmask(SIG_UNBLOCK, &pending, nil)
        raise(SIGPIPE)
        _exit(128 + SIGPIPE)
    }
}

/// A JSON value for the tool's one-object-per-line output.
enum JSONValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object(JSONObject)

    var serialized: String {
        switch self {
        case .string(let text): JSONValue.quote(text)
        case .integer(let value): String(value)
        case .number(let value): value.isFinite ? "\(value)" : "null"
        case .bool(let value): value ? "true" : "false"
        case .null: "null"
        case .array(let values): "[" + values.map(\.serialized).joined(separator: ",") + "]"
        case .object(let object): object.serialized
        }
    }

    /// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped — also the C1
    /// controls and the bidirectional overrides (``TerminalText/isUnsafe(_:)``), so a quoted value is safe on a
    /// terminal too.
    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let scalar where TerminalText.isUnsafe(scalar):
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// A JSON object whose keys keep the order they were added in (stable output).
struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    var entries: [(String, JSONValue)]

    init(dictionaryLiteral elements: (String, JSONValue)...) {
        entries = elements
    }

    init(_ entries: [(String, JSONValue)]) {
        self.entries = entries
    }

    static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.entries.map(\.0) == rhs.entries.map(\.0) && lhs.entries.map(\.1) == rhs.entries.map(\.1)
    }

    subscript(key: String) -> JSONValue? {
        get { entries.first { $0.0 == key }?.1 }
        set {
            if let index = entries.firstIndex(where: { $0.0 == key }) {
                if let newValue { entries[index].1 = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    var serialized: String {
        "{" + entries.map { JSONValue.quote($0.0) + ":" + $0.1.serialized }.joined(separator: ",") + "}"
    }
}

extension JSONValue {
    /// A string, or null.
    static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
}
