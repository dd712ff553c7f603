// The agent's shell: what it is made of, its start and its stop, and the carrying out of what its ledger
// (``AgentLedger``) says. The jobs live beside it: the service (AgentService.swift), `Present`
// (AgentPresenting.swift), the queries (AgentQueries.swift), the centers' events (AgentEvents.swift), schedules
// (AgentSchedules.swift), the journal and adoption (AgentAdoption.swift).
package import DBus
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
package import ToastKit
import ToastModel

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
///
/// Its rules are the ledger's (``AgentLedger``, one lock); this class carries out what the ledger says.
package final class ToastAgent: Sendable {
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
    /// The centers' events, all to ``watchEvents()``.
    let relay: EventRelay
    package let desktop: DesktopNotificationPresenter
    package let observer: ObservingPresenter
    package let settings: AgentSettings
    /// The tool's version, for `GetInfo`.
    let version: String
    let ownerChanges: NameOwnerChanges
    let style: AgentStyle
    let store: AgentStore
    /// The toast a `send` showed itself while no agent ran, left for this agent (``AgentStore/handOver(environment:busID:)``).
    let handOver: AgentStore
    /// The hand-overs taken, one after another: each `TakeHandOver` looks at the file once those before it are done,
    /// and answers once its own look is done.
    let handOverTurn = Mutex<Task<Void, Never>?>(nil)
    /// Whether a due schedule waits for a notification server to come to this bus (``fire(_:)``).
    let serverWatch = Mutex(false)
    let runner: ActionRunner
    /// The agent's own environment: only its ``ActionEnvironment/sessionVariables`` are given to a command whose sender
    /// sent no environment.
    let environment: [String: String]
    /// The session as the agent reaches it: its environment, with the bus it is on (found at `/run/user/UID/bus` when
    /// no variable named it). What a click's command gets of the session when its sender had none of it.
    let sessionEnvironment: [String: String]
    /// The rules and what they know (the one lock of the agent's state).
    let ledger: Mutex<AgentLedger>
    /// What resumes each waiter the ledger names (``AgentLedger/Action/resumeShown(_:)``,
    /// ``AgentMachine/Action/openCalls(_:)``).
    let waiters = Waiters()
    /// The idle countdown and the wake-up of the next scheduled toast, sleeping now (each replaced by a newer one).
    let timers = Mutex<(idle: Task<Void, Never>?, schedule: Task<Void, Never>?)>((nil, nil))
    /// The user's scheduled toasts on disk (nil when the state folder cannot be used: scheduling is then refused).
    let schedules: ScheduleStore?
    /// Where the user's store of schedules is changed (its lock may be held by another process for up to its bound):
    /// a thread of its own, never the pool the calls are served on.
    let storeIO = BlockingIO(label: "org.toastkit.agent.schedules")
    /// Follows ``schedules``' folder for the changes other agents make.
    let scheduleWatch = Mutex<ScheduleWatch?>(nil)
    let saver = AgentSaver<AgentStore.Record>()
    /// The one time source of every timer and of the ledger's time (since the agent started).
    let time: AgentTime
    /// `TOASTKIT_FAILPOINT_AGENT_CRASH`: the step of `Present` at which this agent kills itself (SIGKILL), for the
    /// tests that prove a crash at each step loses nothing (docs/reliability.md): `after-write-ahead` (the toast on
    /// disk, the server not yet told) or `before-reply` (the server's id on disk, the caller not yet answered).
    let crashPoint: String?
    let finished: AsyncStream<Void>.Continuation
    /// The `Event` signals' arguments, emitted in order by one task: off the path of the call that caused them.
    let events: AsyncStream<EventSignal>.Continuation
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
        let senders = SenderEnvironments()
        // A toast's sound plays as its sender would play it: its TOASTKIT_SOUND_PLAYER, its PATH, its sound theme.
        desktop = DesktopNotificationPresenter(
            configuration: PresenterConfiguration(
                appName: "toastkit", bus: .session, callTimeout: AgentInterface.serverTimeout),
            soundEnvironment: { senders.environment(of: $0) })
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
        ledger = Mutex(
            AgentLedger(
                configuration: .init(maximumLive: AgentLimits.maximumLive, idleTimeout: settings.idleTimeout)))
        time = AgentTime()
        crashPoint = environment["TOASTKIT_FAILPOINT_AGENT_CRASH"].flatMap { $0.isEmpty ? nil : $0 }
        (exits, finished) = AsyncStream.makeStream()
        let (signals, events) = AsyncStream<EventSignal>.makeStream()
        self.events = events
        saver.attach { [weak self] records in self?.write(records) }
        // A reply prompt opens where its sender runs (its display), and a sound plays with its player, with the
        // environment `send` captured.
        senders.attach { [weak self] id in self?.ledger.withLock { $0.live[id]?.request.environment } }
        Task { [connection] in
            for await signal in signals {
                switch signal {
                case .emit(let arguments):
                    try? connection.emitSignal(
                        path: AgentInterface.path, interface: AgentInterface.interface,
                        member: AgentInterface.event.name, arguments: arguments)
                case .barrier(let continuation): continuation.resume()
                }
            }
        }
    }
}

// MARK: - Start and stop

extension ToastAgent {
    /// Connects, takes `org.toastkit.Agent1`, adopts the toasts a previous agent left, and serves.
    ///
    /// - Parameter beforeTakingName: called with the journal's path once it is known, before the name is taken (the
    ///   command starts the agent's keeper there: from the moment anyone can reach this agent, its death is seen).
    /// - Returns: nil when another agent already owns the name (and `replace` was not asked for).
    package static func start(
        settings: AgentSettings, environment: [String: String], version: String,
        beforeTakingName: (_ journal: String) -> Void = { _ in }
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
        beforeTakingName(store.path)
        let flags: NameRequestFlags =
            settings.replace ? [.replaceExisting, .doNotQueue] : [.doNotQueue, .allowReplacement]
        let agent: ToastAgent
        do {
            let changes = try await connection.bus.nameOwnerChanges(of: AgentInterface.busName)
            agent = ToastAgent(
                connection: connection, settings: settings, store: store, handOver: handOver,
                ownerChanges: changes, environment: environment, version: version)
            agent.export()
            guard try await takeName(on: connection, flags: flags) else {
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
        agent.perform(agent.ledger.withLock { $0.handle(.adopted) })
        // Before the start: a schedule taken up keeps the first idle countdown from being armed at all (a tiny idle
        // timeout could otherwise decide the exit in between).
        agent.watchSchedules()
        agent.takeUpSchedules()
        agent.perform(agent.ledger.withLock { $0.handle(.started(now: agent.time.now())) })
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
        perform(ledger.withLock { $0.leave() })
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
}

// MARK: - Carrying out what the rules say

extension ToastAgent {
    /// The ledger's time now.
    func now() -> Duration { time.now() }

    /// Carries out what the rules of lanes and life said, outside the ledger's lock: the timers, the exit, the
    /// scheduled toasts to fire and the calls to let in. (Their lanes' changes are the callers', ``carry(_:)``.)
    func perform(_ actions: [AgentMachine.Action]) {
        for action in actions {
            switch action {
            case .armIdle(let serial, let at):
                let task = Task { [weak self, time] in
                    guard (try? await time.sleep(until: at)) != nil, let self else { return }
                    perform(ledger.withLock { $0.handle(.idleDeadline(serial: serial, now: now())) })
                }
                timers.withLock { timers in
                    timers.idle?.cancel()
                    timers.idle = task
                }
            case .exit: finished.finish()
            case .armSchedule:
                // For the ledger's earliest time as it is now, read in the same step as the timer is replaced: calls
                // and the file watch carry out their actions side by side, and an arm worked out earlier must not
                // replace a later one's timer. (The timers' lock is taken inside the ledger's, never the other way.)
                ledger.withLock { current in
                    let task = current.machine.nextWakeUp.map { at in
                        Task { [weak self, time] in
                            guard (try? await time.sleep(until: at)) != nil, let self else { return }
                            perform(ledger.withLock { $0.handle(.scheduleDeadline(now: now())) })
                        }
                    }
                    timers.withLock { timers in
                        timers.schedule?.cancel()
                        timers.schedule = task
                    }
                }
            case .fire(let ids):
                Task { [weak self] in
                    for id in ids { await self?.fire(id) }
                }
            case .openCalls(let ids): waiters.resume(ids)
            // Carried out in the ledger's step that decided them (the lanes change with the rules).
            case .releaseLane, .keepScheduled, .leave, .takeCall, .refuseStopping, .admit, .refuseFull: break
            }
        }
    }

    /// Carries out what the ledger said of the centers' events, outside its lock (``perform(_:)`` for the rules of
    /// lanes and life). What is forgotten of an ended toast beside the ledger is forgotten in the ledger's step
    /// (``ended(_:_:)``), so that a presentation of the id admitted after it keeps its own.
    func carry(_ actions: [AgentLedger.Action]) {
        var machine: [AgentMachine.Action] = []
        for action in actions {
            switch action {
            case .machine(.releaseLane): break  // released in the ledger's step
            case .machine(let action): machine.append(action)
            case .resumeShown(let ids): waiters.resume(ids)
            case .announceEnd(let id, let outcome): announceEnd(id, outcome)
            case .forget: break  // in the ledger's step
            case .announceShownAfterHold(let id):
                // With its server id once the server has it, for the `presented` line of a waiting `send`.
                let desktop = self.desktop
                Task { [weak self] in
                    let serverID = try? await desktop.accepted(id)
                    self?.announce(id, .shown, serverID.map { ["server_id": .uint32($0)] } ?? [:])
                }
            case .runCommand(let id, let action, let argv, let request, let token, let reply):
                let environment = ActionEnvironment.environment(
                    of: request, action: action, toastID: id, activationToken: token, reply: reply,
                    fallback: sessionEnvironment)
                let job = ActionRunner.Job(
                    argv: argv, environment: environment, workingDirectory: request.workingDirectory, toastID: id,
                    action: action)
                guard SessionDisplay.variables(of: environment) == nil else {
                    runner.run(job)
                    break
                }
                // Neither the sender nor this agent had a display (an agent a cron job started): the session's.
                Task { [runner, connection] in
                    var job = job
                    let display = await SessionDisplay.lookUp(on: connection) ?? [:]
                    job.environment.merge(display) { _, session in session }
                    runner.run(job)
                }
            case .announceAction(let id, let action, let token):
                announce(id, .action, ["action": .string(action), "activation_token": .string(token ?? "")])
            case .snooze(let id, let request): Task { await self.snooze(id, request) }
            case .keepCommands(let id, let request): keepCommands(id, request)
            }
        }
        perform(machine)
    }

    /// Hands a center's end of toast `id` to the ledger; in the same step, what is kept of it beside the ledger — its
    /// style, its routes, its journal record, its lane — is forgotten when it was the id's end.
    func ended(_ id: String, _ outcome: ToastOutcome) -> [AgentLedger.Action] {
        let unexplained = observer.unexplainedClose(of: id)
        return ledger.withLock { ledger in
            let actions = ledger.handle(.ended(id: id, outcome: outcome, unexplained: unexplained, now: now()))
            for action in actions {
                switch action {
                case .machine(.releaseLane(let lane)): lanes.release(lane)
                case .forget(let id):
                    style.forget(id)
                    lanes.forget(id)
                    saver.changed(.end(id))
                default: break
                }
            }
            return actions
        }
    }
}
