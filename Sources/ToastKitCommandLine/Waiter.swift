import Glibc
import Synchronization
import ToastKit
import ToastKitAgent

/// The tool's own limits for a waited toast, as a plain state machine over "now" (time since the wait began):
/// when the wait must end whatever the server does.
///
/// - **The duration holds.** A toast with a duration ends at most ``slack`` after its time has run, even when the
///   server is gone, hung, or slower than the duration (the center stops a toast's clock while no server shows
///   it; this clock does not). It stops only while the screen is locked (the center's pause), while the center
///   holds the toast for Do Not Disturb, and once an action is invoked (the action decides the outcome).
/// - **A server that leaves** is waited for at most ``serverAbsence``: the toast comes back on a new server (the
///   center shows it again), or the wait ends with exit 69.
struct WaitLimits: Sendable, Equatable {
    /// How long the tool waits for a new notification server after the current one left the bus.
    static let serverAbsence: Duration = .seconds(10)
    /// How much later than the center's own expiry the tool's limit falls, so that with a working server the center
    /// ends the toast itself.
    static let slack: Duration = .milliseconds(100)

    /// Why the wait must end now.
    enum Reason: Sendable, Equatable {
        /// The toast's time is up.
        case expired
        /// The server left and no other came within ``WaitLimits/serverAbsence``.
        case serverGone
    }

    /// The toast's time left (while not running), or nil for an indefinite toast or once an action was invoked.
    private var remaining: Duration?
    /// When the toast's time started running, or nil while paused.
    private var runningSince: Duration?
    /// When the server left, while no server shows the toast.
    private var serverGoneSince: Duration?
    /// What stops the toast's time now.
    private var stops: Set<Stop> = []

    /// What stops a toast's time.
    enum Stop: Sendable, Hashable {
        /// The screen is locked.
        case screenLocked
        /// The center holds the toast until Do Not Disturb ends.
        case heldForDoNotDisturb
    }

    /// Limits for a toast of `duration` (nil: indefinite) whose time starts at `now`.
    init(duration: Duration?, now: Duration) {
        remaining = duration.map { $0 + Self.slack }
        runningSince = now
    }

    /// The screen was locked: the toast's time stops.
    mutating func pause(now: Duration) {
        stop(.screenLocked, now: now)
    }

    /// The screen was unlocked.
    mutating func resume(now: Duration) {
        go(.screenLocked, now: now)
    }

    /// `stop` begins: the toast's time stops until every stop has ended.
    mutating func stop(_ stop: Stop, now: Duration) {
        stops.insert(stop)
        guard let since = runningSince else { return }
        if let remaining { self.remaining = max(.zero, remaining - (now - since)) }
        runningSince = nil
    }

    /// `stop` ended: the toast's time runs again unless something else stops it.
    mutating func go(_ stop: Stop, now: Duration) {
        stops.remove(stop)
        if stops.isEmpty, runningSince == nil { runningSince = now }
    }

    /// The server left the bus (or failed in a way a new server can fix).
    mutating func serverLeft(now: Duration) {
        if serverGoneSince == nil { serverGoneSince = now }
    }

    /// A server appeared and was asked to show the toast again.
    mutating func serverReturned() {
        serverGoneSince = nil
    }

    /// A reply prompt opened (`--reply` on a server without a reply field): the toast's time runs on, with at least
    /// ``ToastReplyPrompt/allowance`` left, as the center's does; when it is up, the center closes the prompt.
    mutating func replyAsked(now: Duration) {
        guard let remaining else { return }
        let left = runningSince.map { max(.zero, remaining - (now - $0)) } ?? remaining
        self.remaining = max(left, ToastReplyPrompt.allowance + Self.slack)
        if runningSince != nil { runningSince = now }
    }

    /// An action was invoked: its outcome is fixed, the toast's time no longer matters.
    mutating func actionInvoked() {
        remaining = nil
    }

    /// The next moment the wait must end, and why; nil when nothing limits it.
    var next: (at: Duration, reason: Reason)? {
        var candidates: [(at: Duration, reason: Reason)] = []
        if let remaining, let runningSince { candidates.append((runningSince + remaining, .expired)) }
        if let serverGoneSince { candidates.append((serverGoneSince + Self.serverAbsence, .serverGone)) }
        return candidates.min { $0.at < $1.at }
    }

    /// Why the wait must end at `now`, if it must.
    func due(at now: Duration) -> Reason? {
        guard let next, next.at <= now else { return nil }
        return next.reason
    }
}

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

        var limits = WaitLimits(duration: duration, now: now())
        var armed: (limits: WaitLimits, serial: UInt64)?
        var serial: UInt64 = 0
        /// Starts a timer for the limits' next deadline, if it changed.
        func arm() {
            guard armed?.limits != limits || armed == nil else { return }
            timer?.cancel()
            serial &+= 1
            armed = (limits, serial)
            guard let next = limits.next else { return }
            let fire = serial
            timer = Task {
                guard (try? await clock.sleep(until: origin + next.at)) != nil else { return }
                continuation.yield(.timer(fire))
            }
        }
        arm()

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
            await Self.wait(until: deadline) { await presenter.flush() }
            guard let acceptance else { return nil }
            let first = await Self.wait(until: deadline) { await acceptance.value }
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
                center.dismiss(id: id)
                _ = await settle()
                emit("closed", ["reason": .string("interrupted"), "signal": .string(SignalWatcher.name(of: signal))])
                return ending(signal == SIGINT ? .interrupted : .terminated)
            case .timer(let fired):
                guard fired == serial, let reason = limits.due(at: now()) else { continue }
                center.dismiss(id: id)
                _ = await settle()
                switch reason {
                case .expired:
                    emit("closed", ["reason": .string("expired")])
                    return ending(.expired)
                case .serverGone:
                    let message =
                        "the notification server left the bus and no other server started within "
                        + "\(WaitLimits.serverAbsence.components.seconds) s"
                    emit("failed", ["reason": .string(message)])
                    Output.error(message)
                    return ending(.unavailable)
                }
            case .report(let report):
                switch report {
                case .failed(_, _, recoverable: true): limits.serverLeft(now: now())
                case .reshowRequested: limits.serverReturned()
                case .pauseRequested: limits.pause(now: now())
                case .resumeRequested: limits.resume(now: now())
                default: break
                }
                arm()
            case .event(.replyAsked(let toast, _)) where toast == id:
                limits.replyAsked(now: now())
                arm()
            case .event(.replyCancelled(let toast, let actionID)) where toast == id:
                emit("reply_cancelled", ["action": .string(actionID)])
            case .event(.replied(let toast, _, let text)) where toast == id:
                reply = text
            case .event(.actionInvoked(let toast, let actionID, let token)) where toast == id:
                limits.actionInvoked()
                arm()
                Self.tellAction(actionID, token: token, reply: reply, json: json, emit: emit)
            case .event(.suppressed(let toast, let suppression)) where toast == id:
                Self.tell(suppression, emit: emit)
                if suppression.kind == .held {
                    limits.stop(.heldForDoNotDisturb, now: now())
                    arm()
                    onHeld()
                }
            case .event(.shown(let toast)) where toast == id:
                limits.go(.heldForDoNotDisturb, now: now())
                arm()
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

    /// Runs `work` and returns its result, or nil once `deadline` has passed (the work then goes on unobserved;
    /// the command is about to exit).
    static func wait<T: Sendable>(
        until deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async -> T
    ) async -> T? {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let once = FirstAnswer(continuation)
            Task { once.resume(returning: await work()) }
            Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                once.resume(returning: nil)
            }
        }
    }
}

/// A continuation resumed by whichever answer comes first.
private final class FirstAnswer<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T?, Never>?>

    init(_ continuation: CheckedContinuation<T?, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(returning value: T?) {
        continuation.withLock { $0.take() }?.resume(returning: value)
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
