import DBus
import Glibc
import ToastKit

/// What `Present` answered.
struct AgentPresented: Sendable, Equatable {
    var id: String
    /// The server's id; nil while the toast waits behind the front toast (`queued`) or once it has ended.
    var serverID: UInt32?
    var warnings: [String]

    init(reply: DBusMessage) throws(CommandFailure) {
        do throws(DBusError) {
            let values = try reply.arguments("sa{sv}")
            let shown = values[1].variantDictionaryValue ?? [:]
            id = values[0].stringValue ?? ""
            serverID = shown["server_id"]?.uint32Value
            warnings = shown["warnings"]?.stringsValue ?? []
        } catch {
            throw CommandFailure(.software, "the toast agent answered Present with \(error.message)")
        }
    }
}

extension SendCommand {
    /// The failure for `--on-action` when the agent cannot be used: its commands have no one to run them.
    private static func noAgentForCommands(_ reason: String) -> CommandFailure {
        .unavailable("--on-action needs the toast agent, which cannot be used: \(reason)")
    }

    /// The command for the direct path with the message already read (standard input is read once).
    private func direct(text: String?) -> SendCommand {
        var options = self.options
        options.message = text.map(MessageSource.text)
        return SendCommand(options: options, environment: environment)
    }

    /// What a failed call to the agent means for `send`: a failure to report, or the direct path (with the
    /// warning, when there is a reason to give).
    private func fallBack(_ error: AgentClient.CallError) throws(CommandFailure) {
        switch error {
        case .failed(let failure): throw failure
        case .unreachable(let reason):
            if !options.onAction.isEmpty {
                throw Self.noAgentForCommands(reason ?? "the session bus cannot be reached")
            }
            if let reason {
                Output.error("warning: \(reason); showing the toast directly (it ends when the server says)")
            }
        }
    }

    /// `send` without waiting: through the agent when it may be used (see ``AgentClient``), else directly.
    func runWithoutWaitingPreferringAgent() throws(CommandFailure) -> ExitCode {
        // Only called when the portal is not used (``ToastKitCommand``).
        if let reason = AgentClient.bypassReason(options, environment: environment, portalChecked: true) {
            if !options.onAction.isEmpty { throw Self.noAgentForCommands(reason) }
            return try runWithoutWaiting()
        }
        let text = try messageText()
        let request = try AgentRequest(sending: options, text: text)
        let reply: DBusMessage
        do throws(AgentClient.CallError) {
            let connection: BlockingDBusConnection
            (reply, connection) = try AgentClient.callBlocking(
                AgentInterface.call("Present", [request.dictionary]), timeout: AgentClient.presentTimeout,
                environment: environment.variables)
            connection.close()
        } catch {
            try fallBack(error)
            return try direct(text: text).runWithoutWaiting()
        }
        let presented = try AgentPresented(reply: reply)
        for warning in presented.warnings { Output.error("warning: \(warning)") }
        if let serverID = presented.serverID { announce(id: presented.id, serverID: serverID) }
        return .success
    }

    /// `send --wait` (or with actions) through the agent: `Present`, then `Wait` until the toast ends — the same
    /// output and exit codes as the direct path. nil: use the direct path (the agent could not be reached).
    func runThroughAgent() async throws(CommandFailure) -> ExitCode? {
        if let reason = AgentClient.bypassReason(options, environment: environment) {
            if !options.onAction.isEmpty { throw Self.noAgentForCommands(reason) }
            return nil
        }
        let text = try messageText()
        let request = try AgentRequest(sending: options, text: text)
        var id = request.options.id ?? ""
        let connection: DBusConnection
        do {
            connection = try await BusAccess.connect()
        } catch {
            return try await direct(text: text).runDirectly()
        }
        defer { connection.close() }
        // Ctrl-C from here on closes the toast (once the agent has it).
        let signals = SignalWatcher()
        let reply: DBusMessage
        do throws(AgentClient.CallError) {
            reply = try await AgentClient.call(
                AgentInterface.call("Present", [request.dictionary]), on: connection,
                timeout: AgentClient.presentTimeout, environment: environment.variables)
        } catch {
            // As on the direct path: bad input is only an error line; a toast that could not be shown is an event.
            if case .failed(let failure) = error, options.json, failure.code != .dataError {
                Output.json([
                    "event": .string("failed"), "id": .string(id), "server_id": .null,
                    "reason": .string(failure.message),
                ])
            }
            try fallBack(error)
            return try await direct(text: text).runDirectly()
        }
        let presented = try AgentPresented(reply: reply)
        id = presented.id
        for warning in presented.warnings { Output.error("warning: \(warning)") }
        if let serverID = presented.serverID { announce(id: id, serverID: serverID) }
        return await AgentWaiting(
            id: id, serverID: presented.serverID, json: options.json, closesOnSignal: true, connection: connection,
            environment: environment
        ).wait(signals: signals.signals)
    }
}

/// Waits for a toast's end through the agent (`send --wait`, `wait --id`): `Wait` calls until one answers, SIGINT
/// and SIGTERM (which close the toast for `send --wait`, and only stop waiting for `wait --id`), and an agent that
/// stops meanwhile (it is started again: it adopts the toasts it saved, and the wait goes on).
struct AgentWaiting {
    let id: String
    var serverID: UInt32?
    let json: Bool
    let closesOnSignal: Bool
    let connection: DBusConnection
    let environment: CommandEnvironment

    /// How long one `Wait` call may take before it is made again (a toast may stay for hours).
    static let waitCallTimeout: Duration = .seconds(3600)
    /// How many times in a row the agent may stop without answering before the wait gives up.
    static let restarts = 3

    private enum Input: Sendable {
        case answer(Result<DBusMessage, AgentClient.CallError>)
        case signal(Int32)
    }

    func wait(signals: AsyncStream<Int32>) async -> ExitCode {
        let (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
        let watcher = Task { for await signal in signals { continuation.yield(.signal(signal)) } }
        defer { watcher.cancel() }
        var failures = 0
        var call: Task<Void, Never>?
        func ask() {
            let connection = connection
            let id = id
            let environment = environment.variables
            call = Task {
                do throws(AgentClient.CallError) {
                    let reply = try await AgentClient.call(
                        AgentInterface.call("Wait", [.string(id)]), on: connection, timeout: Self.waitCallTimeout,
                        environment: environment)
                    continuation.yield(.answer(.success(reply)))
                } catch {
                    continuation.yield(.answer(.failure(error)))
                }
            }
        }
        defer { call?.cancel() }
        ask()
        for await input in inputs {
            switch input {
            case .signal(let signal):
                if closesOnSignal {
                    _ = try? await connection.call(
                        AgentInterface.call("Close", [.string(id)]), timeout: Waiter.closeGrace)
                }
                emit("closed", ["reason": .string("interrupted"), "signal": .string(SignalWatcher.name(of: signal))])
                return signal == SIGINT ? .interrupted : .terminated
            case .answer(.success(let reply)):
                do {
                    return report(try AgentOutcome(reply: reply))
                } catch {
                    return fail(CommandFailure(.software, "the toast agent answered Wait with \(error.message)"))
                }
            case .answer(.failure(.failed(let failure))):
                // NoReply: the agent stopped (or the call's hour is up): ask again; a stopped agent is started
                // again and adopts the toast.
                if failure.code == .unavailable, failure.message.contains("did not answer"), failures < Self.restarts {
                    failures += 1
                    ask()
                    continue
                }
                if failure.code == .dataError, failures > 0 {
                    return fail(
                        .unavailable("the toast agent stopped and toast \"\(id)\" was not saved: its outcome is lost"))
                }
                return fail(failure)
            case .answer(.failure(.unreachable(let reason))):
                return fail(.unavailable(reason ?? "cannot reach the session bus"))
            }
        }
        return .software
    }

    private func fail(_ failure: CommandFailure) -> ExitCode {
        emit("failed", ["reason": .string(failure.message)])
        Output.error(failure.message)
        return failure.code
    }

    private func emit(_ event: String, _ fields: KeyValuePairs<String, JSONValue>) {
        guard json else { return }
        var object: JSONObject = ["event": .string(event), "id": .string(id)]
        object["server_id"] = serverID.map { .integer(Int64($0)) } ?? .null
        for (key, value) in fields { object[key] = value }
        Output.json(object)
    }

    /// Prints the outcome as `send --wait` does and returns its exit code.
    private func report(_ ended: AgentOutcome) -> ExitCode {
        var waiting = self
        if waiting.serverID == nil { waiting.serverID = ended.details["server_id"]?.uint32Value }
        return waiting.print(ended)
    }

    private func print(_ ended: AgentOutcome) -> ExitCode {
        if case .actionInvoked(let actionID)? = ended.toastOutcome?.outcome {
            if json {
                emit(
                    "action",
                    [
                        "action": .string(actionID),
                        "activation_token": .optional(ended.details["activation_token"]?.stringValue),
                    ])
            } else {
                Output.line(TerminalText.escape(actionID))
            }
        }
        if let (outcome, unexplained) = ended.toastOutcome {
            return Waiter.finish(outcome, unexplainedClose: unexplained, emit: emit)
        }
        let reason = ended.details["reason"]?.stringValue ?? "the toast failed"
        if ended.name == "failed" {
            return fail(ended.details["invalid"]?.boolValue == true ? .data(reason) : .unavailable(reason))
        }
        return fail(CommandFailure(.software, "the toast agent reported an unknown outcome \"\(ended.name)\""))
    }
}

/// `toastkit wait --id ID [--json]`: re-attaches to a toast sent through the agent, prints its end as
/// `send --wait` does and exits with its code. SIGINT and SIGTERM stop waiting and leave the toast.
struct WaitCommand {
    let id: String
    let json: Bool
    let environment: CommandEnvironment

    func run() async throws(CommandFailure) -> ExitCode {
        let connection = try await BusAccess.connect()
        defer { connection.close() }
        let signals = SignalWatcher()
        return await AgentWaiting(
            id: id, serverID: nil, json: json, closesOnSignal: false, connection: connection, environment: environment
        ).wait(signals: signals.signals)
    }
}

/// `toastkit list [--json]`: the agent's live toasts (front first, then the ones waiting), then the toasts kept
/// with Later. No agent running: only the kept ones.
struct ListCommand {
    let json: Bool
    let environment: CommandEnvironment

    func run() throws(CommandFailure) -> ExitCode {
        var live: [[String: DBusValue]] = []
        do throws(AgentClient.CallError) {
            let (reply, connection) = try AgentClient.callBlocking(
                AgentInterface.call("List"), timeout: .seconds(10), environment: environment.variables,
                startIfNeeded: false)
            connection.close()
            live = (try? reply.arguments("aa{sv}")[0].arrayValue?.compactMap(\.variantDictionaryValue)) ?? []
        } catch {
            if case .failed(let failure) = error { throw failure }
        }
        for toast in live {
            let id = toast["id"]?.stringValue ?? ""
            let state = toast["state"]?.stringValue ?? ""
            let remaining = toast["remaining"]?.doubleValue
            let title = toast["title"]?.stringValue ?? ""
            if json {
                Output.json([
                    "id": .string(id), "state": .string(state), "title": .string(title),
                    "status": .optional(toast["status"]?.stringValue),
                    "remaining": remaining.map(JSONValue.number) ?? .null,
                    "running": .bool(toast["running"]?.boolValue ?? false),
                    "server_id": toast["server_id"]?.uint32Value.map { .integer(Int64($0)) } ?? .null,
                ])
            } else {
                let time = remaining.map { Self.seconds($0) } ?? "-"
                Output.line("\(TerminalText.escape(id))\t\(state)\t\(time)\t\(TerminalText.escape(title))")
            }
        }
        let records: [ToastLaterRecord]
        do {
            records = try FileLaterStore.standard(environment: environment.variables).load()
        } catch {
            throw .data(error.description)
        }
        for record in records {
            if json {
                Output.json([
                    "id": .string(record.id), "state": .string("kept"), "title": .string(record.title),
                    "status": .string(record.status.rawValue), "remaining": .null, "running": .bool(false),
                    "server_id": .null,
                ])
            } else {
                Output.line("\(TerminalText.escape(record.id))\tkept\t-\t\(TerminalText.escape(record.title))")
            }
        }
        return .success
    }

    /// `3.2s`.
    static func seconds(_ value: Double) -> String {
        let tenths = Int((max(0, value) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)s"
    }
}

extension CloseCommand {
    /// `close --id` through the agent, when one runs and has the toast. Returns false when it has not (the `--id`
    /// store of the direct path is tried next).
    func closeThroughAgent(_ id: String) throws(CommandFailure) -> Bool {
        if let value = environment.variable("TOASTKIT_NO_AGENT"), !value.isEmpty, value != "0" { return false }
        do throws(AgentClient.CallError) {
            let (reply, connection) = try AgentClient.callBlocking(
                AgentInterface.call("Close", [.string(id)]), timeout: .seconds(10),
                environment: environment.variables, startIfNeeded: false)
            connection.close()
            return (try? reply.arguments("b")[0].boolValue) ?? false
        } catch {
            if case .failed(let failure) = error { throw failure }
            return false
        }
    }
}
