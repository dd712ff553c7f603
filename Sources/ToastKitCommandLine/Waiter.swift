import Glibc
import Synchronization
import ToastKit
import ToastKitAgent

/// Stays with a sent toast until it ends (`--wait`), printing the invoked action and turning the outcome into the
/// exit code. Every wait has an end: the toast's own duration (``WaitLimits``), ``WaitLimits/serverAbsence`` after
/// the server left, or a signal — SIGINT or SIGTERM close the toast on the server (waiting at most ``closeGrace``
/// for the server to confirm) before the command exits, also while the first `Notify` is unanswered.
struct Waiter {
    let id: String
    let json: Bool
    let center: ToastCenter
    let presenter: ObservingPresenter
    /// The toast's duration (nil: indefinite).
    let duration: Duration?
    /// The ids of the actions that show a confirmation (it stays after the toast's end, until the center closes it).
    let confirmingActions: Set<String>
    /// Called once, when the server (or the portal) has accepted the toast, with its id there, before anything else
    /// is printed about it.
    let onAccepted: (ServiceID) -> Void
    /// Whether the toast goes through the notification portal (its JSON events carry `portal_id`, not `server_id`).
    var throughPortal = false
    /// Called when the center holds the toast for Do Not Disturb (perhaps for hours: what waits for its acceptance
    /// lets go of what it holds meanwhile).
    var onHeld: () -> Void = {}

    /// How long the command waits, after the toast's end or a signal, for the server to confirm the close.
    static let closeGrace: Duration = .seconds(1)

    /// How the wait ended.
    struct Ending: Sendable {
        /// The exit code.
        var code: ExitCode
        /// The service's id for the toast, if it accepted it.
        var serviceID: ServiceID?
    }

    private enum Input: Sendable {
        case event(ToastEvent)
        case signal(Int32)
        case report(ToastPresenterReport)
        case accepted(Result<ServiceID, PresentationError>)
        case timer(UInt64)
    }

    /// Waits for the end of the toast, which the center has been asked to present.
    ///
    /// - Parameters:
    ///   - events: The center's events, subscribed to before the toast was presented.
    ///   - signals: SIGINT and SIGTERM as they arrive.
    ///   - acceptance: Awaits the server's answer to the toast's first `Notify`
    ///     (``DesktopNotificationPresenter/accepted(_:)``); started when the center hands the toast to the presenter
    ///     (at once, or when Do Not Disturb ends).
    func wait(
        events: AsyncStream<ToastEvent>,
        signals: AsyncStream<Int32>,
        acceptance accept: @escaping @Sendable () async -> Result<ServiceID, PresentationError>
    ) async -> Ending {
        let clock = ContinuousClock()
        let origin = clock.now
        func now() -> Duration { clock.now - origin }

        let (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
        let reports = presenter.reports
        let forwarders: [Task<Void, Never>] = [
            Task { for await event in events { continuation.yield(.event(event)) } },
            Task { for await signal in signals { continuation.yield(.signal(signal)) } },
            Task { for await report in reports { continuation.yield(.report(report)) } },
        ]
        var timer: Task<Void, Never>?
        /// The wait for the server's answer, once the toast went to the presenter.
        var acceptance: Task<Result<ServiceID, PresentationError>, Never>?
        defer {
            for forwarder in forwarders { forwarder.cancel() }
            timer?.cancel()
            acceptance?.cancel()
        }

        var machine = WaitMachine(duration: duration, now: now())

        var serviceID: ServiceID?
        func accepted(_ id: ServiceID) {
            guard serviceID == nil else { return }
            serviceID = id
            onAccepted(id)
        }
        /// Waits (at most ``closeGrace``) for the server to answer what the center queued — the toast's close, or
        /// its first Notify — and takes the server's id if it came meanwhile.
        func settle() async -> Result<ServiceID, PresentationError>? {
            let deadline = clock.now + Self.closeGrace
            let presenter = self.presenter
            await FirstOf.value(until: deadline) { await presenter.flush() }
            guard let acceptance else { return nil }
            let first = await FirstOf.value(until: deadline) { await acceptance.value }
            if case .success(let id)? = first { accepted(id) }
            return first
        }
        func emit(_ event: String, _ fields: KeyValuePairs<String, JSONValue> = [:]) {
            guard json else { return }
            var object: JSONObject = ["event": .string(event), "id": .string(id)]
            let key = throughPortal ? "portal_id" : "server_id"
            object[key] = serviceID?.json ?? .null
            for (key, value) in fields { object[key] = value }
            Output.json(object)
        }
        func ending(_ code: ExitCode) -> Ending { Ending(code: code, serviceID: serviceID) }
        /// Carries out what the machine decided; the exit code when the wait is over.
        func perform(_ actions: [WaitMachine.Action]) async -> ExitCode? {
            for action in actions {
                switch action {
                case .arm(let at, let armed):
                    timer?.cancel()
                    guard let at else { continue }
                    timer = Task {
                        guard (try? await clock.sleep(until: origin + at)) != nil else { return }
                        continuation.yield(.timer(armed))
                    }
                case .close:
                    center.dismiss(id: id)
                    _ = await settle()
                case .replyCancelled(let action):
                    emit("reply_cancelled", ["action": .string(action)])
                case .end(let end):
                    return end.report(emit: emit)
                }
            }
            return nil
        }
        /// Gives `event` to the machine and carries out its answer.
        func handle(_ event: WaitMachine.Event) async -> ExitCode? {
            await perform(machine.handle(event, now: now()))
        }
        _ = await perform(machine.start())

        // A Later store problem that left the toast unsaved (the center keeps it in memory only, which ends with
        // this process): "deferred" would then be a lie.
        var unsaved: LaterStoreProblem?
        /// The text sent with a reply action, printed for it in place of its id.
        var reply: String?
        for await input in inputs {
            switch input {
            case .accepted(.success(let id)):
                accepted(id)
            case .accepted(.failure(let error)):
                // Closed before the server answered: the toast's own end (already on its way) says why.
                if error.kind == .notPresented { continue }
                // No server, a refusal, bad data: nothing will show the toast.
                let failure = BusAccess.failure(error)
                emit("failed", ["reason": .string(failure.message)])
                Output.error(failure.message)
                return ending(failure.code)
            case .signal(let signal):
                if let code = await handle(.signal(signal)) { return ending(code) }
            case .timer(let fired):
                if let code = await handle(.timerFired(serial: fired)) { return ending(code) }
            case .report(let report):
                let event: WaitMachine.Event
                switch report {
                case .failed(_, _, recoverable: true): event = .serverLeft
                case .reshowRequested: event = .serverBack
                case .pauseRequested: event = .screenLocked
                case .resumeRequested: event = .screenUnlocked
                default: continue
                }
                _ = await handle(event)
            case .event(.replyAsked(let toast, let actionID)) where toast == id:
                _ = await handle(.replyAsked(action: actionID))
            case .event(.replyCancelled(let toast, let actionID)) where toast == id:
                _ = await handle(.replyCancelled(action: actionID))
            case .event(.replied(let toast, _, let text)) where toast == id:
                reply = text
            case .event(.actionInvoked(let toast, let actionID, let token)) where toast == id:
                _ = await handle(.actionInvoked)
                Self.tellAction(actionID, token: token, reply: reply, json: json, emit: emit)
            case .event(.suppressed(let toast, let suppression)) where toast == id:
                Self.tell(suppression, emit: emit)
                if suppression.kind == .held {
                    _ = await handle(.held)
                    onHeld()
                }
            case .event(.shown(let toast)) where toast == id:
                _ = await handle(.shown)
                if acceptance == nil {
                    let started = Task { await accept() }
                    acceptance = started
                    Task { _ = continuation.yield(.accepted(await started.value)) }
                }
            case .event(.presenterFailed(let toast, let reason)) where toast == nil || toast == id:
                Output.error("warning: \(reason)")
            case .event(.laterStoreProblem(let problem)):
                Self.note(problem, unsaved: &unsaved)
            case .event(.ended(let toast, let outcome)) where toast == id:
                var byAction = false
                if case .actionInvoked = outcome { byAction = true }
                _ = await handle(.toastEnded(byAction: byAction))
                if case .actionInvoked(let actionID) = outcome, confirmingActions.contains(actionID) {
                    await presenter.waitForClose(of: id, limit: .seconds(5))
                }
                let first = await settle()
                if outcome == .deferred, let unsaved {
                    let reason = "the toast was not kept for later: \(unsaved)"
                    emit("failed", ["reason": .string(reason)])
                    Output.error(reason)
                    return ending(.ioError)
                }
                if case .failed(.presenter(_)) = outcome, case .failure(let error)? = first, error.kind != .notPresented
                {
                    // The server's answer to Notify says best what went wrong (bad data is 65, not 69).
                    let failure = BusAccess.failure(error)
                    emit("failed", ["reason": .string(failure.message)])
                    Output.error(failure.message)
                    return ending(failure.code)
                }
                return ending(finish(outcome, emit: emit))
            default:
                break
            }
        }
        return ending(.software)
    }

    private func finish(
        _ outcome: ToastOutcome, emit: (String, KeyValuePairs<String, JSONValue>) -> Void
    ) -> ExitCode {
        Self.finish(outcome, unexplainedClose: presenter.unexplainedClose(of: id), emit: emit)
    }

    /// Prints the end of a toast (its JSON event, and its error line for a failure) and returns the exit code: the
    /// one place `send --wait` and `wait --id` (through the agent) turn an outcome into what the script sees.
    ///
    /// - Parameter unexplainedClose: The server's words when it closed the toast for a reason that is not the
    ///   person's (the model counts that as a dismissal).
    static func finish(
        _ outcome: ToastOutcome, unexplainedClose: String?, emit: (String, KeyValuePairs<String, JSONValue>) -> Void
    ) -> ExitCode {
        switch outcome {
        case .actionInvoked:
            return .success
        case .dismissed:
            // The model counts every close it cannot explain as a dismissal; the server said it was not the person.
            if let detail = unexplainedClose {
                emit("closed", ["reason": .string("server"), "detail": .string(detail)])
                Output.error(detail)
                return .closed
            }
            emit("closed", ["reason": .string("dismissed")])
            return .dismissed
        case .expired:
            emit("closed", ["reason": .string("expired")])
            return .expired
        case .closedByApp, .replaced:
            emit("closed", ["reason": .string(outcome == .replaced ? "replaced" : "closed")])
            return .closed
        case .deferred:
            emit("deferred", [:])
            return .deferred
        case .suppressed:
            // The `suppressed` event (kind `dropped`) came first and said why.
            return .suppressed
        case .failed(let failure):
            let reason: String
            let code: ExitCode
            switch failure {
            case .invalid(let error):
                reason = SendCommand.describe(error)
                code = .dataError
            case .presenter(let text):
                reason = text
                code = .unavailable
            }
            emit("failed", ["reason": .string(reason)])
            Output.error(reason)
            return code
        }
    }

    /// A Later store problem as a waiting command takes it: one that left a toast unsaved (in this process's memory
    /// only) is kept in `unsaved`, for the toast's end to say so; another (a file set aside) is a warning now.
    static func note(_ problem: LaterStoreProblem, unsaved: inout LaterStoreProblem?) {
        if problem.kind == .unwritable || problem.setAsideAt == nil {
            unsaved = problem
        } else {
            Output.error("warning: \(problem)")
        }
    }

    /// Prints an invoked action: its id (a reply action's text in its place) on a line of its own, or the `action`
    /// JSON event (with `reply` for a reply action) — the one place both paths, direct and through the agent, do it.
    static func tellAction(
        _ actionID: String, token: String?, reply: String?, json: Bool,
        emit: (String, KeyValuePairs<String, JSONValue>) -> Void
    ) {
        if json {
            if let reply {
                emit(
                    "action",
                    ["action": .string(actionID), "activation_token": .optional(token), "reply": .string(reply)])
            } else {
                emit("action", ["action": .string(actionID), "activation_token": .optional(token)])
            }
        } else {
            Output.line(TerminalText.escape(reply ?? actionID))
        }
    }

    /// Prints a ``ToastEvent/suppressed(id:suppression:)``: the `suppressed` JSON event (with `--json`) and a note on
    /// standard error, so a script learns that the person has not seen the toast (yet).
    static func tell(_ suppression: ToastSuppression, emit: (String, KeyValuePairs<String, JSONValue>) -> Void) {
        emit(
            "suppressed",
            [
                "how": .string(suppression.kind.wireName), "source": .string(suppression.source),
                "effect": .optional(suppression.serverEffect),
            ])
        Output.error("note: \(suppression.line)")
    }
}

/// The id the service gave a toast: the notification server's number, or the notification portal's string.
enum ServiceID: Sendable, Equatable {
    /// `Notify`'s answer.
    case server(UInt32)
    /// The id the portal was given in `AddNotification`.
    case portal(String)

    /// The server's number, for the id store (the portal has none).
    var serverID: UInt32? {
        if case .server(let id) = self { return id }
        return nil
    }

    /// The id as a JSON value (`server_id` is a number, `portal_id` a string).
    var json: JSONValue {
        switch self {
        case .server(let id): .integer(Int64(id))
        case .portal(let id): .string(id)
        }
    }

    /// The id as `-p` prints it.
    var text: String {
        switch self {
        case .server(let id): String(id)
        case .portal(let id): id
        }
    }
}

extension ToastSuppression {
    /// The line `toastkit` prints on standard error for it (without `--json` too).
    var line: String {
        let state = "Do Not Disturb is on (\(source))"
        switch kind {
        case .held: return "\(state): the toast waits until it ends"
        case .dropped: return "\(state): the toast was dropped (--dnd drop)"
        case .sentAnyway:
            return "\(state): the toast was sent to the server anyway" + (serverEffect.map { "; \($0)" } ?? "")
        }
    }
}
