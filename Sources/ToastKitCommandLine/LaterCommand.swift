import FoundationEssentials
import ToastKit
import ToastKitAgent

/// `toastkit later [--show] [--json] [--app NAME]`: lists the toasts kept with the Later action, or presents them
/// again — through the agent those kept with `--on-action` commands (``LaterHandBack``), the others here
/// (``LaterShow``): the command line's, or with `--app` those an application kept through the library.
struct LaterCommand {
    let show: Bool
    let json: Bool
    /// Whose kept toasts: ``CommandLineLater/application`` or an app's name.
    let application: String
    let environment: CommandEnvironment

    func run() async throws(CommandFailure) -> ExitCode {
        let store = CommandLineLater.store(application: application, environment: environment.variables)
        let records: [ToastLaterRecord]
        do {
            records = try store.load()
        } catch {
            throw .data(error.description)
        }
        guard show else {
            for record in records { list(record) }
            return .success
        }
        guard !records.isEmpty else { return .success }
        // Make sure a server is there before anything leaves the store.
        _ = try BusAccess.withSender { $0.server }
        // From before the toasts leave the store: SIGINT and SIGTERM then close those still up and keep them again.
        let signals = SignalWatcher()
        // Take the toasts out of the store in one locked step (another process may be adding some right now).
        let taken: [ToastLaterRecord]
        do {
            taken = try store.update { records in
                defer { records = [] }
                return records
            }
        } catch {
            throw CommandFailure(.ioError, "cannot take the toasts out of the Later store: \(error)")
        }
        guard !taken.isEmpty else { return .success }
        // Those kept with `--on-action` commands (the command line's only) go back to the agent, which runs them; the
        // others stay with this process, whose buttons print the choice.
        var rest = taken
        var failure: CommandFailure?
        if application == CommandLineLater.application {
            (rest, failure) = LaterHandBack(json: json, store: store, environment: environment).run(taken)
        }
        let code = try await LaterShow(json: json, application: application, store: store).run(rest, signals: signals)
        withExtendedLifetime(signals) {}
        if let failure, code == .success { return failure.code }
        return code
    }

    private func list(_ record: ToastLaterRecord) {
        let kept = record.deferredAt.formatted(Date.ISO8601FormatStyle())
        if json {
            Output.json([
                "id": .string(record.id), "status": .string(record.status.rawValue), "title": .string(record.title),
                "message": .optional(record.message), "kept_at": .string(kept),
                "actions": .array(record.actions.map { .string($0.id) }),
            ])
        } else {
            Output.line(
                "\(TerminalText.escape(record.id))\t\(record.status.rawValue)\t\(kept)\t\(TerminalText.escape(record.title))"
            )
        }
    }
}
