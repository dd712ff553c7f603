// The agent's ledger: what the agent knows of every toast — live, on its way, held, ended, scheduled — and the rules
// that decide what each event does to them. Events in, actions out, time passed in; no I/O, no locks, no clock.
import DBus
package import ToastModel

/// The agent's ledger (issue 39, docs/decisions/0008-agent-ledger.md), in the shape of ``AgentMachine`` (which it
/// holds, for the lanes, the bound, the calls in hand and the idle exit) and of the presenter machines: the shell
/// (``ToastAgent``) feeds it what happened and carries out what it returns, outside its lock.
///
/// The rules it owns:
/// - **One end per presentation.** Each `Present` of an id is counted when admitted; its ends come in the order the
///   presentations came, so an end is the id's only when it is the last one's. An end that comes while a newer
///   presentation is on its way is recorded (for a `Wait` of that presentation) but ends nothing.
/// - **`-r N` of a toast the agent shows continues it** (``continuation(ofServerID:)``): its id, lane, actions,
///   commands and waiters; its `replaced` end is not an end for those who wait (``Live/continues``).
/// - **A snooze is a deferral**: `-A later=…` chosen ends the toast as `deferred`, and it comes back by itself
///   (``Action/snooze(id:request:)``).
/// - **Later keeps the commands**: `-A later` chosen on a toast with `--on-action` commands keeps its request with it
///   (``Action/keepCommands(id:request:)``), so that `toastkit later --show` hands it back with them.
/// - **Held toasts answer at once**: a `Present` waiting for its toast to be shown is resumed when Do Not Disturb holds
///   it, when it is shown, and when it ends — waiters are ids (``Action/resumeShown(_:)``), the shell keeps what
///   each resumes.
/// - **Schedules**: an entry keeps its toast id in its request; a fired one is no longer scheduled; once the agent is
///   leaving, nothing is admitted from a schedule (it was given back).
/// - **Its life** is one ``AgentPhase``.
package struct AgentLedger: Sendable {
    /// What the agent keeps for a live toast.
    package struct Live: Sendable, Equatable {
        /// The request it was presented with (its id in `options.id`).
        package var request: AgentRequest
        /// The number the server (or the agent, ``ToastAgent/viewIDs``) gave it.
        package var serverID: UInt32?
        /// The activation token of the action that was invoked.
        package var activationToken: String?
        /// The text the person sent with a reply action (`--reply`), for the action's end and its command.
        package var reply: String?
        /// A `-r` of its server id updated it: its `replaced` end is not an end for those who wait for it.
        package var continues = false
    }

    /// How many presentations of one id were admitted, and how many have ended.
    private struct Presentations: Sendable {
        var admitted = 0
        var ended = 0
    }

    /// What the shell must do, in order, outside the lock.
    package enum Action: Sendable, Equatable {
        /// The rules of lanes and life said this (``AgentMachine/Action``).
        case machine(AgentMachine.Action)
        /// Resume the `Present` calls waiting (``Event/awaitShown(id:waiter:onPresenter:)``) with these ids.
        case resumeShown([UInt64])
        /// Say the `Event` signal `ended` of `id` with this outcome.
        case announceEnd(id: String, AgentOutcome)
        /// Forget what was kept for the ended toast `id` beside the ledger: its style, its routes, its journal record.
        case forget(id: String)
        /// The toast `id`, held for Do Not Disturb, is shown now: tell a waiting `send` (with its server id).
        case announceShownAfterHold(id: String)
        /// Run `argv`, the command of action `action` of toast `id`.
        case runCommand(
            id: String, action: String, argv: [String], request: AgentRequest, token: String?, reply: String?)
        /// `-A later=…` was chosen: schedule `request` again, `request.options.snooze` seconds from now.
        case snooze(id: String, request: AgentRequest)
        /// Later was chosen on toast `id`, which has `--on-action` commands: keep `request` with it
        /// (``CommandLineLater/commands(environment:)``), before the center keeps its record.
        case keepCommands(id: String, request: AgentRequest)
        /// Say the `Event` signal `action` of `id`.
        case announceAction(id: String, action: String, token: String?)
    }

    /// Something that happened.
    package enum Event: Sendable, Equatable {
        /// A `Present` of a toast waits for it to be shown (or held, or ended): `waiter` is resumed then. `onPresenter`:
        /// the center has handed it to the presenter, or holds it, already (or no center holds it any more).
        case awaitShown(id: String, waiter: UInt64, onPresenter: Bool)
        /// The center handed toast `id` to the presenter.
        case shown(id: String)
        /// A new presentation of `id` went out: what Do Not Disturb did to an earlier one is not its story.
        case presented(id: String)
        /// Do Not Disturb held back, dropped or let through toast `id`.
        case suppressed(id: String, ToastSuppression)
        /// The person invoked action `action` of toast `id`.
        case actionInvoked(id: String, action: String, token: String?)
        /// The person sent `text` with reply action `action`.
        case replied(id: String, action: String, text: String)
        /// A presentation of toast `id` ended with `outcome` (`unexplained`: the observer's word on a close nobody
        /// asked for).
        case ended(id: String, outcome: ToastOutcome, unexplained: String?, now: Duration)
    }

    /// The rules of lanes, the bound, the calls in hand and the idle exit.
    package private(set) var machine: AgentMachine
    /// The live toasts.
    package private(set) var live: [String: Live] = [:]
    private var presentations: [String: Presentations] = [:]
    /// How recently ended toasts ended, with the agent's details (bounded).
    package private(set) var ended = Recents<AgentOutcome>()
    /// How Do Not Disturb held back recent toasts, for their `Present` answer (bounded).
    package private(set) var suppressed = Recents<ToastSuppression>()
    /// The toasts held for Do Not Disturb now.
    package private(set) var held: Set<String> = []
    /// The `Present` calls waiting for their toast to be shown, by toast.
    private var shownWaiters: [String: [UInt64]] = [:]
    /// Toasts waiting for their time (`send --in`, `--at`, a snooze), as kept in the user's store.
    package private(set) var scheduled: [String: ScheduleStore.Entry] = [:]
    /// Scheduled toasts whose time came, fired and not yet taken to be shown (``takeDue(_:)``).
    private var due: [String: ScheduleStore.Entry] = [:]
    /// The scheduled toasts this agent claimed and no server has accepted yet.
    package var claims = ScheduleClaims()
    /// Callers already checked: unique name → same user.
    private var callers: [String: Bool] = [:]
    /// The last number given to a toast with no notification (``ToastAgent/viewIDs``).
    private var lastViewID: UInt32 = 0

    /// A ledger with nothing in it, adopting.
    package init(configuration: AgentMachine.Configuration = .init()) {
        machine = AgentMachine(configuration: configuration)
    }

    /// Where the agent is in its life.
    package var phase: AgentPhase { machine.phase }

    /// Hands `event` to the rules of lanes and life (``AgentMachine``).
    package mutating func handle(_ event: AgentMachine.Event) -> [AgentMachine.Action] {
        defer { checkInvariants() }
        let actions = machine.handle(event)
        // Fired: due now, no longer waiting for its time, until ``takeDue(_:)`` takes it to be shown.
        for case .fire(let ids) in actions {
            for id in ids { due[id] = scheduled.removeValue(forKey: id) }
        }
        return actions
    }
}

// MARK: - Presenting

extension AgentLedger {
    /// What ``admit(id:request:continues:fromSchedule:)`` decided.
    package enum Admission: Sendable, Equatable {
        /// Present it in `lane` (`opens`: its first live toast); take it off `leaving` first; `releases` are lanes
        /// whose last live toast this was. `serverID`: the number it already has (updated in place).
        case admitted(lane: AgentLane, opens: Bool, leaving: AgentLane?, releases: [AgentLane], serverID: UInt32?)
        /// `maximumLive` toasts are live.
        case full
        /// From a schedule, and the agent is leaving: it was given back to the user's store.
        case givenBack
    }

    /// A `Present` of `request` (its id in `options.id`): the lane it joins, or why it is refused.
    package mutating func admit(
        id: String, request: AgentRequest, continues: Bool = false, fromSchedule: Bool = false
    ) -> Admission {
        defer { checkInvariants() }
        if fromSchedule, phase == .leaving { return .givenBack }
        let actions = machine.handle(.present(id: id, traits: request.traits))
        var admitted: (AgentLane, Bool)?
        var leaving: AgentLane?
        var releases: [AgentLane] = []
        for action in actions {
            switch action {
            case .admit(let lane, let opens): admitted = (lane, opens)
            case .leave(let lane): leaving = lane
            case .releaseLane(let lane): releases.append(lane)
            case .refuseFull: return .full
            default: preconditionFailure("a present answered \(action)")
            }
        }
        guard let (lane, opens) = admitted else { preconditionFailure("a present was neither admitted nor refused") }
        let serverID = live[id]?.serverID
        live[id] = Live(request: request, serverID: serverID, continues: continues)
        presentations[id, default: Presentations()].admitted += 1
        return .admitted(lane: lane, opens: opens, leaving: leaving, releases: releases, serverID: serverID)
    }

    /// `-r N` where N is the server id of a live toast: that toast (its id and what it was presented with).
    package func continuation(ofServerID serverID: UInt32) -> (id: String, live: Live)? {
        live.first { $0.value.serverID == serverID }.map { ($0.key, $0.value) }
    }

    /// The server answered the `Notify` of live toast `id` with `serverID` (0: no notification, a job view): the
    /// number it is known by from now on — the server's, the one it had, or one of the agent's own.
    package mutating func serverAnswered(id: String, serverID: UInt32) -> UInt32 {
        guard live[id] != nil else { return serverID }
        if serverID != 0 {
            live[id]?.serverID = serverID
        } else if live[id]?.serverID == nil {
            lastViewID = max(lastViewID &+ 1, ToastAgent.viewIDs.lowerBound)
            live[id]?.serverID = lastViewID
        }
        return live[id]?.serverID ?? serverID
    }

    /// The live toast `id` is one a previous agent (or a `send`) showed as notification `serverID`.
    package mutating func adopted(_ id: String, serverID: UInt32?) {
        live[id]?.serverID = serverID
    }

    /// After adoption: the server ids of the live toasts as the presenter holds them (`held(id)`), except the agent's
    /// own numbers.
    package mutating func adoptServerIDs(_ held: (String) -> UInt32?) {
        for id in live.keys where live[id]?.serverID.map({ !ToastAgent.viewIDs.contains($0) }) ?? true {
            live[id]?.serverID = held(id)
        }
    }

    /// Remembers that a toast ended without ever being live here (a saved toast that could not be shown again, or
    /// whose time ran out while no agent ran), for `Wait`.
    package mutating func remember(_ outcome: AgentOutcome, for id: String) {
        ended.remember(outcome, for: id)
    }

    /// The caller `sender`'s check, if it was made: whether it is this user.
    package func caller(_ sender: String) -> Bool? { callers[sender] }

    /// The caller `sender` is (or is not) this user.
    package mutating func checked(_ sender: String, sameUser: Bool) {
        if callers.count > 4096 { callers = [:] }
        callers[sender] = sameUser
    }
}

// MARK: - Schedules

extension AgentLedger {
    /// Keeps `entry` until its time (replacing an earlier schedule of its id): whether the bound left room, and what
    /// to arm.
    package mutating func schedule(_ entry: ScheduleStore.Entry, due: Duration, now: Duration) -> [AgentMachine.Action]
    {
        defer { checkInvariants() }
        precondition(entry.request.options.id == entry.id, "a schedule without its toast's id: \(entry.id)")
        let actions = machine.handle(.schedule(id: entry.id, due: due, now: now))
        if actions.contains(.keepScheduled) { scheduled[entry.id] = entry }
        return actions
    }

    /// The schedule of `id` is over (cancelled, or the id presented anew): nil when it had none.
    package mutating func cancelSchedule(_ id: String, now: Duration) -> [AgentMachine.Action]? {
        defer { checkInvariants() }
        // Fired and not yet shown: it never will be.
        if due.removeValue(forKey: id) != nil, scheduled[id] == nil { return [] }
        guard scheduled.removeValue(forKey: id) != nil else { return nil }
        return machine.handle(.cancelSchedule(id: id, now: now))
    }

    /// The scheduled toast `id` is due and fired: its entry, taken off the schedules (nil when it is gone: cancelled
    /// or presented anew meanwhile).
    package mutating func takeDue(_ id: String) -> ScheduleStore.Entry? {
        due.removeValue(forKey: id)
    }

    /// The agent is leaving: the claimed toasts to give back to the user's store — all of them, or (`keepingLive`)
    /// those not live here, which the saved journal takes to this bus's next agent. Nothing is claimed after.
    package mutating func closeClaims(keepingLive: Bool) -> [ScheduleStore.Entry] {
        precondition(phase == .leaving, "claims given back in phase \(phase)")
        defer { checkInvariants() }
        let live = keepingLive ? Set(live.keys) : []
        return claims.close { live.contains($0) }
    }

    /// What the user's store holds now (`entries`, `due` giving each one's machine time): each new or moved schedule
    /// is kept, each gone one cancelled — of every id, or (`ids`) of those ids only, when `entries` are what the
    /// files of those ids hold (the files that changed). Returns what to do and the ids taken up.
    package mutating func reconcile(
        _ entries: [ScheduleStore.Entry], ids: Set<String>? = nil, due time: (Double) -> Duration, now: Duration
    ) -> (actions: [AgentMachine.Action], taken: [String]) {
        guard phase != .leaving, phase != .stopping else { return ([], []) }
        var actions: [AgentMachine.Action] = []
        var taken: [String] = []
        for var entry in entries {
            entry.request.options.id = entry.id
            guard scheduled[entry.id]?.due != entry.due else {
                scheduled[entry.id] = entry
                continue
            }
            // Fired already, on its way to be claimed and shown.
            if due[entry.id]?.due == entry.due { continue }
            let kept = schedule(entry, due: time(entry.due), now: now)
            if kept.contains(.keepScheduled) { taken.append(entry.id) }
            actions += kept
        }
        let onDisk = Set(entries.map(\.id))
        let looked = ids.map { $0.filter { scheduled[$0] != nil } } ?? Set(scheduled.keys)
        for id in looked.sorted() where !onDisk.contains(id) {
            actions += cancelSchedule(id, now: now) ?? []
        }
        return (actions, taken)
    }

    /// The agent is leaving: nothing more is taken up, fired or admitted from a schedule.
    package mutating func leave() -> [AgentMachine.Action] {
        machine.handle(.leave)
    }
}

// MARK: - What the centers say

extension AgentLedger {
    /// Handles an event of the centers and returns what to do.
    package mutating func handle(_ event: Event) -> [Action] {
        defer { checkInvariants() }
        switch event {
        case .awaitShown(let id, let waiter, let onPresenter):
            if onPresenter || live[id] == nil || held.contains(id) { return [.resumeShown([waiter])] }
            shownWaiters[id, default: []].append(waiter)
            return []
        case .shown(let id):
            var actions = resumingShown(id)
            if held.remove(id) != nil { actions.append(.announceShownAfterHold(id: id)) }
            return actions
        case .presented(let id):
            suppressed.forget(id)
            held.remove(id)
            return []
        case .suppressed(let id, let suppression):
            suppressed.remember(suppression, for: id)
            guard suppression.kind == .held, live[id] != nil else { return [] }
            held.insert(id)
            return resumingShown(id)
        case .actionInvoked(let id, let action, let token):
            let announce = Action.announceAction(id: id, action: action, token: token)
            guard let toast = live[id] else { return [announce] }
            if action == "later", toast.request.options.snooze != nil {
                return [.snooze(id: id, request: toast.request)]
            }
            live[id]?.activationToken = token
            var actions: [Action] = []
            if action == "later", !toast.request.onAction.isEmpty {
                actions.append(.keepCommands(id: id, request: toast.request))
            }
            if let argv = toast.request.onAction[action] {
                actions.append(
                    .runCommand(
                        id: id, action: action, argv: argv, request: toast.request, token: token, reply: toast.reply))
            }
            return actions + [announce]
        case .replied(let id, _, let text):
            live[id]?.reply = text
            return []
        case .ended(let id, let outcome, let unexplained, let now):
            return ending(id, outcome, unexplained: unexplained, now: now)
        }
    }

    private mutating func resumingShown(_ id: String) -> [Action] {
        guard let waiters = shownWaiters.removeValue(forKey: id) else { return [] }
        return [.resumeShown(waiters)]
    }

    /// One presentation of `id` ended: the id's end only when it was the newest presentation.
    private mutating func ending(_ id: String, _ outcome: ToastOutcome, unexplained: String?, now: Duration)
        -> [Action]
    {
        var counts = presentations[id] ?? Presentations(admitted: 1, ended: 0)
        counts.ended += 1
        let replaced = counts.ended < counts.admitted
        presentations[id] = replaced ? counts : nil
        if replaced, live[id] == nil { return [] }
        let toast = replaced ? live[id] : live.removeValue(forKey: id)
        // A snooze is a Later that comes back: its senders see it deferred.
        let snoozed = outcome == .actionInvoked(actionID: "later") && toast?.request.options.snooze != nil
        let record = AgentOutcome(
            snoozed ? .deferred : outcome, serverID: toast?.serverID, activationToken: toast?.activationToken,
            reply: toast?.reply, unexplained: unexplained)
        ended.remember(record, for: id)
        guard !replaced else { return [] }
        var actions = machine.handle(.ended(id: id, replaced: false, now: now)).map(Action.machine)
        actions.append(.forget(id: id))
        held.remove(id)
        actions += resumingShown(id)
        actions.append(.announceEnd(id: id, record))
        return actions
    }

    private func checkInvariants() {
        #if DEBUG
            precondition(live.count == machine.liveCount, "live \(live.count) ≠ the machine's \(machine.liveCount)")
            precondition(
                Set(scheduled.keys) == Set(machine.scheduled.keys),
                "scheduled \(scheduled.count) ≠ the machine's \(machine.scheduled.count)")
            precondition(due.keys.allSatisfy { machine.scheduled[$0] == nil }, "due and waiting for its time at once")
            precondition(shownWaiters.values.allSatisfy { !$0.isEmpty }, "an empty list of waiters")
            precondition(held.allSatisfy { live[$0] != nil }, "a held toast that is not live")
            precondition(claims.isOpen || phase == .leaving, "claims closed in phase \(phase)")
        #endif
    }
}
