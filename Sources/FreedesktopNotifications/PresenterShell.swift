import DBus
import Synchronization
import ToastModel

/// Identifies a waiter of a presenter machine (``PresenterShell/accepted(_:)``, ``PresenterShell/flush()``); the
/// shell keeps the continuations.
typealias PresenterWaiterID = UInt64

/// What a machine asks the shell to do that is the same for every backend.
enum PresenterStep<Accepted: Sendable>: Sendable {
    /// Make the link (or reuse it) and read what the backend needs, then feed the backend's link event.
    case connect(generation: UInt64)
    /// Tell the center, in this order.
    case report(ToastPresenterReport)
    /// Resume these waiters.
    case resume([PresenterWaiterID], Result<Accepted, PresentationError>)
    /// Feed the machine's tick at this time (on the clock of the events) or soon after.
    case wake(at: Duration)
}

/// The events every machine takes from the shell. A machine's event type has cases of these names, and they are
/// these events.
protocol PresenterEvent: Sendable {
    /// Someone waits until the service has answered everything sent or queued for toast `id`.
    static func awaitAccepted(id: String, waiter: PresenterWaiterID) -> Self
    /// Someone waits until everything is settled.
    static func awaitSettled(waiter: PresenterWaiterID) -> Self
    /// The link asked for could not be made.
    static func linkFailed(generation: UInt64, _ error: PresentationError) -> Self
    /// The connection is gone for good.
    static func connectionLost(_ error: PresentationError) -> Self
    /// The presenter was detached from its center: forget everything.
    static var reset: Self { get }
}

/// The steps every machine asks of the shell (``PresenterStep``). A machine's action type has cases of these names,
/// and they are these steps.
protocol PresenterAction: Sendable {
    /// What a waiter for a toast's acceptance gets.
    associatedtype Accepted: Sendable
    /// ``PresenterStep/connect(generation:)``.
    static func connect(generation: UInt64) -> Self
    /// ``PresenterStep/report(_:)``.
    static func report(_ report: ToastPresenterReport) -> Self
    /// ``PresenterStep/resume(_:_:)``.
    static func resume(_ waiters: [PresenterWaiterID], _ result: Result<Accepted, PresentationError>) -> Self
    /// ``PresenterStep/wake(at:)``.
    static func wake(at: Duration) -> Self
}

/// A presenter's rules as the shared shell drives them: a plain value, events in (with the time they happen),
/// actions out.
protocol PresenterMachine: Sendable {
    /// Something that happened.
    associatedtype Event: PresenterEvent
    /// Something the shell must do.
    associatedtype Action: PresenterAction where Action.Accepted == Accepted
    /// What a waiter for a toast's acceptance gets: the service's id for the toast.
    associatedtype Accepted: Sendable

    /// Applies `event` at `now` and returns what to do, in order.
    mutating func handle(_ event: Event, now: Duration) -> [Action]

    /// The step an action stands for when the shell carries it out itself; nil for the backend's own calls.
    static func step(_ action: Action) -> PresenterStep<Accepted>?

    /// The moment asked for with ``PresenterStep/wake(at:)`` has come (nil for a machine that never asks).
    static var tick: Event? { get }
    /// The presenter was attached to a center (nil for a machine that does not care).
    static var attached: Event? { get }
}

extension PresenterMachine {
    /// The machine's action for a step the shell carries out itself.
    static func action(_ step: PresenterStep<Accepted>) -> Action {
        switch step {
        case .connect(let generation): .connect(generation: generation)
        case .report(let report): .report(report)
        case .resume(let waiters, let result): .resume(waiters, result)
        case .wake(let at): .wake(at: at)
        }
    }
}

/// What differs between the desktop server and the portal, for the shared shell: the service's names, how its
/// signals and failures read, what the link reads before it is ready, and the calls.
protocol PresenterBackend: Sendable {
    /// The rules.
    associatedtype Machine: PresenterMachine

    /// The settings (bus, call timeout, signals, screen lock).
    var configuration: PresenterConfiguration { get }
    /// The service's well-known name, whose owner is followed.
    var service: BusName { get }
    /// The rule for the service's own signals.
    var serviceRule: MatchRule { get }
    /// Rules for other signals the backend follows (each naming its sender), when listening.
    var otherRules: [MatchRule] { get }

    /// The machine's event for what arrived on the link, if it is one.
    func event(for signal: BusLink.Signal) -> Machine.Event?
    /// Why the link could not be made, or why it was lost.
    func failure(_ error: any Error) -> PresentationError
    /// Reads what the machine needs from a new link and returns its link-ready event (or its link-failed one).
    func ready(_ link: BusLink, generation: UInt64) async -> Machine.Event
    /// Carries out one of the backend's own actions (a call) on `link`; its answer goes back through `answer`, on
    /// the connection's I/O thread, or at once when there is no link.
    func carryOut(_ action: Machine.Action, on link: BusLink?, answer: @escaping @Sendable (Machine.Event) -> Void)
}

/// The shell both presenters share: it feeds its machine one event at a time under one lock and carries out what
/// the machine returns — D-Bus calls outside the lock, reports to the center in order on a task of their own (never
/// on the connection's I/O thread, where replies and signals arrive), waiters resumed, one wake-up timer for the
/// earliest moment the machine asked for — and keeps the one link to the bus, made at first use.
final class PresenterShell<Backend: PresenterBackend>: Sendable {
    typealias Machine = Backend.Machine

    private struct State: Sendable {
        var machine: Machine
        var events: ToastPresenterEvents?
        var link: BusLink?
        var linkTask: Task<BusLink, any Error>?
        var waiters: [PresenterWaiterID: CheckedContinuation<Machine.Accepted, any Error>] = [:]
        var nextWaiter: PresenterWaiterID = 0
        /// The wake-up the timer task sleeps until, if one does.
        var wake: (at: Duration, task: Task<Void, Never>)?
    }

    let backend: Backend
    private let state: Mutex<State>
    private let time: ToastTimeSource
    /// Reports to the center, in order, off the I/O thread.
    private let reports = ReportQueue()

    init(backend: Backend, machine: Machine, clock: some Clock<Duration>) {
        self.backend = backend
        state = Mutex(State(machine: machine))
        time = ToastTimeSource(clock)
    }

    deinit {
        reports.finish()
        let (connection, wake) = state.withLock { ($0.link?.connection, $0.wake?.task) }
        wake?.cancel()
        connection?.close()
    }

    // MARK: - The center

    /// Keeps the center's sink.
    func connect(_ events: ToastPresenterEvents) {
        state.withLock { $0.events = events }
        if let attached = Machine.attached { handle(attached) }
    }

    /// Forgets the center and closes the connection.
    @discardableResult
    func disconnect() -> DBusConnection? {
        let (link, actions, wake) = state.withLock { state in
            let link = state.link
            let actions = queueReports(state.machine.handle(Machine.Event.reset, now: time.now()), state: state)
            let wake = state.wake?.task
            state.events = nil
            state.link = nil
            state.linkTask = nil
            state.wake = nil
            return (link, actions, wake)
        }
        wake?.cancel()
        // On the link that is closing: what the reset sends last (the end of a job view) goes before the close.
        carryOut(actions, link: link)
        link?.connection.close()
        return link?.connection
    }

    /// Feeds one event to the machine under the lock and carries out what it returns.
    func handle(_ event: Machine.Event) {
        let (actions, link) = state.withLock { state in
            (queueReports(state.machine.handle(event, now: time.now()), state: state), state.link)
        }
        carryOut(actions, link: link)
    }

    /// Reads the machine under the lock.
    func read<T>(_ body: (Machine) -> T) -> T {
        state.withLock { body($0.machine) }
    }

    /// Waits until the service has answered everything for toast `id`, and returns its id there.
    func accepted(_ id: String) async throws -> Machine.Accepted {
        try await wait { Machine.Event.awaitAccepted(id: id, waiter: $0) }
    }

    /// Returns once the machine is settled and every report that produced has been handed to the center.
    func flush() async {
        _ = try? await wait { Machine.Event.awaitSettled(waiter: $0) }
        await reports.delivered()
    }

    /// Returns once every report made so far has been handed to the center.
    func reportsDelivered() async {
        await reports.delivered()
    }

    /// Feeds the machine the event `event` makes with a new waiter, and returns once the machine resumes that waiter.
    func wait(_ event: @escaping (PresenterWaiterID) -> Machine.Event) async throws -> Machine.Accepted {
        try await withCheckedThrowingContinuation { continuation in
            let actions = state.withLock { state -> [Machine.Action] in
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                return queueReports(state.machine.handle(event(state.nextWaiter), now: time.now()), state: state)
            }
            carryOut(actions)
        }
    }

    // MARK: - Carrying out

    /// Queues the reports among `actions` for the center, under the lock, so they keep the machine's order whichever
    /// thread carries out the rest. Returns what is left to do outside the lock.
    private func queueReports(_ actions: [Machine.Action], state: State) -> [Machine.Action] {
        reports.queueReports(actions, to: state.events) { action in
            if case .report(let report)? = Machine.step(action) { report } else { nil }
        }
    }

    /// Carries out actions outside the lock.
    private func carryOut(_ actions: [Machine.Action], link: BusLink? = nil) {
        for action in actions {
            switch Machine.step(action) {
            case .connect(let generation)?:
                Task { await self.makeLink(generation: generation) }
            case .resume(let ids, let result)?:
                let continuations = state.withLock { state in ids.compactMap { state.waiters.removeValue(forKey: $0) } }
                for continuation in continuations { continuation.resume(with: result.mapError { $0 as any Error }) }
            case .wake(let at)?:
                arm(at)
            case .report?:
                break  // queued under the lock
            case nil:
                backend.carryOut(action, on: link) { [weak self] event in self?.handle(event) }
            }
        }
    }

    /// Makes sure a timer task wakes the machine by `deadline` (one task at a time, for the earliest deadline; the
    /// machine asks again for later ones when it wakes).
    private func arm(_ deadline: Duration) {
        let stale = state.withLock { state -> Task<Void, Never>? in
            if let wake = state.wake, wake.at <= deadline { return nil }
            let stale = state.wake?.task
            let task = time.wake(at: deadline) { [weak self] in self?.woke(at: deadline) }
            state.wake = (deadline, task)
            return stale
        }
        stale?.cancel()
    }

    private func woke(at deadline: Duration) {
        state.withLock { state in
            if state.wake?.at == deadline { state.wake = nil }
        }
        if let tick = Machine.tick { handle(tick) }
    }

    // MARK: - The link

    /// The link, made at first use (one attempt at a time; a failed one is tried again by the next caller).
    func link() async throws -> BusLink {
        if let link = state.withLock({ $0.link }) { return link }
        let task = state.withLock { state -> Task<BusLink, any Error> in
            if let task = state.linkTask { return task }
            let task = Task { try await self.openLink() }
            state.linkTask = task
            return task
        }
        do {
            return try await task.value
        } catch {
            state.withLock { if $0.linkTask == task { $0.linkTask = nil } }
            throw error
        }
    }

    private func openLink() async throws -> BusLink {
        let weak = Weak(self)
        let backend = self.backend
        let link = try await BusLink.open(
            configuration: backend.configuration, service: backend.service, serviceRule: backend.serviceRule,
            otherRules: backend.otherRules
        ) { signal in
            if let event = backend.event(for: signal) { weak.value?.handle(event) }
        } lost: { connection, reason in
            weak.value?.lost(connection, reason: reason)
        }
        state.withLock { $0.link = link }
        return link
    }

    /// Opens the link if needed and lets the backend read what the machine needs, for the machine's `connect`.
    private func makeLink(generation: UInt64) async {
        let link: BusLink
        do {
            link = try await self.link()
        } catch {
            handle(Machine.Event.linkFailed(generation: generation, backend.failure(error)))
            return
        }
        handle(await backend.ready(link, generation: generation))
    }

    private func lost(_ connection: DBusConnection, reason: DBusError) {
        let current = state.withLock { state -> Bool in
            guard state.link?.connection === connection else { return false }
            state.link = nil
            state.linkTask = nil
            return true
        }
        if current { handle(Machine.Event.connectionLost(backend.failure(reason))) }
    }
}

/// A weak reference that can cross into tasks, so a listening task never keeps its owner alive.
final class Weak<Value: AnyObject & Sendable>: Sendable {
    private struct Box {
        weak var value: Value?
    }
    private let storage: Mutex<Box>
    init(_ value: Value) { storage = Mutex(Box(value: value)) }
    /// The value, while it lives.
    var value: Value? { storage.withLock { $0.value } }
}
