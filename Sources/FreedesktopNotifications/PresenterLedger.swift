import ToastModel

// The rules both presenter machines share, written once: what they track of a toast, the link to their service and
// its generations, its owner, the waiters, remembered failures, and the handlers that are the same whatever the
// service (a waiter for a toast, the link ready or failed, the owner changed, the connection lost, a detach, a
// failure, a settled toast). Each machine keeps only what its service makes differ.

/// What a presenter machine tracks of one toast, whatever the service shows it.
protocol TrackedToast: Sendable {
    /// The service's id for the toast (a notification server's id, a portal id).
    associatedtype ServiceID: Sendable

    /// A toast nothing is known of yet.
    init()
    /// The latest content the center handed over.
    var latest: ToastPresentation? { get set }
    /// Whether the center wants it on screen.
    var wanted: Bool { get set }
    /// Whether `latest` is not on the service yet.
    var dirty: Bool { get set }
    /// Degradations already reported for this toast.
    var reported: Set<String> { get set }
    /// Why it could not be shown, last time.
    var lastFailure: PresentationError? { get set }
    /// Who waits until the service has answered everything for it.
    var waiters: [PresenterWaiterID] { get set }
    /// The id it is shown under on the service now.
    var serviceID: ServiceID? { get }
    /// Whether a call for it is on its way.
    var hasCallOnItsWay: Bool { get }
    /// Whether it has content the service has not been sent yet and should be.
    var hasContentToSend: Bool { get }
    /// The center no longer wants it: what was still to be sent is dropped.
    mutating func drop()
    /// Called when it cannot be shown: returns true when the center has ended it already, so the failure is not
    /// reported (and forgets what was to be sent); false otherwise.
    mutating func failsQuietly() -> Bool
}

extension TrackedToast {
    /// Nothing on its way and nothing left to send.
    var isSettled: Bool { !hasCallOnItsWay && !hasContentToSend }

    mutating func drop() {
        wanted = false
        dirty = false
        latest = nil
    }

    mutating func failsQuietly() -> Bool { false }

    /// What its waiters are told: the id it is shown under, or why it is not shown.
    func result(id: String) -> Result<ServiceID, PresentationError> {
        if let serviceID { return .success(serviceID) }
        return .failure(lastFailure ?? .notPresented(id))
    }
}

/// The bookkeeping both presenter machines keep in the same form.
struct PresenterLedger<Ready: Hashable & Sendable, Toast: TrackedToast>: Sendable {
    enum Link: Sendable, Hashable {
        /// Nothing asked for (or the last attempt failed).
        case none
        /// Asked for; answers of other generations are stale.
        case connecting(UInt64)
        /// Up, with what was read of the current service.
        case ready(Ready)
    }

    var link = Link.none
    fileprivate(set) var generation: UInt64 = 0
    /// The unique name of the service, when known.
    var owner: String?
    var toasts: [String: Toast] = [:]
    /// Toasts with content to send once the link is ready.
    var waitingForLink = WaitingIDs()
    /// Waiting for everything to settle.
    var settleWaiters: [PresenterWaiterID] = []
    /// Why recently forgotten toasts failed, so a late waiter gets the real reason rather than "not presented"
    /// (bounded: the oldest are dropped).
    var failures = Recents<PresentationError>()
    /// The time of the latest event (on the clock of the events).
    var now = Duration.zero
    #if DEBUG
        /// Events so far, to spread the invariant scan over many toasts.
        var checks = 0
    #endif

    /// What was read of the service, once the link is ready.
    var ready: Ready? {
        if case .ready(let ready) = link { return ready }
        return nil
    }

    /// Asks for a link unless one is up or being made; returns the generation asked for.
    mutating func connectIfNeeded() -> UInt64? {
        guard link == .none else { return nil }
        generation += 1
        link = .connecting(generation)
        return generation
    }

    /// Forgets a toast that is settled, not wanted, not on the service and not waited for, remembering why it
    /// failed; keeps it otherwise.
    mutating func store(_ toast: Toast, id: String) {
        if !toast.wanted, !toast.hasCallOnItsWay, toast.serviceID == nil, toast.waiters.isEmpty {
            toasts[id] = nil
            if let failure = toast.lastFailure { failures.remember(failure, for: id) }
        } else {
            toasts[id] = toast
        }
    }

    /// Whether `toast`, ended while its content waited for the link, keeps its waiters until the link is made or
    /// fails.
    func awaitsLink(_ toast: Toast, id: String) -> Bool {
        !toast.wanted && toast.serviceID == nil && waitingForLink.contains(id)
    }

    /// Whether the next invariant scan is due (every event while few toasts are tracked, then spread over more).
    mutating func invariantScanIsDue() -> Bool {
        #if DEBUG
            checks &+= 1
            return InvariantScan.isDue(step: checks, count: toasts.count)
        #else
            return false
        #endif
    }
}

/// A presenter machine built on the ledger: the handlers below are its rules wherever they are the same for every
/// service.
protocol LedgerMachine: PresenterMachine where Accepted == Toast.ServiceID {
    /// What it tracks of a toast.
    associatedtype Toast: TrackedToast
    /// What the link reads of the service before it is ready.
    associatedtype Ready: Hashable & Sendable

    /// The shared bookkeeping.
    var ledger: PresenterLedger<Ready, Toast> { get set }
    /// Whether nothing is on its way and nothing waits.
    var isSettled: Bool { get }
    /// The reason given when the service leaves the bus.
    static var serviceLeft: String { get }
    /// What a waiter for everything to settle is given.
    static var settledValue: Accepted { get }
    /// Sends what toast `id` needs next, if nothing for it is on its way; settles it otherwise.
    mutating func pump(_ id: String, into out: inout [Action])
    /// Forgets what belonged to the old owner of the service, when another takes its name (or nobody does); what
    /// was still to be sent to it waits for the link (``PresenterLedger/waitingForLink``) like any new content.
    mutating func ownerWillChange()
    /// Forgets what belonged to a connection that is gone (before every toast is ended).
    mutating func connectionWillEnd()
    /// Lets toast `id`, about to be settled, drop what only waited for something to send.
    mutating func willSettle(_ id: String, _ toast: inout Toast)
    /// A machine with the same settings and nothing else (for a detach).
    func detached() -> Self
    /// Checks what is kept by hand against the state it stands for; a broken invariant traps (debug builds only).
    func checkInvariants()
}

extension LedgerMachine {
    mutating func willSettle(_ id: String, _ toast: inout Toast) {}

    // MARK: Handlers

    /// Asks for the link unless one is up or being made.
    mutating func connectIfNeeded(into out: inout [Action]) {
        if let generation = ledger.connectIfNeeded() { out.append(Self.action(.connect(generation: generation))) }
    }

    /// Someone waits until the service has answered everything for toast `id` (for one ended while the link was
    /// made: until the link's outcome is known, as its other waiters).
    mutating func awaitAccepted(id: String, waiter: PresenterWaiterID, into out: inout [Action]) {
        guard var toast = ledger.toasts[id] else {
            out.append(Self.action(.resume([waiter], .failure(ledger.failures[id] ?? .notPresented(id)))))
            return
        }
        if toast.isSettled, !ledger.awaitsLink(toast, id: id) {
            out.append(Self.action(.resume([waiter], toast.result(id: id))))
        } else {
            toast.waiters.append(waiter)
            ledger.toasts[id] = toast
        }
    }

    /// The link asked for as `generation` is up: the toasts that waited for it go out.
    mutating func linkReady(generation: UInt64, _ ready: Ready, owner: String?, into out: inout [Action]) {
        guard ledger.link == .connecting(generation) else { return }
        ledger.link = .ready(ready)
        if ledger.owner == nil { ledger.owner = owner }
        for id in ledger.waitingForLink.takeAll() { pump(id, into: &out) }
    }

    /// The link asked for as `generation` could not be made: the toasts that waited for it fail, and those ended
    /// meanwhile tell their waiters why nothing reached the service.
    mutating func linkFailed(generation: UInt64, _ error: PresentationError, into out: inout [Action]) {
        guard ledger.link == .connecting(generation) else { return }
        ledger.link = .none
        giveUpWaitingForLink(error, into: &out)
    }

    /// The link the toasts waited for will not come: those with content fail, and those ended meanwhile tell their
    /// waiters why nothing reached the service.
    private mutating func giveUpWaitingForLink(_ error: PresentationError, into out: inout [Action]) {
        for id in ledger.waitingForLink.takeAll() {
            guard var toast = ledger.toasts[id], !toast.hasCallOnItsWay else { continue }
            if toast.hasContentToSend {
                fail(id, error, into: &out)
            } else if !toast.wanted {
                toast.lastFailure = error
                settle(id, toast, into: &out)
            }
        }
    }

    /// The service's name has a new owner (`nil`: nobody). The link read the old one, so the next toast reads the
    /// new one; with nobody, the toasts that waited fail for now, and the center shows them again when one comes.
    mutating func ownerChanged(_ newOwner: String?, into out: inout [Action]) {
        guard ledger.owner != newOwner else { return }
        ledger.owner = newOwner
        ownerWillChange()
        ledger.link = .none
        if newOwner != nil {
            if !ledger.waitingForLink.isEmpty { connectIfNeeded(into: &out) }
            out.append(Self.action(.report(.reshowRequested)))
        } else {
            giveUpWaitingForLink(PresentationError(.noServer, reason: Self.serviceLeft), into: &out)
            out.append(Self.action(.report(.failed(toastID: nil, reason: Self.serviceLeft, recoverable: true))))
        }
    }

    /// The connection is gone for good: the center ends every toast on the presenter (calls on their way fail with
    /// their own answers).
    mutating func connectionLost(_ error: PresentationError, into out: inout [Action]) {
        ledger.link = .none
        ledger.owner = nil
        ledger.waitingForLink.removeAll()
        connectionWillEnd()
        guard !ledger.toasts.isEmpty else { return }
        out.append(Self.action(.report(.failed(toastID: nil, reason: error.reason, recoverable: false))))
        for id in ledger.toasts.keys.sorted() {
            guard var toast = ledger.toasts[id] else { continue }
            toast.drop()
            toast.lastFailure = error
            settle(id, toast, into: &out)
        }
    }

    /// The presenter was detached from its center: every waiter for a toast is told, and everything is forgotten
    /// but who waits for everything to settle, the time and the numbers already given (a late answer to a link or a
    /// call of before never passes for one of after).
    mutating func reset(into out: inout [Action]) {
        let waiters = ledger.toasts.values.flatMap(\.waiters)
        if !waiters.isEmpty { out.append(Self.action(.resume(waiters, .failure(.notPresented("(detached)"))))) }
        var fresh = detached()
        fresh.ledger.settleWaiters = ledger.settleWaiters
        fresh.ledger.now = ledger.now
        fresh.ledger.generation = ledger.generation
        self = fresh
    }

    /// Tells the center of the screen saver's change.
    func screenSaverChanged(active: Bool, into out: inout [Action]) {
        out.append(Self.action(.report(active ? .pauseRequested : .resumeRequested)))
    }

    /// Reports each degradation of toast `id` once.
    func reportDegradations(_ reasons: [String], of id: String, _ toast: inout Toast, into out: inout [Action]) {
        for reason in reasons where toast.reported.insert(reason).inserted {
            out.append(Self.action(.report(.degraded(toastID: id, reason: reason))))
        }
    }

    /// Reports that the sound of toast `id` could not be played (once per reason while the toast is tracked).
    mutating func soundNotPlayed(_ id: String, reason: String, into out: inout [Action]) {
        guard var toast = ledger.toasts[id] else {
            return out.append(Self.action(.report(.degraded(toastID: id, reason: reason))))
        }
        reportDegradations([reason], of: id, &toast, into: &out)
        ledger.toasts[id] = toast
    }

    /// Reports that toast `id` could not be shown. A failure a service appearing later can fix leaves the toast
    /// wanted (the center keeps it and asks again); any other ends it in the center, so whatever it still has on
    /// the service goes and it is forgotten, remembering why.
    mutating func fail(_ id: String, _ error: PresentationError, into out: inout [Action]) {
        guard var toast = ledger.toasts[id] else { return }
        toast.lastFailure = error
        toast.dirty = false
        if toast.failsQuietly() {
            ledger.toasts[id] = toast
            settle(id, toast, into: &out)
            return
        }
        out.append(Self.action(.report(.failed(toastID: id, reason: error.reason, recoverable: error.isRecoverable))))
        if !error.isRecoverable { toast.drop() }
        ledger.toasts[id] = toast
        pump(id, into: &out)
    }

    /// Resumes the waiters of a settled toast and forgets it when the center no longer wants it. A toast ended while
    /// its content waited for the link keeps its waiters until the link is made or fails: they are told whether a
    /// service was there to show it.
    mutating func settle(_ id: String, _ toast: Toast, into out: inout [Action]) {
        var toast = toast
        willSettle(id, &toast)
        if toast.isSettled, !ledger.awaitsLink(toast, id: id), !toast.waiters.isEmpty {
            out.append(Self.action(.resume(toast.waiters, toast.result(id: id))))
            toast.waiters = []
        }
        ledger.store(toast, id: id)
    }

    /// Ends an event: who waits for everything to settle is resumed once it is; in debug builds, the invariants
    /// are checked (every event while few toasts are tracked, then spread over more).
    mutating func finish(into out: inout [Action]) {
        if !ledger.settleWaiters.isEmpty, isSettled {
            out.append(Self.action(.resume(ledger.settleWaiters, .success(Self.settledValue))))
            ledger.settleWaiters = []
        }
        if ledger.invariantScanIsDue() { checkInvariants() }
    }

    /// Starts an event that happened at `now` (a monotonic time). An earlier time than the last event's counts as
    /// the last event's: time never goes back for the rules.
    mutating func begin(at now: Duration) {
        if now > ledger.now { ledger.now = now }
    }
}
