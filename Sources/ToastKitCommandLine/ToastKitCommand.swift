import Dispatch
import FreedesktopNotifications
import Glibc
import Synchronization
import ToastKit
import ToastKitAgent

/// The `toastkit` command: parses the command line and runs it. The executable's `main` only calls ``main()``;
/// ``run(arguments:environment:)`` runs a command line in-process and returns its exit code.
public enum ToastKitCommand {
    /// The raw bytes of each argument after the program name, as the kernel passed them (not repaired).
    public static func rawArguments() -> [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map { UInt8(bitPattern: $0) })
        }
    }

    /// Runs the command with the process's arguments and environment, and exits with its code: the executable's
    /// whole `main`.
    ///
    /// The main thread waits for the command instead of handing itself to Dispatch as an `async` `main` does
    /// (`dispatchMain`, which ends the main thread with `pthread_exit`). In the fully static `toastkit` that exit
    /// unwinds the thread, and the first unwind in a static binary sorts every unwind table: ~7 ms, more than the
    /// rest of a `send`. `--help`, `--version`, `close`, `capabilities`, `server-info` and `send` without
    /// `--wait` start no thread at all: they run on the main thread with blocking bus calls
    /// (``BlockingNotificationSender``).
    public static func main() -> Never {
        // A sound this process plays (for a server that plays none) ends before the process does.
        func exit(_ code: Int32) -> Never {
            SoundPlayer.waitUntilPlayed()
            Glibc.exit(code)
        }
        signal(SIGPIPE, SIG_IGN)
        Output.endsProcessOnClosedReader = true
        let invocation: Invocation
        let backend: NotificationBackend
        let program = CommandLine.unsafeArgv[0].map { String(cString: $0) } ?? "toastkit"
        do {
            let arguments = rawArguments().map { Argument(bytes: $0) }
            if CommandDialect(program: program) != .toastkit {
                // The tool's own command line: no toastkit options before it.
                (backend, invocation) = (
                    .automatic, try CommandLineParser.parse(arguments: arguments, program: program)
                )
            } else {
                let (user, raw) = try CommandLineParser.userOption(rawArguments())
                if let user, let code = AsUser.run(user, arguments: raw, environment: CommandEnvironment(nil)) {
                    exit(code)
                }
                let rest: [Argument]
                (backend, rest) = try CommandLineParser.globalOptions(raw.map { Argument(bytes: $0) })
                invocation = try CommandLineParser.parse(arguments: rest)
            }
        } catch {
            Output.error(error.message)
            // `toastkit notify-send --bogus` fails as notify-send would, too.
            let named = CommandLine.argc > 1 ? CommandLine.unsafeArgv[1].map { String(cString: $0) } : nil
            let dialect =
                CommandDialect(program: program) == .toastkit
                ? named.flatMap(CommandDialect.init(rawValue:)) ?? .toastkit : CommandDialect(program: program)
            exit(DialectOutput.exitCode(error.code, dialect: dialect))
        }
        let dialect = invocation.dialect
        let environment = CommandEnvironment(nil, backend: backend)
        if case .run(let options) = invocation {
            exit(RunCommand(options: options, environment: environment).run())
        }
        if case .progress(let options) = invocation {
            exit(ProgressCommand(options: options, environment: environment).run())
        }
        do throws(CommandFailure) {
            if let code = try executeWithoutTasks(invocation, environment: environment) {
                exit(DialectOutput.exitCode(Output.finalCode(code), dialect: dialect))
            }
        } catch {
            Output.error(error.message)
            exit(DialectOutput.exitCode(error.code, dialect: dialect))
        }
        // The rest waits for signals or the server's answers: a task on the shared pool, the main thread waits.
        let code: Int32
        do throws(CommandFailure) {
            let result = try waitForTasks { () async throws(CommandFailure) in
                try await execute(invocation, environment: environment)
            }
            code = DialectOutput.exitCode(Output.finalCode(result), dialect: dialect)
        } catch {
            Output.error(error.message)
            code = DialectOutput.exitCode(error.code, dialect: dialect)
        }
        exit(code)
    }

    /// Runs the command and returns its exit code; everything it prints goes to stdout and stderr directly.
    ///
    /// Commands that only hand something to the server (`send` without `--wait`, `close`, `capabilities`,
    /// `server-info`) make blocking bus calls on the calling thread, for up to their 10 s call timeout.
    /// - Parameters:
    ///   - arguments: The raw arguments after the program name.
    ///   - environment: The environment for the id store and the store of kept toasts; the process's by default.
    public static func run(arguments: [[UInt8]], environment: [String: String]? = nil) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        Output.startRun()
        do {
            let (user, raw) = try CommandLineParser.userOption(arguments)
            if let user, let code = AsUser.run(user, arguments: raw, environment: CommandEnvironment(environment)) {
                return code
            }
            let (backend, rest) = try CommandLineParser.globalOptions(raw.map { Argument(bytes: $0) })
            let invocation = try CommandLineParser.parse(arguments: rest)
            if case .run(let options) = invocation {
                return RunCommand(options: options, environment: CommandEnvironment(environment, backend: backend))
                    .run()
            }
            if case .progress(let options) = invocation {
                return ProgressCommand(
                    options: options, environment: CommandEnvironment(environment, backend: backend)
                ).run()
            }
            return Output.finalCode(
                try await execute(invocation, environment: CommandEnvironment(environment, backend: backend))
            )
            .rawValue
        } catch {
            if !Output.readerIsGone { Output.error(error.message) }
            return error.code.rawValue
        }
    }

    /// Runs the commands that need no task — they print, or hand one thing to the server and exit — on the
    /// calling thread; nil for the others.
    static func executeWithoutTasks(_ invocation: Invocation, environment: CommandEnvironment)
        throws(CommandFailure) -> ExitCode?
    {
        switch invocation {
        case .help(let command):
            Output.text(HelpText.page(for: command))
            return .success
        case .version:
            Output.line("toastkit \(ToolVersion.current)")
            return .success
        case .send(let options) where TerminalDelivery.applies(to: options, environment: environment):
            return try SendCommand(options: try options.sent(), environment: environment).runInTerminal()
        case .send(let options) where !options.waits && environment.backendChoice.backend != .portal:
            return try SendCommand(options: try options.sent(), environment: environment)
                .runWithoutWaitingPreferringAgent()
        case .list(let json):
            return try ListCommand(json: json, environment: environment).run()
        case .doctor(let json):
            return DoctorCommand(json: json, environment: environment).run()
        case .close(let target):
            return try CloseCommand(target: target, environment: environment).run()
        case .capabilities(let json):
            return try ServerCommands.capabilities(json: json, backend: environment.backendChoice)
        case .serverInfo(let json):
            return try ServerCommands.serverInfo(json: json, backend: environment.backendChoice)
        case .toolCommand(let command, let dialect):
            return try DialectOutput.run(command, dialect: dialect, environment: environment)
        default:
            return nil
        }
    }

    static func execute(_ invocation: Invocation, environment: CommandEnvironment) async throws(CommandFailure)
        -> ExitCode
    {
        if let code = try executeWithoutTasks(invocation, environment: environment) { return code }
        switch invocation {
        case .help, .version, .close, .capabilities, .serverInfo, .list, .doctor, .toolCommand:
            preconditionFailure("\(invocation) runs without tasks")
        case .run, .progress:
            preconditionFailure(
                "run and progress run on the calling thread, from main() and run(arguments:environment:)")
        case .agent(let options):
            return try await AgentCommand.run(options, environment: environment)
        case .wait(let id, let json):
            return try await WaitCommand(id: id, json: json, environment: environment).run()
        case .send(let options):
            let code = try await SendCommand(options: try options.sent(), environment: environment).run()
            DialectOutput.reportEnding(code, options: options)
            // --default: a question dismissed or left to expire still has its answer (for `set -e` scripts).
            if let answer = options.defaultAnswer, code == .dismissed || code == .expired {
                if !options.json { Output.line(TerminalText.escape(answer)) }
                return .success
            }
            return code
        case .later(let show, let json, let application):
            return try await LaterCommand(show: show, json: json, application: application, environment: environment)
                .run()
        case .listen(let json):
            return try await ListenCommand(json: json).run()
        }
    }
}

/// The environment the commands read (for the id store and the store of kept toasts): given, or the process's,
/// read from `environ` only when a command asks — a plain `send` never does. It also carries `--backend`.
struct CommandEnvironment: Sendable {
    private let given: [String: String]?
    /// `--backend` (``NotificationBackend/automatic`` unless given).
    let backend: NotificationBackend

    init(_ given: [String: String]?, backend: NotificationBackend = .automatic) {
        self.given = given
        self.backend = backend
    }

    /// The backend `send`, `capabilities` and `server-info` use, and why: `--backend`, or the portal in a Flatpak
    /// or Snap sandbox (a `stat` of `/.flatpak-info` and a look at `SNAP` and `SNAP_NAME`).
    var backendChoice: BackendChoice {
        let snap = ["SNAP", "SNAP_NAME"].reduce(into: [String: String]()) { found, name in
            if let value = given?[name] ?? getenv(name).map({ String(cString: $0) }) { found[name] = value }
        }
        return backend.choice(environment: snap)
    }

    /// One variable, without reading the whole environment.
    func variable(_ name: String) -> String? {
        if let given { return given[name] }
        return getenv(name).map { String(cString: $0) }
    }

    /// The variables.
    var variables: [String: String] {
        given ?? ProcessEnvironment.current
    }
}

/// Runs `work` on a task and waits on this thread (the main thread, or one of a command's own: never one of the
/// pool's) for its outcome.
func waitForTasks(_ work: @escaping @Sendable () async throws(CommandFailure) -> ExitCode)
    throws(CommandFailure) -> ExitCode
{
    let outcome = Mutex<Result<ExitCode, CommandFailure>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<ExitCode, CommandFailure>
        do throws(CommandFailure) {
            result = .success(try await work())
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0! }.get()
}
