// `toastkit later --show` for the kept toasts that have `--on-action` commands: handed back to the agent with them.
import DBus
import ToastKit
import ToastKitAgent

/// The command line's kept toasts that have `--on-action` commands (their requests in
/// ``ToastKitAgent/CommandLineLater/commands(environment:)``): `later --show` hands each back to the agent with its
/// commands, as `send --on-action` handed it the first time, and does not wait for it — the agent runs a button's
/// command, and keeps the toast again, commands and all, when Later is chosen again.
struct LaterHandBack {
    let json: Bool
    /// The Later store the toasts were taken from (a toast that cannot be handed back goes back into it).
    let store: FileLaterStore
    let environment: CommandEnvironment

    /// Hands back those of `taken` kept with commands.
    ///
    /// - Returns: the others, for this process to show (``LaterShow``), and the failure to exit with once they are
    ///   done when one could not be handed back (it is kept, commands and all).
    func run(_ taken: [ToastLaterRecord]) -> (rest: [ToastLaterRecord], failure: CommandFailure?) {
        let variables = environment.variables
        // No folder: nothing was ever kept with commands (and none is made for nothing).
        guard let state = PrivateFiles.stateFolder(environment: variables),
            PrivateFiles.isFolder("\(state)/\(CommandLineLater.commandsFolderName)")
        else { return (taken, nil) }
        let commands: ScheduleStore
        do {
            commands = try CommandLineLater.commands(environment: variables)
        } catch {
            Output.error("warning: the --on-action commands of kept toasts cannot be read: \(error)")
            return (taken, nil)
        }
        let requests = Dictionary(commands.load().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var rest: [ToastLaterRecord] = []
        var failure: CommandFailure?
        for record in taken {
            guard let entry = requests[record.id] else {
                rest.append(record)
                continue
            }
            do throws(CommandFailure) {
                try handBack(record, entry, commands: commands)
            } catch {
                Output.error("the toast \"\(TerminalText.escape(record.id))\" stays kept: \(error.message)")
                failure = failure ?? error
            }
        }
        return (rest, failure)
    }

    /// Hands `record` back to the agent with the request `entry` kept for it; on failure it is kept again, commands
    /// and all.
    private func handBack(
        _ record: ToastLaterRecord, _ entry: ScheduleStore.Entry, commands: ScheduleStore
    ) throws(CommandFailure) {
        var options = entry.request.options
        options.onAction = entry.request.onAction
        if let reason = AgentClient.bypassReason(options, environment: environment) {
            keepAgain(record, nil, commands: commands)
            throw .unavailable("its --on-action commands need the toast agent, which cannot be used: \(reason)")
        }
        // Out of the folder before the agent has it: Later chosen again at once keeps it anew, and that is not undone.
        do {
            try commands.remove(record.id)
        } catch {
            keepAgain(record, nil, commands: commands)
            throw CommandFailure(.ioError, "its --on-action commands cannot be taken: \(error)")
        }
        var request = entry.request
        request.options.id = record.id
        // A new notification, shown now because the person asked for it, whatever Do Not Disturb says; answered
        // at once (it may wait behind another toast of the agent's).
        request.options.replaceID = nil
        request.options.doNotDisturb = .show
        request.options.soundPlayed = false
        request.awaitShown = false
        let presented: AgentPresented
        do throws(AgentClient.CallError) {
            let (reply, connection) = try AgentClient.callBlocking(
                AgentInterface.call("Present", [request.dictionary]), timeout: AgentClient.presentTimeout,
                environment: environment.variables)
            connection.close()
            do {
                presented = try AgentPresented(reply: reply)
            } catch {
                throw .failed(error)
            }
        } catch {
            keepAgain(record, entry, commands: commands)
            switch error {
            case .failed(let failure), .noAnswer(let failure): throw failure
            case .unreachable(let reason):
                throw .unavailable("the toast agent cannot be reached: \(reason ?? "no session bus")")
            }
        }
        for warning in presented.warnings { Output.error("warning: \(warning)") }
        if json {
            Output.json([
                "event": .string("presented"), "id": .string(record.id),
                "server_id": presented.serverID.map { .integer(Int64($0)) } ?? .null,
            ])
        } else {
            let serverID = presented.serverID.map(String.init) ?? ""
            Output.line("\(TerminalText.escape(record.id))\t\(serverID)\t\(TerminalText.escape(record.title))")
        }
    }

    /// Puts `record` back into the Later store (in front, unless it was kept anew meanwhile) and, when it was taken
    /// out, `entry` back with its commands.
    private func keepAgain(_ record: ToastLaterRecord, _ entry: ScheduleStore.Entry?, commands: ScheduleStore) {
        do {
            if let entry { try commands.put(entry) }
        } catch {
            let id = TerminalText.escape(record.id)
            Output.error("warning: the toast \"\(id)\" loses its --on-action commands: \(error)")
        }
        let restored = Result { () throws(LaterStoreProblem) in
            try store.update { records in
                if !records.contains(where: { $0.id == record.id }) { records.insert(record, at: 0) }
            }
        }
        if case .failure(let problem) = restored { Output.error("warning: \(problem)") }
    }
}
