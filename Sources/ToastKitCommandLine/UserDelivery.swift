// The rules of root's wait for the commands it runs as other users (`--user NAME|all`): a pure machine, events in and
// actions out, time passed in. UserChildren carries out its actions.
import FreedesktopNotifications

/// The rules of root's wait for the commands it runs as other users (`toastkit --user NAME|all …`).
///
/// Root never waits on a user's process without a bound that the user cannot stretch:
/// - a child that is stopped (the user may `SIGSTOP` a process of theirs) is killed at once and reported in one line;
/// - a command that does not wait for a person (a plain `send`, `list`, `close`, …) has ``Settings/bound`` to end,
///   then it is killed and reported;
/// - Ctrl-C (or `SIGTERM`, `SIGHUP`) is passed to every child at once, as the terminal would have; those not ended
///   after ``Settings/grace`` are killed, and root exits with 128 + the signal.
///
/// For `all`, the users' commands run at once, so one user's never holds back another's; root's exit code is the one
/// every child gave when they agree, else 0 when at least one user was reached (the toast was shown: exit 0, 2, 3, 4
/// or 5), else the last failure's.
struct UserDelivery {
    /// What bounds the wait.
    struct Settings: Equatable {
        /// The time a command that does not wait for a person has to end; nil: no bound (`send --wait`, `wait`, `run`,
        /// `progress`, `listen`, `agent`: their own bounds hold, and Ctrl-C).
        var bound: Duration?
        /// How long children have, after a signal was passed on, to close their toasts and end.
        var grace: Duration = .seconds(5)
        /// How root names the command in its lines: `--user ana` or `--user all`.
        var label: String
    }

    /// What happened.
    enum Event: Equatable {
        /// Child `index` ended, so (nil: its end was not seen, or it could not start).
        case ended(Int, ProgramEnd?)
        /// Child `index` was stopped by `signal`.
        case stopped(Int, signal: Int32)
        /// Root received `signal` (SIGINT, SIGTERM, SIGHUP).
        case interrupted(Int32)
        /// Time passed: deadlines are checked.
        case tick
    }

    /// What the shell does.
    enum Action: Equatable {
        /// Send `signal` to the children's process groups.
        case signal([Int], Int32)
        /// Kill the children's process groups (`SIGKILL`).
        case kill([Int])
        /// Print this line on root's standard error (without the `toastkit: ` prefix).
        case report(String)
        /// Every child has ended: exit with this code.
        case finish(Int32)
    }

    private enum Child: Equatable {
        case running(since: Duration)
        /// Killed by root (stopped, or over its bound): its end is not an outcome of its own.
        case killed
        case ended(ProgramEnd?)
    }

    private let settings: Settings
    private let names: [String]
    private var children: [Child]
    private var interruption: (signal: Int32, since: Duration)?
    private var finished = false

    /// A wait for one child per name in `names`, all started at `now`.
    init(names: [String], settings: Settings, now: Duration) {
        precondition(!names.isEmpty, "a wait for nobody")
        self.names = names
        self.settings = settings
        children = names.map { _ in .running(since: now) }
    }

    /// The exit codes that mean the toast reached the user: shown, then invoked, dismissed, expired, closed or
    /// deferred.
    static let reachedCodes: Set<Int32> = [0, 2, 3, 4, 5]

    /// The latest time by which ``handle(_:at:)`` must be called with ``Event/tick``; nil when nothing is timed.
    var nextDeadline: Duration? {
        if finished { return nil }
        if let interruption { return interruption.since + settings.grace }
        guard let bound = settings.bound else { return nil }
        return children.compactMap { child -> Duration? in
            if case .running(let since) = child { since + bound } else { nil }
        }.min()
    }

    /// Handles `event` at `now` and returns what to do.
    mutating func handle(_ event: Event, at now: Duration) -> [Action] {
        guard !finished else { return [] }
        var actions: [Action] = []
        switch event {
        case .ended(let index, let end):
            switch children[index] {
            case .running: children[index] = .ended(end)
            case .killed: break
            case .ended: preconditionFailure("child \(index) ended twice")
            }
        case .stopped(let index, let signal):
            if case .running = children[index] {
                children[index] = .killed
                actions.append(.kill([index]))
                actions.append(.report("\(who(index)) was stopped (\(SignalName.of(signal))); it was ended"))
            }
        case .interrupted(let signal):
            if interruption == nil {
                interruption = (signal, now)
                let running = runningIndices
                if !running.isEmpty { actions.append(.signal(running, signal)) }
            }
        case .tick:
            if let interruption, now >= interruption.since + settings.grace {
                let running = runningIndices
                for index in running { children[index] = .killed }
                if !running.isEmpty { actions.append(.kill(running)) }
            } else if interruption == nil, let bound = settings.bound {
                for index in runningIndices {
                    guard case .running(let since) = children[index], now >= since + bound else { continue }
                    children[index] = .killed
                    actions.append(.kill([index]))
                    actions.append(.report("\(who(index)) did not end within \(Self.seconds(bound)); it was ended"))
                }
            }
        }
        if runningIndices.isEmpty {
            finished = true
            actions += conclusion()
        }
        checkInvariants()
        return actions
    }

    private var runningIndices: [Int] {
        children.indices.filter { if case .running = children[$0] { true } else { false } }
    }

    private func who(_ index: Int) -> String {
        "\(settings.label): toastkit as \(names[index])"
    }

    private static func seconds(_ duration: Duration) -> String {
        "\(duration.components.seconds) s"
    }

    /// The status a child's end stands for: its own, or 69 (unavailable) when root ended it or it was not seen.
    private func status(_ child: Child) -> Int32 {
        switch child {
        case .ended(let end?): end.shellStatus
        case .ended(nil), .killed, .running: 69
        }
    }

    private func conclusion() -> [Action] {
        if let interruption { return [.finish(128 + interruption.signal)] }
        let statuses = children.map(status)
        if names.count == 1 { return [.finish(statuses[0])] }
        let reached = statuses.filter(Self.reachedCodes.contains).count
        var actions: [Action] = []
        if reached < names.count {
            actions.append(.report("\(settings.label): reached \(reached) of \(names.count) users"))
        }
        if Set(statuses).count == 1 {
            actions.append(.finish(statuses[0]))
        } else {
            actions.append(.finish(reached > 0 ? 0 : statuses.last { !Self.reachedCodes.contains($0) } ?? 69))
        }
        return actions
    }

    private func checkInvariants() {
        #if DEBUG
            assert(children.count == names.count, "one state per child")
            assert(!finished || runningIndices.isEmpty, "finished with children running")
        #endif
    }
}

/// The names of the signals root's lines mention.
enum SignalName {
    /// `SIGSTOP`, `SIGTSTP`, … or `signal N`.
    static func of(_ signal: Int32) -> String {
        switch signal {
        case 19: "SIGSTOP"
        case 20: "SIGTSTP"
        case 21: "SIGTTIN"
        case 22: "SIGTTOU"
        case 2: "SIGINT"
        case 15: "SIGTERM"
        case 1: "SIGHUP"
        default: "signal \(signal)"
        }
    }
}
