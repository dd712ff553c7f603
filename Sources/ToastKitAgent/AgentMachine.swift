// The agent's rules as a plain value: which lane a toast joins, how many may be live, when the agent may exit and
// which calls it still takes. Events in, actions out, time passed in; no I/O, no locks, no clock of its own.

/// What the agent's rules need to know of a toast to place it (the shell reads them from the request).
package struct AgentToastTraits: Sendable, Hashable {
    /// No time limit (`-d indefinite`, `-t 0`).
    package var indefinite = false
    /// It asks something: buttons (`-A`) or a tap (`--tap`).
    package var question = false
    /// Its sender waits for it (`--wait`, `-p`, `--json`).
    package var waited = false
    /// It replaces a notification by server id (`-r N`).
    package var replacesServerID = false
    /// The `desktop-entry` hint, when given.
    package var desktopEntry: String?
    /// The `-a` name, when given.
    package var appName: String?

    /// Traits with every flag off: an informing toast of the default application.
    package init(
        indefinite: Bool = false, question: Bool = false, waited: Bool = false, replacesServerID: Bool = false,
        desktopEntry: String? = nil, appName: String? = nil
    ) {
        self.indefinite = indefinite
        self.question = question
        self.waited = waited
        self.replacesServerID = replacesServerID
        self.desktopEntry = desktopEntry
        self.appName = appName
    }
}

/// Which queue a script's toast joins in the agent (docs/decisions/0006-agent-lanes-and-sessions.md):
///
/// - **An application's lane** for a toast that only informs: timed, no buttons, no tap, nobody waiting for it, no
///   `-r`. Within one application the model's rules hold — `max-visible` (3) on screen at once, the newest in front
///   with the only running timer, the rest keeping their time — so a script's burst of messages stays readable.
/// - **A lane of its own** for everything else, shown at once whatever else is on screen: an indefinite toast, a
///   question (buttons or a tap), a toast its sender waits for (`--wait`, `-p`, `--json`), a `-r N` replacement.
///   None of them ever holds another toast back, and none waits behind one.
///
/// Different applications never wait for each other: their toasts go to the server at once, as notify-send's do,
/// and the server stacks them. A live id stays in its lane when it is replaced, so it is updated in place.
package enum AgentLane: Hashable, Sendable, CustomStringConvertible {
    /// The lane of application `name` (its `-a` name, or the `desktop-entry` hint when given).
    case application(String)
    /// The lane of toast `id` alone.
    case own(String)

    /// The lane of a new toast `id` with `traits`.
    package static func of(_ traits: AgentToastTraits, id: String) -> AgentLane {
        if traits.indefinite || traits.question || traits.waited || traits.replacesServerID { return .own(id) }
        if let entry = traits.desktopEntry, !entry.isEmpty { return .application("desktop-entry:" + entry) }
        return .application(traits.appName.flatMap { $0.isEmpty ? nil : $0 } ?? "toastkit")
    }

    /// `application NAME` or `toast ID`.
    package var description: String {
        switch self {
        case .application(let name): "application \(name)"
        case .own(let id): "toast \(id)"
        }
    }
}

/// Where the agent is in its life; it only moves forward (``AgentMachine/Event/leave`` from any phase).
package enum AgentPhase: Sendable, Hashable {
    /// Adopting what a previous agent saved: calls wait (``AgentMachine/Event/awaitAdoption(waiter:)``).
    case adopting
    /// Adopted, taking up the user's schedules: calls are served; the idle countdown is not armed yet.
    case starting
    /// Serving: the idle countdown runs whenever nothing is live and no call is in hand.
    case serving
    /// The idle exit is decided: every call is refused (its sender calls the next agent).
    case stopping
    /// Stopped by a signal, a take-over or its bus: no schedule is fired, taken up, or admitted from a schedule.
    case leaving
}

/// The agent's rules (issue 18): admission of toasts into lanes with a bound, the lanes' live counts, the calls in
/// hand, and the idle exit. In the shape of swift-async-algorithms' `DebounceStateMachine`: the shell feeds it
/// events with the time they happened and carries out the actions it returns, in order.
///
/// The rules:
/// - **A call counts from the moment it arrives** (``Event/callArrived``), before any wait, so the idle exit can
///   only be decided while no call is in hand. Once it is decided, every call is refused with ``Action/refuseStopping``
///   (its sender calls the next agent): none is ever taken and then dropped.
/// - **Idle**: with no live toast and no call in hand for ``Configuration/idleTimeout``, the agent exits. Each time
///   it becomes idle a new countdown is armed (``Action/armIdle(serial:at:)``); only the newest countdown's deadline
///   counts, and any activity since makes it stale.
/// - **Admission**: a new id joins the lane its traits say (``AgentLane/of(_:id:)``) unless
///   ``Configuration/maximumLive`` toasts are live (``Action/refuseFull``); a live id stays in its lane, unless it
///   was in an application's lane and now needs one of its own (``Action/leave(lane:)``). A lane is opened for its
///   first live toast and released when its last one ends.
/// - **Scheduled toasts** (`send --in`, `--at`, a snooze) wait for their time (``Event/schedule(id:due:now:)``): they
///   count against the bound, and keep the agent from its idle exit. When one is due it is fired
///   (``Action/fire(ids:)``) and counts as a call in hand until the shell has presented it (it answers it with
///   ``Event/callAnswered(now:)``), so the exit can never come between its schedule and its toast.
package struct AgentMachine: Sendable {
    /// The bounds and times the rules use.
    package struct Configuration: Sendable, Hashable {
        /// Live toasts at most; one more is refused.
        package var maximumLive: Int
        /// How long the agent stays with nothing live and no call in hand; nil: until stopped.
        package var idleTimeout: Duration?

        /// A configuration.
        package init(maximumLive: Int = 20_000, idleTimeout: Duration? = .seconds(60)) {
            self.maximumLive = max(1, maximumLive)
            self.idleTimeout = idleTimeout
        }
    }

    /// Something that happened, with the time where it matters.
    package enum Event: Sendable, Hashable {
        /// A call waits for the saved toasts to be adopted (``Action/openCalls(_:)`` resumes `waiter`).
        case awaitAdoption(waiter: UInt64)
        /// The saved toasts are adopted: calls are served (the schedules are taken up next).
        case adopted
        /// The agent has started (its saved toasts adopted, the schedules taken up): the first idle countdown may
        /// start.
        case started(now: Duration)
        /// The agent is leaving (a signal, a take-over, its bus gone): no schedule is fired any more.
        case leave
        /// A call arrived (before anything else is done with it).
        case callArrived
        /// A call that arrived was answered.
        case callAnswered(now: Duration)
        /// A `Present` (or an adopted toast) for `id` with `traits`.
        case present(id: String, traits: AgentToastTraits)
        /// Toast `id` ended (`replaced`: a new presentation of the same id took its place, it is still live).
        case ended(id: String, replaced: Bool, now: Duration)
        /// The idle countdown with `serial` reached its deadline.
        case idleDeadline(serial: UInt64, now: Duration)
        /// Toast `id` is to be presented at `due` (replacing an earlier schedule of the id).
        case schedule(id: String, due: Duration, now: Duration)
        /// The schedule's wake-up came: every toast due by `now` is fired.
        case scheduleDeadline(now: Duration)
        /// The schedule of toast `id` is cancelled (`close --id`, or the id presented anew).
        case cancelSchedule(id: String, now: Duration)
    }

    /// What the shell must do, in order.
    package enum Action: Sendable, Hashable {
        /// Take the call.
        case takeCall
        /// Answer the call `Stopping`: the exit is decided.
        case refuseStopping
        /// Present the toast in `lane`; `opens` when this is the lane's first live toast (acquire its center).
        case admit(lane: AgentLane, opens: Bool)
        /// The live toast leaves `lane` for a lane of its own (it was replaced with traits that call for one): take
        /// it off its old center before presenting it in the new one. Comes before the ``admit(lane:opens:)``.
        case leave(lane: AgentLane)
        /// Refuse the toast: `maximumLive` toasts are live.
        case refuseFull
        /// The lane's last live toast ended (release its center).
        case releaseLane(AgentLane)
        /// Sleep until `at`, then send ``Event/idleDeadline(serial:now:)`` with `serial`.
        case armIdle(serial: UInt64, at: Duration)
        /// Exit: idle for the idle time.
        case exit
        /// Keep the toast for its time.
        case keepScheduled
        /// Wake at `at` and send ``Event/scheduleDeadline(now:)`` (one wake-up at a time: this one replaces any other);
        /// nil: nothing is scheduled any more.
        case armSchedule(at: Duration?)
        /// Present these scheduled toasts now, in order; each counts as a call in hand until answered.
        case fire(ids: [String])
        /// Resume the calls with these waiter ids: the saved toasts are adopted.
        case openCalls([UInt64])
    }

    /// The settings.
    package let configuration: Configuration
    /// Live toasts and their lanes.
    package private(set) var lanes: [String: AgentLane] = [:]
    /// Live toasts per open lane.
    package private(set) var laneCounts: [AgentLane: Int] = [:]
    /// Calls in hand.
    package private(set) var calls = 0
    /// Where the agent is in its life.
    package private(set) var phase = AgentPhase.adopting
    /// Scheduled toasts and when they are due.
    package private(set) var scheduled: [String: Duration] = [:]
    private var idleSerial: UInt64 = 0
    /// The calls waiting for the adoption.
    private var adoptionWaiters: [UInt64] = []

    /// A machine with nothing live and no call in hand, not started.
    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// How many toasts are live.
    package var liveCount: Int { lanes.count }

    /// Whether the exit is decided.
    package var isStopping: Bool { phase == .stopping }

    /// Whether the idle countdown may run: started, and neither stopping nor leaving.
    private var started: Bool { phase == .serving }

    /// Handles `event` and returns what to do.
    package mutating func handle(_ event: Event) -> [Action] {
        defer { checkInvariants() }
        switch event {
        case .awaitAdoption(let waiter):
            guard phase == .adopting else { return [.openCalls([waiter])] }
            adoptionWaiters.append(waiter)
            return []
        case .adopted:
            precondition(phase == .adopting, "adopted in phase \(phase)")
            phase = .starting
            defer { adoptionWaiters = [] }
            return adoptionWaiters.isEmpty ? [] : [.openCalls(adoptionWaiters)]
        case .started(let now):
            switch phase {
            case .adopting: return handle(.adopted) + handle(.started(now: now))
            case .starting: phase = .serving
            case .leaving: return []  // stopped while it took up its schedules
            case .serving, .stopping: preconditionFailure("the agent started twice")
            }
            return armIfIdle(now: now)
        case .leave:
            let waiting = adoptionWaiters
            adoptionWaiters = []
            phase = .leaving
            return (waiting.isEmpty ? [] : [.openCalls(waiting)]) + [.armSchedule(at: nil)]
        case .callArrived:
            // Once leaving too: its sender calls the next agent (or the one that took the name over).
            if phase == .stopping || phase == .leaving { return [.refuseStopping] }
            calls += 1
            idleSerial &+= 1  // any countdown running is stale now
            return [.takeCall]
        case .callAnswered(let now):
            precondition(calls > 0, "a call was answered that never arrived")
            calls -= 1
            return armIfIdle(now: now)
        case .present(let id, let traits):
            precondition(!isStopping, "a toast was presented after the exit was decided")
            if let lane = lanes[id] {
                // A live id stays in its lane, unless it now needs one of its own (it became a question, indefinite,
                // waited for): it must not block its application's lane, nor wait in it.
                guard case .application = lane, case .own = AgentLane.of(traits, id: id) else {
                    return [.admit(lane: lane, opens: false)]
                }
                let actions: [Action] = [.leave(lane: lane)] + leaving(lane)
                let own = AgentLane.own(id)
                lanes[id] = own
                laneCounts[own, default: 0] += 1
                return actions + [.admit(lane: own, opens: true)]
            }
            guard lanes.count < configuration.maximumLive else { return [.refuseFull] }
            let lane = AgentLane.of(traits, id: id)
            lanes[id] = lane
            laneCounts[lane, default: 0] += 1
            idleSerial &+= 1
            return [.admit(lane: lane, opens: laneCounts[lane] == 1)]
        case .ended(let id, let replaced, let now):
            guard !replaced, let lane = lanes.removeValue(forKey: id) else { return [] }
            return leaving(lane) + armIfIdle(now: now)
        case .idleDeadline(let serial, _):
            guard serial == idleSerial, calls == 0, lanes.isEmpty, scheduled.isEmpty, started else {
                return []
            }
            phase = .stopping
            return [.exit]
        case .schedule(let id, let due, _):
            precondition(!isStopping, "a toast was scheduled after the exit was decided")
            if scheduled[id] == nil, lanes.count + scheduled.count >= configuration.maximumLive { return [.refuseFull] }
            scheduled[id] = due
            idleSerial &+= 1
            return [.keepScheduled, .armSchedule(at: nextWakeUp)]
        case .scheduleDeadline(let now):
            guard phase != .leaving else { return [] }
            let due = scheduled.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
            guard !due.isEmpty else { return [.armSchedule(at: nextWakeUp)] }
            for id in due { scheduled[id] = nil }
            calls += due.count
            idleSerial &+= 1
            return [.fire(ids: due), .armSchedule(at: nextWakeUp)]
        case .cancelSchedule(let id, let now):
            guard scheduled.removeValue(forKey: id) != nil else { return [] }
            return [.armSchedule(at: nextWakeUp)] + armIfIdle(now: now)
        }
    }

    /// When the next schedule is due: nil when none is, or the agent is leaving.
    package var nextWakeUp: Duration? {
        phase == .leaving ? nil : scheduled.values.min()
    }

    /// One live toast less in `lane`: the lane is released with its last one.
    private mutating func leaving(_ lane: AgentLane) -> [Action] {
        let count = (laneCounts[lane] ?? 1) - 1
        guard count == 0 else {
            laneCounts[lane] = count
            return []
        }
        laneCounts[lane] = nil
        return [.releaseLane(lane)]
    }

    /// A new countdown when nothing is live and no call is in hand.
    private mutating func armIfIdle(now: Duration) -> [Action] {
        guard started, calls == 0, lanes.isEmpty, scheduled.isEmpty,
            let timeout = configuration.idleTimeout
        else {
            return []
        }
        idleSerial &+= 1
        return [.armIdle(serial: idleSerial, at: now + timeout)]
    }

    private func checkInvariants() {
        #if DEBUG
            precondition(calls >= 0, "calls \(calls)")
            precondition(phase == .adopting || adoptionWaiters.isEmpty, "calls wait for an adoption that is done")
            precondition(
                laneCounts.values.reduce(0, +) == lanes.count,
                "lane counts \(laneCounts.values.reduce(0, +)) ≠ live \(lanes.count)")
            precondition(laneCounts.values.allSatisfy { $0 > 0 }, "an open lane without live toasts")
            precondition(
                !isStopping || (calls == 0 && lanes.isEmpty && scheduled.isEmpty), "stopping with calls or toasts")
        #endif
    }
}
