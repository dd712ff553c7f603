import FoundationEssentials
import Glibc

/// The `toastkit` command: parses the command line and runs it. The executable's `main` only calls
/// ``run(arguments:environment:)`` and exits with its code.
public enum ToastKitCommand {
    /// The raw bytes of each argument after the program name, as the kernel passed them (not repaired).
    public static func rawArguments() -> [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map { UInt8(bitPattern: $0) })
        }
    }

    /// Runs the command and returns its exit code; everything it prints goes to stdout and stderr directly.
    /// - Parameters:
    ///   - arguments: The raw arguments after the program name.
    ///   - environment: The environment for the id store and the store of kept toasts; the process's by default.
    public static func run(arguments: [[UInt8]], environment: [String: String]? = nil) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        do {
            let invocation = try CommandLineParser.parse(arguments: arguments.map { Argument(bytes: $0) })
            let environment = environment ?? ProcessInfo.processInfo.environment
            return try await execute(invocation, environment: environment).rawValue
        } catch {
            Output.error(error.message)
            return error.code.rawValue
        }
    }

    static func execute(_ invocation: Invocation, environment: [String: String]) async throws(CommandFailure)
        -> ExitCode
    {
        switch invocation {
        case .help(let command):
            Output.text(HelpText.page(for: command))
            return .success
        case .version:
            Output.line("toastkit \(ToolVersion.current)")
            return .success
        case .send(let options):
            return try await SendCommand(options: options, environment: environment).run()
        case .close(let target):
            return try await CloseCommand(target: target, environment: environment).run()
        case .later(let show, let json):
            return try await LaterCommand(show: show, json: json, environment: environment).run()
        case .capabilities(let json):
            return try await ServerCommands.capabilities(json: json)
        case .serverInfo(let json):
            return try await ServerCommands.serverInfo(json: json)
        case .listen(let json):
            return try await ListenCommand(json: json).run()
        }
    }
}
