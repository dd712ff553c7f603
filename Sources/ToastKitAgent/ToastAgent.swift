package import DBus
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
package import ToastKit
package import ToastModel

/// The per-user toast service (`toastkit agent`): one ``ToastCenter`` per lane (``AgentLane``: an application's
/// informing toasts queue behind its front toast; questions, indefinite toasts and toasts someone waits for are
/// shown at once) and one connection to the notification server for every script of the user, on the session bus
/// as `org.toastkit.Agent1` (docs/agent.md).
///
/// What a script's toast gets from it, after the script has gone: its duration holds (the center closes it on time,
/// on every server, GNOME Shell included); `--id` and `-r` replace across runs, in place; no toast waits behind
/// another application's; `--on-action` commands run when their action is invoked; `toastkit wait --id` and `close
/// --id` reach the toast through the connection that sent it. Live toasts are saved (crash-safe, see
/// ``AgentStore``) in a file of this session bus's own; a toast is on disk before `Present` answers, and an agent
/// started on the same bus after a crash adopts them with the time they had left.
package final class ToastAgent: Sendable {
    /// What the agent keeps for a live toast.
    private struct Live: Sendable {
        var request: AgentRequest
        var serverID: UInt32?
        var activationToken: String?
        /// The text the person sent with a reply action (`--reply`), for the action's end and its command.
        var reply: String?
        /// A `-r` of its server id updated it: its `replaced` end is not an end for those who wait for it.
        var continues = false
    }

    /// How many presentations of one id the agent handed (or is handing) to a center, and how many have ended: each
    /// ends exactly once, in the order they came, so an end is the newest one's only when it is the last to come. An
    /// end that comes while a newer `Present` is on its way — an older one that expired, was replaced, or was dropped
    /// for Do Not Disturb as the new one was written ahead — is not the id's end.
    private struct Presentations: Sendable {
        var admitted = 0
        var ended = 0
    }

    private struct State {
        var live: [String: Live] = [:]
        /// The presentations of each live id (``Presentations``).
        var presentations: [String: Presentations] = [:]
        /// How recently ended toasts ended, with the agent's details (bounded).
        var ended = Recents<AgentOutcome>()
        /// How Do Not Disturb held back recent toasts, for their `Present` answer (bounded).
        var suppressed = Recents<ToastSuppression>()
        /// The toasts held for Do Not Disturb now: their `shown` event tells a waiting `send` when they go out.
        var heldIDs: Set<String> = []
        /// Callers already checked: unique name → same user.
        var callers: [String: Bool] = [:]
        /// The rules: lanes, the live bound, the calls in hand, the idle exit (``AgentMachine``).
        var machine: AgentMachine
        /// `Present` calls waiting for their queued toast to be shown (or to end).
        var shownWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
        /// Toasts waiting for their time (`send --in`, `--at`, a snooze), as kept in ``ToastAgent/schedules``.
        var scheduled: [String: ScheduleStore.Entry] = [:]
        /// ``ToastAgent/stop(_:)`` has begun: no schedule is taken up any more.
        var leaving = false
        /// The last number given to a toast with no notification (``viewIDs``).
        var lastViewID: UInt32 = 0
    }

    /// The numbers the agent gives a toast that has no notification — a job view on Plasma — so that `send -p`
    /// prints one and `-r` with it updates the toast, as for a notification: from 2³⁰ up, far above what any server
    /// counts to in a session. Never saved for the next agent (it would take one for a notification).
    static let viewIDs: ClosedRange<UInt32> = (1 << 30)...UInt32.max

    /// What the journal keeps of a toast's server id: none for a number of the agent's own (``viewIDs``).
    static func savedServerID(_ serverID: UInt32) -> UInt32? {
        viewIDs.contains(serverID) ? nil : serverID
    }

    package let connection: DBusConnection
    package let lanes: AgentLanes
    /// The centers' events, all to ``handle(_:)``.
    private let relay: EventRelay
    package let desktop: DesktopNotificationPresenter
    package let observer: ObservingPresenter
    package let settings: AgentSettings
    /// The tool's version, for `GetInfo`.
    private let version: String
    private let ownerChanges: NameOwnerChanges
    private let style: AgentStyle
    private let store: AgentStore
    /// The toast a `send` showed itself while no agent ran, left for this agent (``AgentStore/handOver(environment:busID:)``).
    private let handOver: AgentStore
    /// The hand-overs taken, one after another: each `TakeHandOver` looks at the file once those before it are done,
    /// and answers once its own look is done.
    private let handOverTurn = Mutex<Task<Void, Never>?>(nil)
    /// Whether a due schedule waits for a notification server to come to this bus (``fire(_:)``).
    private let serverWatch = Mutex(false)
    private let runner: ActionRunner
    /// The agent's own environment: only its ``ActionEnvironment/sessionVariables`` are given to a command whose sender
    /// sent no environment.
    private let environment: [String: String]
    /// The session as the agent reaches it: its environment, with the bus it is on (found at `/run/user/UID/bus` when
    /// no variable named it). What a click's command gets of the session when its sender had none of it.
    private let sessionEnvironment: [String: String]
    private let state: Mutex<State>
    /// The idle countdown sleeping now, if any (cancelled when a newer one is armed).
    private let idleTask = Mutex<Task<Void, Never>?>(nil)
    /// The wake-up of the next scheduled toast, if any (replaced when the machine asks for another).
    private let scheduleTask = Mutex<Task<Void, Never>?>(nil)
    /// The user's scheduled toasts on disk (nil when the state folder cannot be used: scheduling is then refused).
    private let schedules: ScheduleStore?
    /// The scheduled toasts this agent took from ``schedules`` and no server has accepted yet: given back if the agent
    /// leaves first.
    private let claimed: ClaimedSchedules?
    /// Follows ``schedules``' file for the changes other agents make (nil without inotify).
    private let scheduleWatch = Mutex<ScheduleWatch?>(nil)
    private let saver = AgentSaver<AgentStore.Record>()
    /// The machine's time: since the agent started.
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant
    /// `TOASTKIT_FAILPOINT_AGENT_CRASH`: the step of `Present` at which this agent kills itself (SIGKILL), for the
    /// tests that prove a crash at each step loses nothing (docs/reliability.md): `after-write-ahead` (the toast on
    /// disk, the server not yet told) or `before-reply` (the server's id on disk, the caller not yet answered).
    private let crashPoint: String?
    /// Open once the saved toasts are adopted: calls wait for it, so a `Wait` or `Present` for an adopted toast finds
    /// it (the name is taken before adopting — the file belongs to the name's owner).
    private let adoption = Mutex((done: false, waiting: [CheckedContinuation<Void, Never>]()))
    private let finished: AsyncStream<Void>.Continuation
    /// The `Event` signals' arguments, emitted in order by one task: off the path of the call that caused them.
    private let events: AsyncStream<[DBusValue]>.Continuation
    /// Ends when the agent should exit (idle, or asked to).
    package let exits: AsyncStream<Void>

    private init(
        connection: DBusConnection, settings: AgentSettings, store: AgentStore, handOver: AgentStore,
        ownerChanges: NameOwnerChanges, environment: [String: String], version: String
    ) {
        self.connection = connection
        self.version = version
        self.settings = settings
        self.ownerChanges = ownerChanges
        self.store = store
        self.handOver = handOver
        desktop = DesktopNotificationPresenter(
            configuration: PresenterConfiguration(
                appName: "toastkit", bus: .session, callTimeout: AgentInterface.serverTimeout))
        let senders = SenderEnvironments()
        observer = ObservingPresenter(desktop) { senders.environment(of: $0) }
        let style = AgentStyle()
        let relay = EventRelay()
        self.style = style
        self.relay = relay
        lanes = AgentLanes(presenter: observer) { [maxVisible = settings.maxVisible] presenter in
            let center = ToastCenter(
                defaultDuration: .standardDefault, maxVisible: maxVisible, presenter: presenter,
                laterStore: CommandLineLater.store(environment: environment))
            center.toastStyle(style)
            center.onEvent = { relay.send($0) }
            return center
        }
        runner = ActionRunner(log: ActionEnvironment.logPath(environment: environment))
        self.environment = environment
        var session = environment
        if session["DBUS_SESSION_BUS_ADDRESS"]?.isEmpty ?? true, let address = try? BusAddress.session.resolve() {
            session["DBUS_SESSION_BUS_ADDRESS"] = address
        }
        sessionEnvironment = session
        do {
            schedules = try ScheduleStore.open(environment: environment)
        } catch {
            ErrorLine.write("warning: scheduled toasts cannot be kept: \(error)")
            schedules = nil
        }
        claimed = schedules.map(ClaimedSchedules.init(store:))
        state = Mutex(
            State(
                machine: AgentMachine(
                    configuration: .init(maximumLive: AgentLimits.maximumLive, idleTimeout: settings.idleTimeout))))
        origin = clock.now
        crashPoint = environment["TOASTKIT_FAILPOINT_AGENT_CRASH"].flatMap { $0.isEmpty ? nil : $0 }
        (exits, finished) = AsyncStream.makeStream()
        let (signals, events) = AsyncStream<[DBusValue]>.makeStream()
        self.events = events
        saver.attach { [weak self] records in self?.write(records) }
        // A reply prompt opens where its sender runs (its display), with the environment `send` captured.
        senders.attach { [weak self] id in self?.state.withLock { $0.live[id]?.request.environment } }
        Task { [connection] in
            for await arguments in signals {
                try? connection.emitSignal(
                    path: AgentInterface.path, interface: AgentInterface.interface, member: "Event",
                    arguments: arguments)
            }
        }
    }

    // MARK: - Start

    /// Connects, takes `org.toastkit.Agent1`, adopts the toasts a previous agent left, and serves.
    ///
    /// - Returns: nil when another agent already owns the name (and `replace` was not asked for).
    package static func start(
        settings: AgentSettings, environment: [String: String], version: String
    ) async throws(AgentStartError)
        -> ToastAgent?
    {
        let connection: DBusConnection
        do {
            // Started by the bus (D-Bus activation): the bus that started it, whatever the inherited session is.
            let starter = environment["DBUS_STARTER_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
            connection = try await DBusConnection.connect(
                to: starter.map(BusAddress.address) ?? .session)
        } catch {
            throw AgentStartError("cannot reach the session bus: \(error)")
        }
        // The saved toasts are this bus's own: another session's (or a closed one's) are never adopted.
        let busID: String
        do {
            busID = try await connection.bus.id()
        } catch {
            connection.close()
            throw AgentStartError("cannot ask the session bus for its id: \(error)")
        }
        let store: AgentStore
        let handOver: AgentStore
        do {
            store = try AgentStore.open(environment: environment, busID: busID)
            handOver = try AgentStore.handOver(environment: environment, busID: busID)
        } catch {
            connection.close()
            throw AgentStartError("\(error.description) (the agent's saved toasts)", stateUnusable: true)
        }
        let flags: NameRequestFlags =
            settings.replace ? [.replaceExisting, .doNotQueue] : [.doNotQueue, .allowReplacement]
        let agent: ToastAgent
        do {
            let changes = try await connection.bus.nameOwnerChanges(of: AgentInterface.busName)
            agent = ToastAgent(
                connection: connection, settings: settings, store: store, handOver: handOver,
                ownerChanges: changes, environment: environment, version: version)
            agent.export()
            let reply = try await connection.bus.requestName(AgentInterface.busName, flags: flags)
            guard reply == .primaryOwner || reply == .alreadyOwner else {
                connection.close()
                return nil
            }
        } catch {
            connection.close()
            throw AgentStartError("cannot take \(AgentInterface.busName): \(error)")
        }
        agent.watchEvents()
        agent.watchReports()
        // What a killed agent saved, and what a `send` showed itself while no agent ran (taken after the name: a
        // `send` that hands over after this reads the name's owner and calls `TakeHandOver`).
        await agent.adoptSavedToasts(agent.store.load(), handedOver: agent.handOver.load())
        agent.openAfterAdoption()
        // Before the start: a schedule taken up keeps the first idle countdown from being armed at all (a tiny idle
        // timeout could otherwise decide the exit in between).
        agent.watchSchedules()
        agent.takeUpSchedules()
        agent.perform(agent.state.withLock { $0.machine.handle(.started(now: agent.now())) })
        return agent
    }

    /// Waits until another agent takes the name (`toastkit agent --replace`): true. False when the connection closed
    /// first (the bus went away, or the agent stopped): the name went with it, nobody took it over.
    package func nameLost() async -> Bool {
        let me = connection.uniqueName
        do {
            // Freed with nobody taking it (this connection closing): no take-over, and nothing to stop for.
            for try await change in ownerChanges where change.newOwner != me && change.newOwner != nil {
                return true
            }
        } catch {}
        return false
    }

    /// What becomes of the saved toasts when the agent stops.
    package enum Leaving {
        /// Written as they are, for the next agent on this bus (a signal, an idle exit).
        case save
        /// Left to the agent that took over the name: the file is its now.
        case handOver
        /// The bus has closed, and the session with it: its toasts are over, the file is removed.
        case endSession
    }

    /// Stops: no schedule is taken up or fired any more, the scheduled toasts claimed and not shown go back to the
    /// user's file, the saved toasts are left as `leaving` says, and the connection closes (the name goes with it).
    package func stop(_ leaving: Leaving = .save) {
        state.withLock { state in
            state.leaving = true
            scheduleTask.withLock { $0?.cancel() }
        }
        scheduleWatch.withLock { $0?.stop() }
        giveBackClaimedSchedules(keepingLive: leaving != .endSession)
        switch leaving {
        case .save:
            // With every timer as it is now: the journal's records know when timers started, not when a covered
            // toast's stopped.
            saver.barrier { compact() }
        case .handOver: break
        case .endSession:
            // On the writer's queue: no append can land after the removal. A hand-over no agent took ends too.
            saver.barrier {
                do { try store.remove() } catch { ErrorLine.write("warning: \(error)") }
                handOver.removeHandOver()
            }
        }
        events.finish()
        connection.close()
    }

    /// Lets go of the notification server once stopped, before the process exits: the notifications stay on screen
    /// (for the next agent to adopt), the job views end — left open, Plasma would show each as a failed job when this
    /// process leaves — and it returns once that is sent.
    package func releaseDesktop() async {
        // What is on its way is answered first (a view asked for just before would be left open), within the time a
        // server has to answer.
        try? await lanes.centers.first?.flush(timeout: AgentInterface.serverTimeout)
        await desktop.disconnectAndWait()
    }

    // MARK: - The interface

    private func export() {
        var object = DBusObject(interface: AgentInterface.interface)
        object.asyncMethod("Present") { [weak self] message in
            guard let self else { throw Self.gone }
            try self.enter()
            defer { self.leave() }
            // The caller's uid is asked of the bus while the toast is decoded and checked (nothing is done with it
            // before the answer): one round trip less on the path every `send` takes.
            async let check: Void = self.checkCaller(message.sender)
            // After adoption: a `-r` of an adopted toast's server id must find it.
            await self.adopted()
            let prepared = Result { try self.prepare(message) }
            try await check
            return try await self.serve(message, checked: true) { try await self.present(prepared.get()) }
        }
        object.asyncMethod("Close") { [weak self] message in
            guard let self else { throw Self.gone }
            try self.enter()
            defer { self.leave() }
            return try await self.serve(message) { try self.close(message) }
        }
        object.asyncMethod("Wait") { [weak self] message in
            guard let self else { throw Self.gone }
            try self.enter()
            defer { self.leave() }
            return try await self.serve(message) { try await self.wait(message) }
        }
        object.asyncMethod("List") { [weak self] message in
            guard let self else { throw Self.gone }
            try self.enter()
            defer { self.leave() }
            return try await self.serve(message) { self.list() }
        }
        object.asyncMethod("TakeHandOver") { [weak self] message in
            guard let self else { throw Self.gone }
            try self.enter()
            defer { self.leave() }
            // No caller check: `send` calls without waiting and exits, so the bus may no longer know its uid; and
            // the call only makes the agent read this user's own private file, checked as the journal is.
            return try await self.serve(message, checked: true) {
                await self.takeHandOver()
                return []
            }
        }
        object.asyncMethod("GetInfo") { [weak self] message in
            guard let self else { throw Self.gone }
            try self.enter()
            defer { self.leave() }
            return try await self.serve(message) {
                // What it reports is on disk: a killed agent's successor adopts what this answer counted.
                self.saver.flush()
                return self.info()
            }
        }
        connection.export(object, at: AgentInterface.path)
        var introspectable = DBusObject(interface: "org.freedesktop.DBus.Introspectable")
        introspectable.method("Introspect") { call in call.reply([.string(AgentInterface.introspection)]) }
        connection.export(introspectable, at: AgentInterface.path)
    }

    private static let gone = DBusError(name: DBusError.Name.failed, message: "the agent is stopping")

    /// The answer to a call that reaches an agent about to exit for being idle: its sender calls again, and the bus
    /// (or the sender) starts the next agent.
    private static let stopping = DBusError(
        name: AgentInterface.ErrorName.stopping, message: "the agent is exiting for being idle; call again")

    /// Counts a call as activity from the moment its handler starts, before any wait: the idle exit can only come
    /// while no call is in hand. Throws ``stopping`` once the exit is decided.
    private func enter() throws(DBusError) {
        let actions = state.withLock { $0.machine.handle(.callArrived) }
        if actions.contains(.refuseStopping) { throw Self.stopping }
    }

    /// The end of a call ``enter()`` counted.
    private func leave() {
        perform(state.withLock { $0.machine.handle(.callAnswered(now: now())) })
    }

    /// The machine's time now.
    private func now() -> Duration { clock.now - origin }

    /// Carries out what the machine said that happens outside the state lock: the idle countdown and the exit. The
    /// lanes' changes (admit, leave, release) are carried out under the lock by the caller, in the same step as the
    /// machine's, so a lane is never closed while a toast is on its way into it.
    private func perform(_ actions: [AgentMachine.Action]) {
        for action in actions {
            switch action {
            case .armIdle(let serial, let at):
                let task = Task { [weak self, clock, origin] in
                    guard (try? await clock.sleep(until: origin + at)) != nil, let self else { return }
                    perform(state.withLock { $0.machine.handle(.idleDeadline(serial: serial, now: now())) })
                }
                idleTask.withLock { current in
                    current?.cancel()
                    current = task
                }
            case .exit: finished.finish()
            case .armSchedule:
                // For the machine's earliest time as it is now, in the same step: calls and the file watch carry out
                // their actions side by side, and an arm worked out earlier must not replace a later one's timer.
                // Nothing once the agent is leaving.
                state.withLock { current in
                    let at = current.leaving ? nil : current.machine.scheduled.values.min()
                    let task = at.map { at in
                        Task { [weak self, clock, origin] in
                            guard (try? await clock.sleep(until: origin + at)) != nil, let self else { return }
                            perform(state.withLock { $0.machine.handle(.scheduleDeadline(now: now())) })
                        }
                    }
                    scheduleTask.withLock { running in
                        running?.cancel()
                        running = task
                    }
                }
            case .fire(let ids):
                Task { [weak self] in
                    for id in ids { await self?.fire(id) }
                }
            case .keepScheduled: break
            // Carried out under the state lock by whoever asked the machine (the lanes change with the rules).
            case .releaseLane, .leave, .takeCall, .refuseStopping, .admit, .refuseFull: break
            }
        }
    }

    /// Runs one call: checks the caller is this user, waits for the saved toasts to be adopted.
    private func serve(
        _ message: DBusMessage, checked: Bool = false, _ body: () async throws -> [DBusValue]
    ) async throws -> [DBusValue] {
        if !checked { try await checkCaller(message.sender) }
        await adopted()
        return try await body()
    }

    /// The session bus is per user, but any process that reaches it could call: only this user's may.
    private func checkCaller(_ sender: String?) async throws {
        guard let sender else { throw Self.denied("no sender") }
        if let known = state.withLock({ $0.callers[sender] }) {
            if known { return }
            throw Self.denied(sender)
        }
        let uid = try await connection.bus.connectionUnixUser(of: sender)
        let same = uid == getuid()
        state.withLock { state in
            if state.callers.count > 4096 { state.callers = [:] }
            state.callers[sender] = same
        }
        if !same { throw Self.denied("\(sender) (uid \(uid))") }
    }

    private static func denied(_ who: String) -> DBusError {
        DBusError(
            name: AgentInterface.ErrorName.accessDenied, message: "only uid \(getuid()) may use this agent, not \(who)")
    }

    /// `-r N` where N is the server id of a toast the agent shows: the request becomes an update of that toast — its
    /// id, its lane, its actions and commands when the request brings none, and its waiters, who keep waiting for
    /// its end (``Live/continues``). Any other `-r N` replaces notification N on the server, in a lane of its own.
    private func continuing(_ request: inout AgentRequest) -> Bool {
        // The sender's own generated id (`toastkit-…`) does not count as an id it chose.
        guard let serverID = request.options.replaceID, request.options.id?.hasPrefix("toastkit-") != false
        else { return false }
        guard let (id, live) = state.withLock({ $0.live.first { $0.value.serverID == serverID } }) else {
            return false
        }
        request.options.id = id
        request.options.replaceID = nil
        if request.options.actions.isEmpty && request.options.tap == nil {
            request.options.actions = live.request.options.actions
            request.options.tap = live.request.options.tap
            request.onAction = live.request.onAction
            request.environment = live.request.environment
            request.workingDirectory = live.request.workingDirectory
        }
        return true
    }

    /// A `Present` call's toast, decoded and checked.
    private struct Prepared {
        var request: AgentRequest
        var toast: ToastMessage
        /// It updates a live toast the agent shows (`-r` of its server id).
        var continues: Bool
        /// A scheduled toast this agent claimed (``fire(_:)``): not admitted once the agent is leaving, for it was
        /// given back then (``ClaimedSchedules``).
        var fromSchedule = false
    }

    /// Decodes and checks a `Present` call's argument, without acting on it.
    private func prepare(_ message: DBusMessage) throws -> Prepared {
        var request: AgentRequest
        let toast: ToastMessage
        do {
            request = try AgentRequest(try message.arguments("a{sv}")[0])
        } catch let error as AgentRequestError {
            throw DBusError(name: AgentInterface.ErrorName.invalidToast, message: error.description)
        } catch let error as DBusError {
            throw DBusError(name: DBusError.Name.invalidArgs, message: error.message)
        }
        let continues = continuing(&request)
        do throws(ToastOptionError) {
            toast = try request.message()
        } catch {
            throw DBusError(name: AgentInterface.ErrorName.invalidToast, message: error.message)
        }
        return Prepared(request: request, toast: toast, continues: continues)
    }

    /// `Present(a{sv}) → (s id, a{sv} shown)`.
    private func present(_ prepared: Prepared) async throws -> [DBusValue] {
        let (request, toast) = (prepared.request, prepared.toast)
        let id = toast.id
        if let due = request.options.due, due > AgentStore.now() { return try schedule(request, id: id, due: due) }
        // Shown now: an earlier schedule of the id is over (the latest word wins).
        cancelSchedule(id)
        if let replaceID = request.options.replaceID {
            desktop.adopt(serverID: replaceID, forToast: id, soundPlayed: request.options.soundPlayed)
        }
        // A live id stays in its lane (updated in place), unless it now needs one of its own; a new one joins the
        // lane its kind says. The lanes change in the same step as the rules, under the one lock.
        var givenBack = false
        let admitted = state.withLock { state -> (center: ToastCenter, leaving: ToastCenter?, serverID: UInt32?)? in
            // In the same step as the give-back's look at what is live: either it saw this toast live, or the toast
            // is back in the user's file and not shown here too.
            if prepared.fromSchedule, state.leaving {
                givenBack = true
                return nil
            }
            let actions = state.machine.handle(.present(id: id, traits: request.traits))
            guard
                let (lane, opens) = actions.lazy.compactMap({ action -> (AgentLane, Bool)? in
                    if case .admit(let lane, let opens) = action { return (lane, opens) }
                    return nil
                }).first
            else { return nil }
            var leaving: ToastCenter?
            for action in actions {
                switch action {
                case .leave(let old): leaving = lanes.center(of: old)
                case .releaseLane(let old): lanes.release(old)
                default: break
                }
            }
            var updated = Live(request: request, serverID: state.live[id]?.serverID)
            updated.continues = prepared.continues
            state.live[id] = updated
            state.presentations[id, default: Presentations()].admitted += 1
            style.set(CommandLineStyle(options: request.options), for: id)
            let center = opens ? lanes.open(lane) : (lanes.center(of: lane) ?? lanes.open(lane))
            return (center, leaving, updated.serverID)
        }
        guard let (center, leaving, serverKnown) = admitted else {
            if givenBack { throw Self.stopping }
            throw DBusError(
                name: AgentInterface.ErrorName.queueFull,
                message: "the agent holds \(AgentLimits.maximumLive) live toasts, its limit; close some first")
        }
        // Write-ahead: the toast is on disk before the server hears of it, so a crash from here on leaves it to
        // the next agent (docs/agent.md).
        let duration = try? toast.duration.resolved(default: .standardDefault)
        // An id is saved with the server that gave it, never without (a next agent would take it for any server's).
        let owner = desktop.serverOwner
        let notSaved = await saver.save(
            .put(
                AgentStore.Saved(
                    request: request, id: id, serverID: owner == nil ? nil : serverKnown, server: owner,
                    remaining: duration?.seconds, running: false)))
        // Shown all the same (a full disk is no reason to lose the message), and `send` says what is at stake.
        if let notSaved {
            style.warn("the toast is not saved, a restarted agent will not know it: \(notSaved)", for: id)
        }
        crash(at: "after-write-ahead")
        // Off its application's lane first (its end there is ignored: it is being presented anew).
        if let leaving {
            leaving.dismiss(id: id)
            await leaving.eventsDelivered()
        }
        center.present(toast)
        // A lane just opened waits for the presenter's first word on Do Not Disturb before it shows anything.
        await center.doNotDisturbKnown()
        if !isOnPresenter(id, in: center) {
            // Behind its application's front toast, held for Do Not Disturb, or already over: answer now, or once it
            // is shown when the sender needs the server's id (never for a held one: that may be hours).
            guard request.awaitShown, state.withLock({ $0.live[id] != nil }), !center.heldToastIDs.contains(id)
            else {
                await center.eventsDelivered()
                return [.string(id), .variantDictionary(queuedOrEnded(id))]
            }
            await shown(id)
        }
        let serverID: UInt32
        do {
            serverID = try await desktop.accepted(id)
        } catch let error as PresentationError {
            // Closed before the server answered (a duration of 0, a close), or withheld by the presenter for Do Not
            // Disturb (the center holds or drops it): its end, or how it is held, says the rest — once the
            // presenter's report of it and the center's event have reached this agent.
            if error.kind == .notPresented {
                await desktop.reportsDelivered()
                await center.eventsDelivered()
                return [.string(id), .variantDictionary(queuedOrEnded(id))]
            }
            let name =
                error.kind == .invalidInput
                ? AgentInterface.ErrorName.invalidToast : AgentInterface.ErrorName.unavailable
            throw DBusError(name: name, message: error.reason)
        }
        // What the presenter reported on the way (a degraded feature) has reached the center by now.
        await desktop.reportsDelivered()
        await center.eventsDelivered()
        // 0: no notification (a job view on Plasma). The id it had (`send -p` printed it, the script sends `-r` with
        // it), or a number of the agent's own, stays its name for `-r` and is what the sender is told.
        let knownAs = state.withLock { state -> UInt32 in
            if serverID != 0 {
                state.live[id]?.serverID = serverID
            } else if state.live[id] != nil, state.live[id]?.serverID == nil {
                state.lastViewID = max(state.lastViewID &+ 1, Self.viewIDs.lowerBound)
                state.live[id]?.serverID = state.lastViewID
            }
            return state.live[id]?.serverID ?? serverID
        }
        // Its server id (and its timer, as it runs now) is on disk before the answer: a crash after it leaves the
        // next agent able to show it again in place, with the time it has.
        let entry = center.entryState(of: id)
        let serverNotSaved = await saver.save([
            .server(id, Self.savedServerID(knownAs) ?? 0, server: desktop.serverOwner),
            .timer(id, remaining: entry?.remaining?.seconds, running: entry?.isRunning ?? false),
        ])
        if let serverNotSaved, notSaved == nil {
            style.warn(
                "the toast's server id is not saved, a restarted agent will show it anew: \(serverNotSaved)", for: id)
        }
        crash(at: "before-reply")
        var shown: [(String, DBusValue)] = [("server_id", .uint32(knownAs))]
        let degradations = style.takeWarnings(for: id)
        if !degradations.isEmpty { shown.append(("warnings", .strings(degradations))) }
        // Sent during Do Not Disturb (`--dnd show`): said as on the direct path.
        if let suppression = state.withLock({ $0.suppressed[id] }) { shown += AgentInterface.details(of: suppression) }
        return [.string(id), .variantDictionary(shown)]
    }

    /// Dies at fail point `step` when ``crashPoint`` names it.
    private func crash(at step: String) {
        if crashPoint == step { kill(getpid(), SIGKILL) }
    }

    /// Whether `center` has handed toast `id` to the presenter (one just presented is at the front when it is: a
    /// queued one costs a look through its lane).
    private func isOnPresenter(_ id: String, in center: ToastCenter) -> Bool {
        center.entryState(of: id)?.isOnPresenter ?? false
    }

    /// The center that holds live toast `id`, if any.
    private func center(holding id: String) -> ToastCenter? {
        guard let lane = state.withLock({ $0.machine.lanes[id] }) else { return nil }
        return lanes.center(of: lane)
    }

    /// `Present`'s details for a toast not on screen: `queued` while it waits, `ended` (the outcome's name) once
    /// it is over.
    private func queuedOrEnded(_ id: String) -> [(String, DBusValue)] {
        let (live, ended, suppressed) = state.withLock { ($0.live[id] != nil, $0.ended[id], $0.suppressed[id]) }
        let suppression = suppressed.map(AgentInterface.details(of:)) ?? []
        if live {
            let warnings = style.takeWarnings(for: id)
            return [("queued", .boolean(true))] + (warnings.isEmpty ? [] : [("warnings", .strings(warnings))])
                + suppression
        }
        return [("ended", .string(ended?.name ?? "closed"))] + suppression
    }

    /// Returns once toast `id` is on the presenter or has ended.
    private func shown(_ id: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLock { $0.shownWaiters[id, default: []].append(continuation) }
            // It may have been shown, held for Do Not Disturb, or ended before the waiter was in place.
            let onPresenter =
                center(holding: id).map { isOnPresenter(id, in: $0) || $0.heldToastIDs.contains(id) } ?? true
            if onPresenter { resumeShownWaiters(id) }
        }
    }

    private func resumeShownWaiters(_ id: String) {
        for waiter in state.withLock({ $0.shownWaiters.removeValue(forKey: id) ?? [] }) { waiter.resume() }
    }

    /// `Close(s id) → (b closed)`: false when no toast with this id is live.
    private func close(_ message: DBusMessage) throws -> [DBusValue] {
        guard let id = try message.arguments("s")[0].stringValue else { return [.boolean(false)] }
        if cancelSchedule(id) { return [.boolean(true)] }
        guard let center = center(holding: id), center.liveToastIDs.contains(id) else { return [.boolean(false)] }
        center.dismiss(id: id)
        return [.boolean(true)]
    }

    /// `Wait(s id) → (s outcome, a{sv} details)`: answers when the toast ends (at once for one that ended
    /// recently).
    private func wait(_ message: DBusMessage) async throws -> [DBusValue] {
        guard let id = try message.arguments("s")[0].stringValue else { return [] }
        let unknown = DBusError(
            name: AgentInterface.ErrorName.unknownToast, message: "no toast \"\(id)\" is live or ended recently")
        var outcome: ToastOutcome
        var missed = 0
        while true {
            // The agent's record first: it is written, with the toast's removal from `live`, as the end is delivered.
            if let ended = state.withLock({ $0.live[id] == nil ? $0.ended[id] : nil }) { return ended.arguments }
            guard let center = center(holding: id) else { throw unknown }
            do {
                outcome = try await center.outcome(of: id)
            } catch is ToastCenterError {
                // It ended in the center and the end is on its way to the agent (an action's end, right after the
                // click): once the center's events are delivered, the agent's record has it.
                missed += 1
                guard missed < 3 else { throw unknown }
                await center.eventsDelivered()
                continue
            }
            await center.eventsDelivered()
            // A snooze (`-A later=10m`) is the center's action, and the agent's deferral: the agent's record says so.
            if case .actionInvoked("later") = outcome,
                let ended = state.withLock({ $0.live[id] == nil ? $0.ended[id] : nil }), ended.name == "deferred"
            {
                return ended.arguments
            }
            // Still live after its end: a new presentation of the id took its place (`--id` again, or it moved to a
            // lane of its own), and this one was replaced.
            let (stillLive, continues) = state.withLock { ($0.live[id] != nil, $0.live[id]?.continues == true) }
            if stillLive, outcome != .replaced { outcome = .replaced }
            // A `-r` of its server id updated it: who waits for it waits for the updated toast's end.
            if outcome == .replaced, continues { continue }
            break
        }
        let record = state.withLock { $0.ended[id] }
        return AgentOutcome(
            outcome, serverID: record?.details["server_id"]?.uint32Value,
            activationToken: record?.details["activation_token"]?.stringValue,
            reply: record?.details["reply"]?.stringValue, unexplained: observer.unexplainedClose(of: id)
        ).arguments
    }

    /// `List() → aa{sv}`: the live toasts, front first, then the kept ones (Later).
    private func list() -> [DBusValue] {
        let live = state.withLock { $0.live }
        var items: [DBusValue] = []
        for center in lanes.centers {
            for (index, entry) in center.entryStates.enumerated() where !entry.isConfirmation {
                items.append(listItem(entry, front: index == 0, live: live[entry.id]))
            }
        }
        let scheduled = state.withLock { $0.scheduled.values.sorted { ($0.due, $0.id) < ($1.due, $1.id) } }
        for entry in scheduled {
            items.append(
                .variantDictionary([
                    ("id", .string(entry.id)), ("state", .string("scheduled")), ("running", .boolean(false)),
                    ("due", .double(entry.due)), ("title", .string(entry.request.options.title)),
                    ("status", .string((entry.request.options.status ?? .normal).rawValue)),
                ]))
        }
        return [.array("a{sv}", items)]
    }

    /// One toast of `List`.
    private func listItem(_ entry: ToastStack.EntryState, front: Bool, live toast: Live?) -> DBusValue {
        do {
            var fields: [(String, DBusValue)] = [
                ("id", .string(entry.id)),
                (
                    "state",
                    .string(front && entry.isOnPresenter ? "front" : entry.isOnPresenter ? "shown" : "waiting")
                ),
                ("running", .boolean(entry.isRunning)),
            ]
            if let remaining = entry.remaining { fields.append(("remaining", .double(remaining.seconds))) }
            if let toast {
                fields.append(("title", .string(toast.request.options.title)))
                fields.append(("status", .string((toast.request.options.status ?? .normal).rawValue)))
                if let serverID = toast.serverID { fields.append(("server_id", .uint32(serverID))) }
            }
            return .variantDictionary(fields)
        }
    }

    /// `GetInfo() → a{sv}`.
    private func info() -> [DBusValue] {
        [
            .variantDictionary([
                ("version", .string(version)), ("pid", .uint32(UInt32(getpid()))),
                ("uid", .uint32(getuid())), ("live", .uint32(UInt32(state.withLock { $0.live.count }))),
                ("max_visible", .uint32(UInt32(settings.maxVisible))),
                ("idle_timeout", .double(settings.idleTimeout?.seconds ?? 0)),
            ])
        ]
    }

    // MARK: - Events

    /// Follows the center: actions run their commands, ends are recorded for `Wait`, every change is saved and
    /// announced with the `Event` signal.
    private func watchEvents() {
        relay.set { [weak self] event in
            guard let self else { return }
            switch event {
            case .degraded(let id?, let reason):
                style.warn(reason, for: id)
            case .suppressed(let id, let suppression):
                state.withLock { state in
                    state.suppressed.remember(suppression, for: id)
                    if suppression.kind == .held { state.heldIDs.insert(id) }
                }
                announce(id, "suppressed", Dictionary(uniqueKeysWithValues: AgentInterface.details(of: suppression)))
                // A `Present` waiting for it to be shown answers now: it is held (for as long as Do Not Disturb lasts).
                if suppression.kind == .held { resumeShownWaiters(id) }
            case .actionInvoked(let id, "later", _) where state.withLock({ $0.live[id]?.request.options.snooze }) != nil:
                // `-A later=10m`: the toast goes now and comes back by itself (its end is recorded as deferred).
                snooze(id)
            case .replyAsked(let id, let actionID):
                announce(id, "reply_asked", ["action": .string(actionID)])
            case .replyCancelled(let id, let actionID):
                announce(id, "reply_cancelled", ["action": .string(actionID)])
            case .replied(let id, let actionID, let text):
                state.withLock { $0.live[id]?.reply = text }
                announce(id, "replied", ["action": .string(actionID), "text": .string(text)])
            case .actionInvoked(let id, let actionID, let token):
                let (command, reply) = state.withLock { state -> ([String]?, String?) in
                    state.live[id]?.activationToken = token
                    return (state.live[id]?.request.onAction[actionID], state.live[id]?.reply)
                }
                let request = state.withLock { $0.live[id]?.request }
                if let command, let request {
                    runner.run(
                        ActionRunner.Job(
                            argv: command,
                            environment: ActionEnvironment.environment(
                                of: request, action: actionID, toastID: id, activationToken: token, reply: reply,
                                fallback: sessionEnvironment),
                            workingDirectory: request.workingDirectory, toastID: id, action: actionID))
                }
                announce(id, "action", ["action": .string(actionID), "activation_token": .string(token ?? "")])
            case .shown(let id):
                resumeShownWaiters(id)
                // A scheduled toast is settled once a server has it (a bus closing before that gives it back).
                if let claimed, claimed.holds(id) {
                    let desktop = self.desktop
                    Task {
                        if (try? await desktop.accepted(id)) != nil { claimed.settle(id) }
                    }
                }
                // Shown after Do Not Disturb held it: a waiting `send` starts its clock again.
                let wasHeld = state.withLock { $0.heldIDs.remove(id) != nil }
                if wasHeld {
                    // With its server id once the server has it, for the `presented` line of a waiting `send`.
                    let desktop = self.desktop
                    Task { [weak self] in
                        let serverID = try? await desktop.accepted(id)
                        self?.announce(id, "shown", serverID.map { ["server_id": .uint32($0)] } ?? [:])
                    }
                }
                // Its timer starts now: what a restarted agent must know.
                let entry = center(holding: id)?.entryState(of: id)
                saver.changed(.timer(id, remaining: entry?.remaining?.seconds, running: entry?.isRunning ?? false))
            case .ended(let id, let outcome):
                // A replacement (`send --id` again) has already put the new toast in `live`: keep it. So does an end
                // that comes while a newer presentation of the id is on its way (``Presentations``).
                let ending = state.withLock { state -> (AgentOutcome, [AgentMachine.Action], Bool)? in
                    var counts = state.presentations[id] ?? Presentations(admitted: 1, ended: 0)
                    counts.ended += 1
                    let replaced = counts.ended < counts.admitted
                    state.presentations[id] = counts.ended < counts.admitted ? counts : nil
                    if replaced, state.live[id] == nil { return nil }
                    let live = replaced ? state.live[id] : state.live.removeValue(forKey: id)
                    // A snooze is a Later that comes back: its senders see it deferred.
                    let snoozed = outcome == .actionInvoked(actionID: "later") && live?.request.options.snooze != nil
                    let ended = AgentOutcome(
                        snoozed ? .deferred : outcome, serverID: live?.serverID, activationToken: live?.activationToken,
                        reply: live?.reply, unexplained: observer.unexplainedClose(of: id))
                    state.ended.remember(ended, for: id)
                    guard !replaced else { return (ended, [], true) }
                    let actions = state.machine.handle(.ended(id: id, replaced: false, now: now()))
                    for case .releaseLane(let lane) in actions { lanes.release(lane) }
                    // In the same step as the removal: a new presentation of the id admitted after it keeps its
                    // style, its routes and its journal record.
                    style.forget(id)
                    lanes.forget(id)
                    saver.changed(.end(id))
                    return (ended, actions, false)
                }
                guard let (ended, actions, replaced) = ending else { break }
                // A scheduled toast that failed on the way to the server (the bus closing under it) is still owed.
                if !replaced, let claimed, claimed.holds(id) {
                    if case .failed(.presenter) = outcome {} else { claimed.settle(id) }
                }
                if !replaced {
                    state.withLock { _ = $0.heldIDs.remove(id) }
                    resumeShownWaiters(id)
                }
                announceEnd(id, ended)
                perform(actions)
            case .presented(let id):
                // A new presentation: what Do Not Disturb did to an earlier one of the id is not its story.
                state.withLock { state in
                    state.suppressed.forget(id)
                    state.heldIDs.remove(id)
                }
                announce(id, "presented", [:])
            default:
                break
            }
        }
    }

    /// Passes on what the presenter tells the center about the server and the screen, as `Event` signals with an
    /// empty id — `server-left` (with `reason`), `server-back`, `paused`, `resumed` — for the commands that wait
    /// through the agent: they keep the same limits as a waiting `send` on the direct path (``WaitLimits``).
    private func watchReports() {
        let reports = observer.reports
        Task { [weak self] in
            for await report in reports {
                guard let self else { return }
                switch report {
                case .failed(let id, let reason, recoverable: true):
                    announce(id ?? "", "server-left", ["reason": .string(reason)])
                case .reshowRequested: announce("", "server-back", [:])
                case .pauseRequested: announce("", "paused", [:])
                case .resumeRequested: announce("", "resumed", [:])
                default: break
                }
            }
        }
    }

    /// The `ended` event of toast `id`: its outcome's name, with its details.
    private func announceEnd(_ id: String, _ ended: AgentOutcome) {
        announce(id, "ended", ["outcome": .string(ended.name)].merging(ended.details) { first, _ in first })
    }

    private func announce(_ id: String, _ kind: String, _ details: [String: DBusValue]) {
        events.yield([
            .string(id), .string(kind),
            .variantDictionary(details.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
        ])
    }

    // MARK: - Scheduled toasts

    /// Keeps `request` until `due` (seconds since 1970): on disk for the next agent of the user, in the machine for
    /// this one. Answers `(id, {"scheduled": due})`.
    private func schedule(_ request: AgentRequest, id: String, due: Double) throws -> [DBusValue] {
        guard let schedules else {
            throw DBusError(
                name: AgentInterface.ErrorName.unavailable,
                message: "the agent cannot keep scheduled toasts: its state folder cannot be used (see its log)")
        }
        var kept = request
        kept.options.due = nil
        kept.options.id = id
        kept.awaitShown = false
        let entry = ScheduleStore.Entry(id: id, due: due, request: kept)
        do {
            try schedules.put(entry)
        } catch {
            throw DBusError(
                name: AgentInterface.ErrorName.unavailable, message: "the scheduled toast cannot be kept: \(error)")
        }
        let actions = state.withLock { state -> [AgentMachine.Action] in
            let actions = state.machine.handle(.schedule(id: id, due: machineTime(of: due), now: now()))
            if actions.contains(.keepScheduled) { state.scheduled[id] = entry }
            return actions
        }
        guard actions.contains(.keepScheduled) else {
            _ = try? schedules.remove(id)
            throw DBusError(
                name: AgentInterface.ErrorName.queueFull,
                message: "the agent holds \(AgentLimits.maximumLive) toasts, its limit; close some first")
        }
        perform(actions)
        return [.string(id), .variantDictionary([("scheduled", .double(due))])]
    }

    /// The machine's time for `due` (seconds since 1970).
    private func machineTime(of due: Double) -> Duration {
        now() + .milliseconds(Int64(((due - AgentStore.now()) * 1000).rounded()))
    }

    /// Cancels the schedule of `id`, if it has one (and removes it from disk); whether it had one.
    @discardableResult
    private func cancelSchedule(_ id: String) -> Bool {
        let actions = state.withLock { state -> [AgentMachine.Action]? in
            guard state.scheduled.removeValue(forKey: id) != nil else { return nil }
            return state.machine.handle(.cancelSchedule(id: id, now: now()))
        }
        guard let actions else { return false }
        do { try schedules?.remove(id) } catch { ErrorLine.write("warning: \(error)") }
        perform(actions)
        return true
    }

    /// Shows the scheduled toast `id`, whose time has come, unless another agent of the user (another session)
    /// showed it first or this one is leaving; then answers the call the machine counted for it. It stays claimed
    /// (``ClaimedSchedules``) until a server accepts it: if the agent leaves before, it goes back to the user's store.
    private func fire(_ id: String) async {
        defer { leave() }
        guard let entry = state.withLock({ $0.scheduled.removeValue(forKey: id) }) else { return }
        // A session with no notification server (a headless `dbus-run-session`, an SSH login) leaves the toast to
        // one that has one: unclaimed, it stays in the user's file for that session's agent, and this one takes it
        // up again if a server comes here.
        guard await sessionShowsToasts() else {
            ErrorLine.write(
                "the scheduled toast \"\(id)\" is due, but this session has no notification server: it is left for "
                    + "a session that has one")
            awaitServerForSchedules()
            return
        }
        let mine: Bool
        do {
            mine = try claimed?.claim(entry) ?? true
        } catch {
            // The store cannot be changed: shown all the same (another session's agent may show it too).
            ErrorLine.write("warning: \(error)")
            mine = true
        }
        guard mine else { return }
        if entry.setAsideLost, !entry.request.onAction.isEmpty {
            runner.note(
                "toast \(id): the runtime file of its sender's environment is gone (the session it was sent in ended,"
                    + " or the machine restarted): its commands run with the kept variables only")
        }
        do {
            let toast = try entry.request.message()
            _ = try await present(
                Prepared(request: entry.request, toast: toast, continues: false, fromSchedule: true))
            // A server has it (its id is known): settled here, not only by the `shown` event's own look.
            if state.withLock({ $0.live[id]?.serverID }) != nil { claimed?.settle(id) }
        } catch let error as DBusError where error.name == AgentInterface.ErrorName.stopping {
            return  // given back as the agent left
        } catch {
            // Never showable as it is (the store refuses what is invalid): not kept. Anything else (the agent full,
            // the server or the bus gone) is given back when the agent leaves.
            let invalid = (error as? DBusError)?.name == AgentInterface.ErrorName.invalidToast
            if invalid { claimed?.settle(id) }
            ErrorLine.write(
                "warning: the scheduled toast \"\(id)\" cannot be shown: \(error)"
                    + (invalid ? "" : "; it is kept for the next agent"))
        }
    }

    /// Whether a toast shown here can reach a person: the notification service's name has an owner, or the bus can
    /// start one and the session has a display for it (D-Bus activation of a server fails without one).
    private func sessionShowsToasts() async -> Bool {
        let name = NotificationsClient.busName
        if (try? await connection.bus.nameOwner(of: name)) != nil { return true }
        guard
            environment["DISPLAY"].map({ !$0.isEmpty }) == true
                || environment["WAYLAND_DISPLAY"].map({ !$0.isEmpty }) == true
        else { return false }
        guard
            let reply = try? await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "ListActivatableNames"),
            let names = (try? reply.arguments("as"))?.first?.stringsValue
        else { return false }
        return names.contains(name.rawValue)
    }

    /// Takes up the user's schedules again once a notification server owns its name on this bus (once: one watch at
    /// a time).
    private func awaitServerForSchedules() {
        let start = serverWatch.withLock { watching in
            defer { watching = true }
            return !watching
        }
        guard start else { return }
        Task { [weak self, connection] in
            guard let changes = try? await connection.bus.nameOwnerChanges(of: NotificationsClient.busName) else {
                return
            }
            defer { self?.serverWatch.withLock { $0 = false } }
            for try await change in changes where change.newOwner != nil {
                self?.serverWatch.withLock { $0 = false }
                self?.takeUpSchedules()
                return
            }
        }
    }

    /// The agent is leaving: the scheduled toasts it claimed that no server accepted go back to the user's store,
    /// due at once, except (with `keepingLive`) those live here: the saved journal takes them to this bus's next
    /// agent.
    private func giveBackClaimedSchedules(keepingLive: Bool) {
        guard let claimed else { return }
        do {
            let given = try claimed.giveBack { id in keepingLive && state.withLock { $0.live[id] != nil } }
            guard !given.isEmpty else { return }
            ErrorLine.write(
                "giving back \(given.count) scheduled toast(s) no server showed, for the next agent: "
                    + given.joined(separator: ", "))
        } catch {
            ErrorLine.write("warning: scheduled toasts no server showed are lost: \(error)")
        }
    }

    /// `-A later=DURATION` chosen: the toast goes now and comes back after its snooze, by itself.
    private func snooze(_ id: String) {
        guard let request = state.withLock({ $0.live[id]?.request }), let seconds = request.options.snooze else {
            return
        }
        // (Its end, `.actionInvoked("later")`, follows from the center as for any action: recorded as deferred.)
        do {
            _ = try schedule(request, id: id, due: AgentStore.now() + seconds)
        } catch {
            ErrorLine.write("warning: the toast \"\(id)\" cannot come back later: \(error)")
        }
    }

    /// Holds what the user's `scheduled.json` holds: at start (each toast waits for its time, or is shown at once when
    /// its time came while no agent ran), and whenever the file changes (``ScheduleWatch``) — a schedule another
    /// session's agent or `close --id` made, moved or removed, a toast another agent showed (claimed) or gave back
    /// (``ClaimedSchedules``). The first agent of the user to reach a toast's time shows it.
    private func takeUpSchedules() {
        guard let schedules, let entries = schedules.loadIfLocked() else { return }
        // A claimed id is off the file until given back: one found there is a newer schedule of the id, taken up as
        // any other (a stale reading costs one claim that fails, for its due time is gone).
        let (actions, taken) = state.withLock { state -> ([AgentMachine.Action], [String]) in
            guard !state.leaving, !state.machine.isStopping else { return ([], []) }
            var actions: [AgentMachine.Action] = []
            var taken: [String] = []
            for entry in entries {
                guard state.scheduled[entry.id]?.due != entry.due else {
                    state.scheduled[entry.id] = entry
                    continue
                }
                let scheduled = state.machine.handle(
                    .schedule(id: entry.id, due: machineTime(of: entry.due), now: now()))
                if scheduled.contains(.keepScheduled) {
                    state.scheduled[entry.id] = entry
                    taken.append(entry.id)
                }
                actions += scheduled
            }
            let onDisk = Set(entries.map(\.id))
            for id in state.scheduled.keys.sorted() where !onDisk.contains(id) {
                state.scheduled[id] = nil
                actions += state.machine.handle(.cancelSchedule(id: id, now: now()))
            }
            return (actions, taken)
        }
        if !taken.isEmpty {
            ErrorLine.write("taking up \(taken.count) scheduled toast(s): \(taken.joined(separator: ", "))")
        }
        perform(actions)
    }

    /// Follows the user's `scheduled.json` from now on (``takeUpSchedules()`` on each change); without inotify, says so
    /// once and looks at the file every couple of seconds.
    private func watchSchedules() {
        guard let schedules else { return }
        let folder = schedules.folder
        let (watch, unwatched) = ScheduleWatch.start(folder: folder, name: ScheduleStore.fileName) { [weak self] in
            self?.takeUpSchedules()
        }
        scheduleWatch.withLock { $0 = watch }
        if let unwatched {
            ErrorLine.write(
                "warning: \(folder) cannot be watched (\(unwatched)): \(ScheduleStore.fileName) is looked at every"
                    + " \(ScheduleWatch.pollInterval.components.seconds) s instead")
        }
    }

    // MARK: - Saving and adopting

    /// Appends a batch of records to the journal (best effort: a failure is noted on stderr), and compacts it when
    /// its records outnumber twice the live toasts (or removes it when none is live). Called by the ``AgentSaver``
    /// only, one batch at a time, in order.
    private func write(_ records: [AgentStore.Record]) -> String? {
        let live = state.withLock { $0.live.count }
        do {
            let written = try store.append(records)
            if live == 0 {
                try store.compact([])
            } else if written > max(64, 2 * live) {
                compact()
            }
            return nil
        } catch {
            ErrorLine.write("warning: \(error)")
            return error.description
        }
    }

    /// Rewrites the journal as the live toasts with their remaining time now.
    private func compact() {
        let live = state.withLock { $0.live }
        // The server whose ids the live toasts hold (a change of owner forgets them all).
        let owner = desktop.serverOwner
        let states = Dictionary(
            lanes.centers.flatMap(\.entryStates).filter { !$0.isConfirmation }.map { ($0.id, $0) },
            uniquingKeysWith: { first, _ in first })
        let saved = live.map { id, toast in
            AgentStore.Saved(
                request: toast.request, id: id,
                // Never an id without the server that gave it, and only as the presenter holds it now.
                serverID: owner == nil ? nil : desktop.serverID(ofToast: id).flatMap(Self.savedServerID), server: owner,
                remaining: states[id]?.remaining?.seconds, running: states[id]?.isRunning ?? false)
        }
        do {
            try store.compact(saved)
        } catch {
            ErrorLine.write("warning: \(error)")
        }
    }

    /// `TakeHandOver`: adopts the hand-over file, if a `send` left one (it may have seen no owner of the name while
    /// this agent was taking it). One look at a time, in the order of the calls; each returns once its look is done.
    private func takeHandOver() async {
        let look = handOverTurn.withLock { last -> Task<Void, Never> in
            let previous = last
            let next = Task { [self] in
                await previous?.value
                if handOver.exists { await adoptSavedToasts([], handedOver: handOver.load()) }
            }
            last = next
            return next
        }
        await look.value
    }

    /// Shows again the toasts a previous agent saved, in place (their server ids adopted), with the time they had
    /// left (minus the time since, for the one whose timer ran); then writes the journal anew, with them. The
    /// `handedOver` toasts (a `send` showed them while no agent ran) are taken over as they are on screen, and the
    /// hand-over file is removed once they are in the journal.
    private func adoptSavedToasts(
        _ journal: [(toast: AgentStore.Saved, age: Double)], handedOver: [(toast: AgentStore.Saved, age: Double)]
    ) async {
        let loaded = journal + handedOver
        let onScreen = Set(handedOver.map(\.toast.id))
        let saved = loaded.map(\.toast)
        var ranOut: [String] = []
        for (item, age) in loaded {
            var request = item.request
            request.options.id = item.id
            if let remaining = item.remaining {
                let left = item.running ? remaining - age : remaining
                guard left > 0 else {
                    // Its time ran out while no agent was there: it expired, and what it left on screen is closed
                    // now, never shown again first (sent again with the few milliseconds it had, the server could
                    // expire it itself, or draw it anew, before the close).
                    expireSaved(item)
                    ranOut.append(item.id)
                    continue
                }
                request.options.duration = .duration(.seconds(left))
            }
            let toast: ToastMessage
            do throws(ToastOptionError) {
                toast = try request.message()
            } catch {
                // Never dropped without a word: the log says why, and `wait --id` gets the failure.
                let reason = "the saved toast \"\(item.id)\" cannot be shown again: \(error.message)"
                ErrorLine.write("warning: \(reason)")
                state.withLock { state in
                    var details: [String: DBusValue] = ["reason": .string(reason)]
                    if let serverID = item.serverID { details["server_id"] = .uint32(serverID) }
                    let failed = AgentOutcome(name: "failed", details: details)
                    state.ended.remember(failed, for: item.id)
                }
                continue
            }
            style.set(CommandLineStyle(options: request.options), for: item.id)
            if let serverID = item.serverID, serverID != 0 {
                // Shown before (by the agent that saved it, or by `send`): its sound has played. (0: it was a job
                // view, which ended with its agent.)
                desktop.adopt(
                    serverID: serverID, forToast: item.id, onScreen: onScreen.contains(item.id), soundPlayed: true,
                    server: item.server)
            }
            let center = state.withLock { state -> ToastCenter? in
                guard
                    case .admit(let lane, _)? = state.machine.handle(.present(id: item.id, traits: request.traits))
                        .first
                else { return nil }
                state.live[item.id] = Live(request: request, serverID: item.serverID)
                state.presentations[item.id, default: Presentations()].admitted += 1
                return lanes.open(lane)
            }
            center?.present(toast)
        }
        guard !saved.isEmpty else { return }
        // One line in agent.log for each source: what a restarted agent adopted, and how old the file was; what
        // `send` showed itself and handed over.
        func described(_ toasts: [AgentStore.Saved]) -> String {
            toasts.map { "\($0.id) (\($0.remaining.map { "\(($0 * 100).rounded() / 100) s left" } ?? "no limit"))" }
                .joined(separator: ", ")
        }
        if !journal.isEmpty {
            let age = journal.map(\.age).min() ?? 0
            ErrorLine.write(
                "adopting \(journal.count) saved toast(s) from \(Int(min(age, 1e12) * 1000)) ms ago: "
                    + described(journal.map(\.toast)))
        }
        if !ranOut.isEmpty {
            ErrorLine.write(
                "closing \(ranOut.count) saved toast(s) whose time ran out: \(ranOut.joined(separator: ", "))")
        }
        if !handedOver.isEmpty {
            ErrorLine.write(
                "taking over \(handedOver.count) toast(s) shown by send while no agent ran: "
                    + described(handedOver.map(\.toast)))
        }
        for center in lanes.centers { await center.flush() }
        state.withLock { state in
            for id in state.live.keys {
                // As the presenter holds it: an adopted id it refused (another server gave it) is no id of the toast.
                let known = state.live[id]?.serverID
                if known.map({ !Self.viewIDs.contains($0) }) ?? true {
                    state.live[id]?.serverID = desktop.serverID(ofToast: id)
                }
            }
        }
        // What was adopted, as it is now: one compact journal.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.saver.barrier { self.compact() }
                continuation.resume()
            }
        }
        // In the journal now (or, if it could not be written, noted on the log as every write failure is).
        if !handedOver.isEmpty { handOver.removeHandOver() }
    }

    /// Ends a saved toast whose time ran out while no agent ran: `expired` for whoever waits for it, and its
    /// notification, if a server showed it, closed.
    private func expireSaved(_ item: AgentStore.Saved) {
        let ended = AgentOutcome(.expired, serverID: item.serverID, activationToken: nil, unexplained: nil)
        state.withLock { $0.ended.remember(ended, for: item.id) }
        if let serverID = item.serverID, serverID != 0 {
            // (Never another server's: after a restart of the server the id may be another application's.)
            desktop.adopt(serverID: serverID, forToast: item.id, onScreen: true, soundPlayed: true, server: item.server)
            desktop.close(id: item.id, reason: .expired)
        }
        announceEnd(item.id, ended)
    }

    private func adopted() async {
        await withCheckedContinuation { continuation in
            let open = adoption.withLock { adoption in
                if !adoption.done { adoption.waiting.append(continuation) }
                return adoption.done
            }
            if open { continuation.resume() }
        }
    }

    private func openAfterAdoption() {
        let waiting = adoption.withLock { adoption in
            adoption.done = true
            defer { adoption.waiting = [] }
            return adoption.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// Why the agent could not start: no session bus or name (`toastkit agent` exits 69), or a state folder it cannot use
/// (74).
package struct AgentStartError: Error, Sendable {
    package var message: String
    package var stateUnusable = false

    package init(_ message: String, stateUnusable: Bool = false) {
        self.message = message
        self.stateUnusable = stateUnusable
    }
}

/// The agent's style: each toast's own `send` options (urgency, category, hints, transient, app name and icon) on
/// top of the standard theme, and the degradations reported for it until its `Present` answers.
package final class AgentStyle: ToastStyle, Sendable {
    private struct Entry {
        var style: CommandLineStyle
        var warnings: [String] = []
    }

    private let entries = Mutex<[String: Entry]>([:])

    package func set(_ style: CommandLineStyle, for id: String) {
        entries.withLock { $0[id] = Entry(style: style) }
    }

    package func forget(_ id: String) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }

    package func warn(_ reason: String, for id: String) {
        entries.withLock { $0[id]?.warnings.append(reason) }
    }

    package func takeWarnings(for id: String) -> [String] {
        entries.withLock { entries in
            defer { entries[id]?.warnings = [] }
            return entries[id]?.warnings ?? []
        }
    }

    package func makeRequest(for toast: PresentedToast) -> ToastRequest {
        guard let entry = entries.withLock({ $0[toast.id] }) else {
            return ThemedToastStyle(theme: .standard).makeRequest(for: toast)
        }
        return entry.style.makeRequest(for: toast)
    }
}

/// Hands every lane's center events to one handler, set once the agent is ready to follow them.
private final class EventRelay: Sendable {
    /// In a struct: a `Mutex` of a bare function type re-abstracts the closure at every access, and the chain of
    /// thunks grows with each event (10,000 toasts cost minutes).
    private struct Handler: Sendable {
        var handle: @Sendable (ToastEvent) -> Void
    }
    private let handler = Mutex<Handler?>(nil)

    func set(_ handler: @escaping @Sendable (ToastEvent) -> Void) {
        self.handler.withLock { $0 = Handler(handle: handler) }
    }

    func send(_ event: ToastEvent) {
        handler.withLock { $0 }?.handle(event)
    }
}

/// Lets the presenter, made before the agent, ask it for the environment a toast's sender captured.
private final class SenderEnvironments: Sendable {
    private let lookup = Mutex<(@Sendable (String) -> [String: String]?)?>(nil)

    func attach(_ body: @escaping @Sendable (String) -> [String: String]?) {
        lookup.withLock { $0 = body }
    }

    func environment(of id: String) -> [String: String]? {
        lookup.withLock { $0 }?(id)
    }
}
