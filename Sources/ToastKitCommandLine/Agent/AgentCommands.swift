import DBus
import FoundationEssentials
import Glibc
import Synchronization
import ToastKit
import ToastKitAgent

extension AgentPresented {
    /// `Present`'s answer read, or the failure of an agent that answered something else.
    init(reply: DBusMessage) throws(CommandFailure) {
        do throws(DBusError) {
            try self.init(arguments: reply)
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

    /// What only the agent can do, which a toast asks for (nil: nothing): `--on-action`, a time (`--in`, `--at`),
    /// a snooze (`-A later=10m`).
    private var needsAgent: String? {
        if !options.onAction.isEmpty { return "--on-action" }
        if options.due != nil { return "a scheduled toast (--in, --at)" }
        if options.snooze != nil { return "a snooze (-A later=DURATION)" }
        return nil
    }

    private func noAgent(_ reason: String) -> CommandFailure {
        if !options.onAction.isEmpty { return Self.noAgentForCommands(reason) }
        return .unavailable("\(needsAgent ?? "this toast") needs the toast agent, which cannot be used: \(reason)")
    }

    /// The command for the direct path with the message already read (standard input is read once).
    private func direct(text: String?, replacing serverID: UInt32? = nil) -> SendCommand {
        var options = self.options
        options.message = text.map(MessageSource.text)
        if let serverID { options.replaceID = serverID }
        return SendCommand(options: options, environment: environment)
    }

    /// What a failed call to the agent means for `send`: a failure to report, or the direct path (with the
    /// warning, when there is a reason to give).
    private func fallBack(_ error: AgentClient.CallError) throws(CommandFailure) {
        switch error {
        case .failed(let failure), .noAnswer(let failure): throw failure
        case .unreachable(let reason):
            if needsAgent != nil { throw noAgent(reason ?? "the session bus cannot be reached") }
            if let reason {
                Output.error("warning: \(reason); showing the toast directly (it ends when the server says)")
            }
        }
    }

    /// `send` without waiting: through the agent when it may be used (see ``AgentClient``), else directly.
    /// `keepingAppTied`: a toast the server would time, sent through the agent all the same, because GNOME 46+ would
    /// close it as this process exits (``GNOMEAppTie``).
    func runWithoutWaitingPreferringAgent(keepingAppTied: Bool = false) throws(CommandFailure) -> ExitCode {
        // Only called when the portal is not used (``ToastKitCommand``).
        if let reason = AgentClient.bypassReason(
            options, environment: environment, portalChecked: true, serverTimed: !keepingAppTied)
        {
            if needsAgent != nil { throw noAgent(reason) }
            return try runWithoutWaiting()
        }
        // The agent keeps the toast in the runtime folder: a refused `/tmp/toastkit-<uid>` is told here too (once).
        _ = RuntimeFolder.path(environment: environment.variables)
        let text = try messageText()
        var request = try AgentRequest(sending: options, text: text, environment: environment.variables)
        // An id of its own, so that a call made again (its agent exited as it came) replaces, never doubles.
        if request.options.id == nil { request.options.id = "toastkit-\(UUID().uuidString.lowercased())" }
        let reply: DBusMessage
        // A toast this process showed itself (a hand-over that could not be written): never shown twice.
        var shownHere: UInt32?
        do throws(AgentClient.CallError) {
            var present = AgentInterface.call("Present", [request.dictionary])
            var first: (BlockingDBusConnection, Result<DBusMessage, DBusError>)?
            if mayHandOver {
                // Asked without starting an agent: when none runs, this process shows the toast itself and hands
                // it over to the agent it starts (``handOver(_:on:)``), rather than wait for the agent's start.
                var quiet = present
                quiet.autoStart = false
                let (connection, replies) = try AgentClient.connect(calling: quiet)
                if case .failure(let error) = replies[0], error.name == DBusError.Name.nameHasNoOwner {
                    let handedOver: HandOverResult
                    do throws(CommandFailure) {
                        handedOver = try handOver(request, on: connection)
                    } catch {
                        throw .failed(error)
                    }
                    switch handedOver {
                    case .done(let code):
                        connection.close()
                        return code
                    case .notHere:
                        first = (connection, connection.call([present], timeout: AgentClient.presentTimeout)[0])
                    case .shownNotHandedOver(let serverID):
                        // Shown: the agent takes it as a replacement of that notification.
                        shownHere = serverID
                        request.options.replaceID = serverID
                        request.options.soundPlayed = true
                        present = AgentInterface.call("Present", [request.dictionary])
                        first = (connection, connection.call([present], timeout: AgentClient.presentTimeout)[0])
                    }
                } else {
                    first = (connection, replies[0])
                }
            }
            let connection: BlockingDBusConnection
            (reply, connection) = try AgentClient.callBlocking(
                present, timeout: AgentClient.presentTimeout, environment: environment.variables, first: first)
            connection.close()
        } catch {
            try fallBack(error)
            return try direct(text: text, replacing: shownHere).runWithoutWaiting(agentTried: true)
        }
        let presented = try AgentPresented(reply: reply)
        for warning in presented.warnings { Self.warn(warning, id: presented.id, json: options.json) }
        if let due = presented.scheduled {
            if options.json {
                Output.json(["event": .string("scheduled"), "id": .string(presented.id), "due": .number(due)])
            }
            return .success
        }
        // As on the other paths: what Do Not Disturb did comes first, then the server's id.
        if let suppression = presented.suppression {
            tell(suppression, id: presented.id)
            if presented.ended == "suppressed" { return .suppressed }
        }
        if let serverID = presented.serverID { announce(id: presented.id, serverID: serverID) }
        return .success
    }

    /// `send --wait` (or with actions) through the agent: `Present`, then `Wait` until the toast ends — the same
    /// output, exit codes and limits as the direct path. nil: use the direct path (the agent could not be reached).
    func runThroughAgent() async throws(CommandFailure) -> ExitCode? {
        if let reason = AgentClient.bypassReason(options, environment: environment) {
            if needsAgent != nil { throw noAgent(reason) }
            return nil
        }
        _ = RuntimeFolder.path(environment: environment.variables)
        let text = try messageText()
        var request = try AgentRequest(sending: options, text: text, environment: environment.variables)
        // The id is known before the agent answers: Ctrl-C or the toast's time may come first.
        let id = options.id ?? "toastkit-\(UUID().uuidString.lowercased())"
        request.options.id = id
        let connection: DBusConnection
        do {
            connection = try await BusAccess.connect()
        } catch {
            return try await direct(text: text).runDirectly()
        }
        defer { connection.close() }
        // The toast's own duration, as the direct path waits for it: a question (actions, no -d) and a toast the
        // server times have none here (it was -d's or 4 s, and a question through the agent expired at 4.1 s).
        let duration = try? ToastOptions.modelDuration(for: options).resolved(default: .standardDefault)
        let waiting = AgentWaiting(
            id: id, json: options.json, owns: true, duration: duration, connection: connection,
            environment: environment)
        let outcome = await waiting.wait(
            presenting: AgentInterface.call("Present", [request.dictionary]),
            announce: { serverID in announce(id: id, serverID: serverID) })
        switch outcome {
        case .ended(let code): return code
        case .unreachable(let error):
            try fallBack(error)
            return try await direct(text: text).runDirectly()
        }
    }
}

/// Waits for a toast's end through the agent (`send --wait`, `wait --id`), with the direct path's limits
/// (``WaitLimits``): the toast's duration holds whatever the server does, a server that left is awaited for
/// ``WaitLimits/serverAbsence``; the agent's `Event` signals say when the server leaves or comes back and when the
/// screen is locked. SIGINT and SIGTERM close the toast for `send --wait` and only stop waiting for `wait --id`. An
/// agent that stops meanwhile is started again: it adopts the toasts it saved, and the wait goes on.
struct AgentWaiting {
    let id: String
    let json: Bool
    /// Whether this command showed the toast (`send --wait`): it then closes it on a signal or at its limits;
    /// `wait --id` only stops waiting.
    let owns: Bool
    /// The toast's duration when known (`send --wait`); nil for an indefinite toast and for `wait --id`.
    let duration: Duration?
    let connection: DBusConnection
    let environment: CommandEnvironment

    /// How long one `Wait` call may take before it is made again (a toast may stay for hours).
    static let waitCallTimeout: Duration = .seconds(3600)
    /// How many times in a row the agent may stop without answering before the wait gives up.
    static let restarts = 3

    /// How the wait ended.
    enum Ending {
        case ended(ExitCode)
        /// `Present` could not reach an agent: nothing was shown (the caller may take the direct path).
        case unreachable(AgentClient.CallError)
    }

    private enum Input: Sendable {
        case presented(Result<DBusMessage, AgentClient.CallError>)
        case answer(Result<DBusMessage, AgentClient.CallError>)
        case event(kind: AgentInterface.EventKind, id: String, details: [String: DBusValue])
        case signal(Int32)
        case timer(UInt64)
    }

    /// Waits; with `presenting`, first shows the toast with that `Present` call, calling `announce` with its server
    /// id once the server has it.
    func wait(presenting: DBusMethodCall? = nil, announce: (UInt32) -> Void = { _ in }) async -> Ending {
        let clock = ContinuousClock()
        let origin = clock.now
        func now() -> Duration { clock.now - origin }
        let (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
        // Ctrl-C from here on is handled (the toast is closed once the agent has it).
        let signals = SignalWatcher()
        var tasks: [Task<Void, Never>] = [
            Task { for await signal in signals.signals { continuation.yield(.signal(signal)) } }
        ]
        defer { for task in tasks { task.cancel() } }
        let rule = MatchRule(
            sender: AgentInterface.busName, interface: AgentInterface.interface, member: AgentInterface.event.name,
            path: AgentInterface.path)
        if let events = try? await connection.signals(matching: rule) {
            tasks.append(
                Task {
                    do {
                        for try await message in events {
                            // A kind this client does not know (a newer agent's) is passed over.
                            guard let values = try? message.arguments("ssa{sv}"),
                                let kind = values[1].stringValue.flatMap(AgentInterface.EventKind.init(rawValue:))
                            else { continue }
                            continuation.yield(
                                .event(
                                    kind: kind, id: values[0].stringValue ?? "",
                                    details: values[2].variantDictionaryValue ?? [:]))
                        }
                    } catch {}
                })
        }
        let connection = connection
        let environment = environment.variables
        @discardableResult
        func call(
            _ method: DBusMethodCall, timeout: Duration,
            _ wrap: @escaping @Sendable (Result<DBusMessage, AgentClient.CallError>) -> Input
        ) -> Task<Void, Never> {
            let task = Task {
                do throws(AgentClient.CallError) {
                    let reply = try await AgentClient.call(
                        method, on: connection, timeout: timeout, environment: environment)
                    continuation.yield(wrap(.success(reply)))
                } catch {
                    continuation.yield(wrap(.failure(error)))
                }
            }
            tasks.append(task)
            return task
        }
        let waitCall = AgentInterface.call("Wait", [.string(id)])
        var presentPending = presenting != nil
        var presentTask: Task<Void, Never>?
        if let presenting {
            presentTask = call(presenting, timeout: AgentClient.presentTimeout) { .presented($0) }
        } else {
            call(waitCall, timeout: Self.waitCallTimeout) { .answer($0) }
        }

        var machine = WaitMachine(duration: duration, now: now())

        var state = Reporter(id: id, json: json)
        // Whether the agent has announced the toast (an `Event` with its id): a `Close` it answers with false then
        // means the toast is over, not that the `Present` has not reached it yet.
        var agentKnows = false
        /// Closes the toast through the agent (`send --wait` only: `wait --id` leaves it), waiting at most
        /// ``Waiter/closeGrace``; when `Present` is still on its way the agent may not have the toast yet: then once
        /// more after it answered.
        func close() async {
            guard owns else { return }
            let closeCall = AgentInterface.call("Close", [.string(id)])
            // All of it within the one grace, however the agent behaves (stopped, hung, slow).
            let retry = presentPending && !agentKnows ? presentTask : nil
            await FirstOf.wait(
                for: {
                    let closed =
                        (try? await connection.call(closeCall, timeout: Waiter.closeGrace))
                        .flatMap { try? $0.arguments("b")[0].boolValue } ?? false
                    guard !closed, let retry else { return }
                    await retry.value
                    _ = try? await connection.call(closeCall, timeout: Waiter.closeGrace)
                }, orAfter: Waiter.closeGrace)
        }
        var failures = 0
        /// Carries out what the machine decided; the exit code when the wait is over.
        func perform(_ actions: [WaitMachine.Action]) async -> ExitCode? {
            for action in actions {
                switch action {
                case .arm(let at, let armed):
                    // an earlier timer, when it fires, is stale: the machine knows its serial
                    guard let at else { continue }
                    tasks.append(
                        Task {
                            guard (try? await clock.sleep(until: origin + at)) != nil else { return }
                            continuation.yield(.timer(armed))
                        })
                case .close: await close()
                case .replyCancelled(let action): state.emit("reply_cancelled", ["action": .string(action)])
                case .end(let end): return end.report(emit: state.emit)
                }
            }
            return nil
        }
        /// Gives `event` to the machine and carries out its answer.
        func handle(_ event: WaitMachine.Event) async -> ExitCode? {
            await perform(machine.handle(event, now: now()))
        }
        _ = await perform(machine.start())
        for await input in inputs {
            switch input {
            case .presented(.success(let reply)):
                presentPending = false
                do {
                    let presented = try AgentPresented(reply: reply)
                    for warning in presented.warnings { SendCommand.warn(warning, id: id, json: json) }
                    if let serverID = presented.serverID {
                        state.serverID = serverID
                        announce(serverID)
                    }
                } catch {
                    return .ended(state.fail(error))
                }
                call(waitCall, timeout: Self.waitCallTimeout) { .answer($0) }
            case .presented(.failure(let error)):
                presentPending = false
                switch error {
                case .unreachable: return .unreachable(error)
                case .failed(let failure), .noAnswer(let failure):
                    // As on the direct path: bad input is only an error line; a toast not shown is an event too.
                    if failure.code == .dataError {
                        Output.error(failure.message)
                        return .ended(failure.code)
                    }
                    return .ended(state.fail(failure))
                }
            case .signal(let signal):
                if let code = await handle(.signal(signal)) { return .ended(code) }
            case .timer(let fired):
                if let code = await handle(.timerFired(serial: fired)) { return .ended(code) }
            case .event(let kind, let toast, let details):
                if toast == id { agentKnows = true }
                let event: WaitMachine.Event?
                switch kind {
                case .serverLeft:
                    event = .serverLeft
                    if let reason = details["reason"]?.stringValue, toast.isEmpty || toast == id {
                        Output.error("warning: \(reason)")
                    }
                case .serverBack: event = .serverBack
                case .warning where toast == id:
                    // Later than `Present`'s answer (a sound that failed after it): said as the answer's warnings are.
                    if let reason = details["reason"]?.stringValue { SendCommand.warn(reason, id: id, json: json) }
                    event = nil
                case .suppressed where toast == id:
                    let suppression = AgentInterface.suppression(in: details)
                    if let suppression { Waiter.tell(suppression, emit: state.emit) }
                    event = suppression?.kind == .held ? .held : nil
                case .shown where toast == id:
                    if state.serverID == nil, let serverID = details["server_id"]?.uint32Value {
                        state.serverID = serverID
                        announce(serverID)
                    }
                    event = .shown
                case .paused: event = .screenLocked
                case .resumed: event = .screenUnlocked
                case .action where toast == id: event = .actionInvoked
                case .replyAsked where toast == id: event = .replyAsked(action: details["action"]?.stringValue ?? "")
                case .replyCancelled where toast == id:
                    event = .replyCancelled(action: details["action"]?.stringValue ?? "")
                default: event = nil
                }
                if let event { _ = await handle(event) }
            case .answer(.success(let reply)):
                do {
                    let outcome = try AgentOutcome(reply: reply)
                    _ = await handle(.toastEnded(byAction: outcome.name == "action"))
                    return .ended(state.report(outcome))
                } catch {
                    return .ended(
                        state.fail(CommandFailure(.software, "the toast agent answered Wait with \(error.message)")))
                }
            case .answer(.failure(.noAnswer(let failure))):
                // NoReply: the agent stopped (or the call's hour is up): ask again; a stopped agent is started
                // again and adopts the toast.
                guard failures < Self.restarts else { return .ended(state.fail(failure)) }
                failures += 1
                call(waitCall, timeout: Self.waitCallTimeout) { .answer($0) }
                continue
            case .answer(.failure(.failed(let failure))):
                if failure.code == .dataError, failures > 0 {
                    return .ended(
                        state.fail(
                            .unavailable(
                                "the toast agent stopped and toast \"\(id)\" was not saved: its outcome is lost")))
                }
                return .ended(state.fail(failure))
            case .answer(.failure(.unreachable(let reason))):
                return .ended(state.fail(.unavailable(reason ?? "cannot reach the session bus")))
            }
        }
        return .ended(.software)
    }
}

/// Prints a waited toast's events as `send --wait` does.
private struct Reporter {
    let id: String
    let json: Bool
    var serverID: UInt32?

    func fail(_ failure: CommandFailure) -> ExitCode {
        emit("failed", ["reason": .string(failure.message)])
        Output.error(failure.message)
        return failure.code
    }

    func emit(_ event: String, _ fields: KeyValuePairs<String, JSONValue>) {
        guard json else { return }
        var object: JSONObject = ["event": .string(event), "id": .string(id)]
        object["server_id"] = serverID.map { .integer(Int64($0)) } ?? .null
        for (key, value) in fields { object[key] = value }
        Output.json(object)
    }

    /// Prints the outcome and returns its exit code.
    mutating func report(_ ended: AgentOutcome) -> ExitCode {
        if serverID == nil { serverID = ended.details["server_id"]?.uint32Value }
        if case .actionInvoked(let actionID)? = ended.toastOutcome?.outcome {
            Waiter.tellAction(
                actionID, token: ended.details["activation_token"]?.stringValue,
                reply: ended.details["reply"]?.stringValue, json: json, emit: emit)
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
        let waiting = AgentWaiting(
            id: id, json: json, owns: false, duration: nil, connection: connection, environment: environment)
        switch await waiting.wait() {
        case .ended(let code): return code
        case .unreachable(let error):
            if let failure = error.failure { throw failure }
            throw .unavailable("no toast agent is running")
        }
    }
}

/// `toastkit list [--json]`: the agent's live toasts (front first, then the ones waiting), then the toasts kept
/// with Later. No agent running: only the kept ones (unless toasts wait for one: a `send`'s hand-over, a killed
/// agent's journal — the agent is started for them, ``AgentClient/StartRule/whenToastsWait``).
struct ListCommand {
    let json: Bool
    let environment: CommandEnvironment

    func run() throws(CommandFailure) -> ExitCode {
        var live: [[String: DBusValue]] = []
        do throws(AgentClient.CallError) {
            let (reply, connection) = try AgentClient.callBlocking(
                AgentInterface.call("List"), timeout: .seconds(10), environment: environment.variables,
                start: .whenToastsWait)
            connection.close()
            live = (try? reply.arguments("aa{sv}")[0].arrayValue?.compactMap(\.variantDictionaryValue)) ?? []
        } catch {
            if let failure = error.failure { throw failure }
        }
        // Scheduled toasts from the user's store (an agent of another session may keep some, or none runs now).
        let now = AgentStore.now()
        for entry in (try? ScheduleStore.open(environment: environment.variables))?.load() ?? [] {
            let title = entry.request.options.title
            if json {
                Output.json([
                    "id": .string(entry.id), "state": .string("scheduled"), "title": .string(title),
                    "status": .string((entry.request.options.status ?? .normal).rawValue),
                    "remaining": .number(max(0, entry.due - now)), "running": .bool(false), "server_id": .null,
                    "due": .number(entry.due),
                ])
            } else {
                Output.line(
                    "\(TerminalText.escape(entry.id))\tscheduled\t\(Self.when(entry.due))\t\(TerminalText.escape(title))"
                )
            }
        }
        for toast in live where toast["state"]?.stringValue != "scheduled" {
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

    /// `@17:00:00` (today) or `@2026-12-24 09:00:00`, local time.
    static func when(_ due: Double) -> String {
        var time = time_t(due)
        var now = time_t(AgentStore.now())
        var at = tm()
        var today = tm()
        localtime_r(&time, &at)
        localtime_r(&now, &today)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let clock = "\(two(at.tm_hour)):\(two(at.tm_min)):\(two(at.tm_sec))"
        if at.tm_year == today.tm_year, at.tm_yday == today.tm_yday { return "@" + clock }
        return "@\(at.tm_year + 1900)-\(two(at.tm_mon + 1))-\(two(at.tm_mday)) \(clock)"
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
                environment: environment.variables, start: .whenToastsWait)
            connection.close()
            return (try? reply.arguments("b")[0].boolValue) ?? false
        } catch {
            if let failure = error.failure { throw failure }
            return false
        }
    }
}
