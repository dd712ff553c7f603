// The parser as the dialect tests call it: a command line read as the program it is called as (toastkit, notify-send,
// dunstify), and the failure it ends with.
import ToastKitAgent

@testable import ToastKitCommandLine

enum ParsedLine {
    /// `arguments` as `program` reads them, when they are a `send`.
    static func sendOptions(_ program: String, _ arguments: [String]) throws -> SendOptions {
        let invocation = try CommandLineParser.parse(arguments: arguments.map { Argument($0) }, program: program)
        guard case .send(let options) = invocation else {
            throw CommandFailure(.software, "not a send invocation: \(invocation)")
        }
        return options
    }

    /// The failure `program` ends with for `arguments`; nil when they parse.
    static func failure(_ program: String, _ arguments: [String]) -> CommandFailure? {
        do {
            _ = try CommandLineParser.parse(arguments: arguments.map { Argument($0) }, program: program)
            return nil
        } catch {
            return error
        }
    }
}
