// The rules of a waited toast's end, one machine for both waits — `send --wait` on the direct path (`Waiter`) and
// `send --wait` or `wait --id` through the agent (`AgentWaiting`): the toast's limits, the timer that enforces them,
// the reply prompt that is open, and how a signal, a limit or the toast's own end finishes the wait. Events in,
// actions out, the time passed in; the two shells only translate their inputs and carry the actions out.
import Glibc
import ToastKit

/// What a waiting command decides, as a pure state machine over "now" (time since the wait began).
///
/// The shells feed it what they learn — from the center's events on the direct path, from the agent's `Event`
/// signals through it — and carry out what it returns, in order: a timer to arm, the toast to close, a
/// `reply_cancelled` to print, the end of the wait. Once it returned ``Action/end(_:)``, or was told the toast
/// ended, the wait is over: a further event is a shell's mistake and traps.
struct WaitMachine: Sendable {
    /// What a shell learned.
    enum Event: Sendable, Equatable {
        /// The notification server left the bus (or failed in a way a new server can fix).
        case serverLeft
        /// A server appeared and was asked to show the toast again.
        case serverBack
        /// The screen was locked: the toast's time stops.
        case screenLocked
        /// The screen was unlocked.
        case screenUnlocked
        /// The toast is held until Do Not Disturb ends.
        case held
        /// The toast is on screen (again).
        case shown
        /// An action was invoked: its outcome is fixed.
        case actionInvoked
        /// A reply prompt opened for `action`.
        case replyAsked(action: String)
        /// The reply prompt of `action` was closed without an answer.
        case replyCancelled(action: String)
        /// SIGINT or SIGTERM arrived.
        case signal(Int32)
        /// The timer armed with `serial` fired.
        case timerFired(serial: UInt64)
        /// The toast ended on the other side (the center's `ended`, the agent's answer to `Wait`); `byAction` when an
        /// action ended it.
        case toastEnded(byAction: Bool)
    }

    /// Why the wait ends on this side, before the toast ended on its own.
    enum End: Sendable, Equatable {
        /// A signal: the command exits 130 (SIGINT) or 143 (SIGTERM).
        case interrupted(signal: Int32)
        /// The toast's time is up (``WaitLimits/slack`` after its own end should have come).
        case expired
        /// The server left and no other came within ``WaitLimits/serverAbsence``.
        case serverGone
    }

    /// What the shell carries out, in the order given.
    enum Action: Sendable, Equatable {
        /// Start a timer that brings ``Event/timerFired(serial:)`` at `at` (nil: none); earlier timers are stale.
        case arm(at: Duration?, serial: UInt64)
        /// Close the toast (the command's own: `send --wait`), waiting at most ``Waiter/closeGrace``.
        case close
        /// Print `reply_cancelled` for `action`: its prompt was closed by the wait's end.
        case replyCancelled(action: String)
        /// Print the end (``End/report(emit:)``) and exit with its code.
        case end(End)
    }

    private var limits: WaitLimits
    /// The limits the last timer was armed for, and its serial.
    private var armed: (limits: WaitLimits, serial: UInt64)?
    private var serial: UInt64 = 0
    /// The reply action whose prompt is open.
    private var prompting: String?
    private var finished = false

    /// A wait for a toast of `duration` (nil: indefinite, or not known) whose time starts at `now`. The shell arms
    /// the first timer with ``start()``.
    init(duration: Duration?, now: Duration) {
        limits = WaitLimits(duration: duration, now: now)
    }

    /// The first timer.
    mutating func start() -> [Action] {
        precondition(armed == nil, "the wait started twice")
        return arm()
    }

    /// Takes `event`, learned at `now`, and returns what to do.
    mutating func handle(_ event: Event, now: Duration) -> [Action] {
        precondition(!finished, "an event (\(event)) after the wait ended")
        switch event {
        case .serverLeft: limits.serverLeft(now: now)
        case .serverBack: limits.serverReturned()
        case .screenLocked: limits.pause(now: now)
        case .screenUnlocked: limits.resume(now: now)
        case .held: limits.stop(.heldForDoNotDisturb, now: now)
        case .shown: limits.go(.heldForDoNotDisturb, now: now)
        case .actionInvoked:
            prompting = nil
            limits.actionInvoked()
        case .replyAsked(let action):
            prompting = action
            limits.replyAsked(now: now)
        case .replyCancelled(let action):
            prompting = nil
            return [.replyCancelled(action: action)] + arm()
        case .signal(let signal):
            return finish(.interrupted(signal: signal))
        case .timerFired(let fired):
            guard fired == serial, let reason = limits.due(at: now) else { return [] }
            return finish(reason == .expired ? .expired : .serverGone)
        case .toastEnded(let byAction):
            finished = true
            return byAction ? [] : closePrompt()
        }
        return arm()
    }

    /// A new timer when the limits changed since the last one.
    private mutating func arm() -> [Action] {
        if let armed, armed.limits == limits { return [] }
        serial &+= 1
        armed = (limits, serial)
        return [.arm(at: limits.next?.at, serial: serial)]
    }

    /// The wait ends on this side: the toast is closed, then an open prompt is said to be closed, then the end.
    private mutating func finish(_ end: End) -> [Action] {
        finished = true
        return [.close] + closePrompt() + [.end(end)]
    }

    private mutating func closePrompt() -> [Action] {
        guard let action = prompting else { return [] }
        prompting = nil
        return [.replyCancelled(action: action)]
    }
}

extension WaitMachine.End {
    /// Prints the end as both paths do (the `closed` or `failed` event, and the error line for a failure) and
    /// returns the exit code.
    func report(emit: (String, KeyValuePairs<String, JSONValue>) -> Void) -> ExitCode {
        switch self {
        case .interrupted(let signal):
            emit("closed", ["reason": .string("interrupted"), "signal": .string(SignalWatcher.name(of: signal))])
            return signal == SIGINT ? .interrupted : .terminated
        case .expired:
            emit("closed", ["reason": .string("expired")])
            return .expired
        case .serverGone:
            let message =
                "the notification server left the bus and no other server started within "
                + "\(WaitLimits.serverAbsence.components.seconds) s"
            emit("failed", ["reason": .string(message)])
            Output.error(message)
            return .unavailable
        }
    }
}

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
