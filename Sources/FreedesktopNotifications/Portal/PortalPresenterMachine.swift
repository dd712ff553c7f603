import DBus
package import ToastModel

/// The portal presenter's rules as a plain value: events go in with the time they happen, the actions to carry out
/// come out, in order.
///
/// The notification portal has no timeout, no closed signal and no in-place update the Debian 12 backend survives, so
/// the machine keeps what the desktop presenter's server keeps: per toast, the latest content the center wants on
/// screen, the portal id it is shown under, and whether an `AddNotification` is on its way. Nothing here locks,
/// sleeps, sends or reads a file, so every rule is tested without a bus (``PortalNotificationPresenter`` is the thin
/// shell; docs/decisions/0005-portal.md says why the rules are these).
///
/// The rules:
/// - **A fresh portal id per presentation.** Showing new content for a toast adds it under a new id and removes the
///   old one; an id is never added twice. (xdg-desktop-portal-gtk 1.14.1 crashes after an id that was added again is
///   removed — NOTES P26 — and every later call is lost.)
/// - **An id is removed only once it has settled**: ``settleTime`` after its `AddNotification` was answered. The
///   portal answers before its backend has the notification (and the backend has it only once the notification
///   server answered), so an earlier `RemoveNotification` overtakes the add and the notification stays on screen
///   for good. New content for a toast whose id has not settled waits (latest wins); a close is carried out at once
///   for the center and the removal follows when the id settles.
/// - **Latest wins.** At most one `AddNotification` per toast is on its way; content that arrives meanwhile collapses
///   into the newest. Distinct toasts are never coalesced.
/// - **Only the real portal may speak.** `ActionInvoked` counts only from the current owner of
///   `org.freedesktop.portal.Desktop`, only for the id a toast is shown under now, and only for an action name this
///   machine gave that notification.
/// - **Nothing comes back but actions.** The portal reports no close, so the center's own timing ends every toast
///   that is not acted on; the machine never reports `closed`.
/// - **Portals come and go.** The interface's `version` is read once per owner (version 2 keys are never sent to a
///   version 1 portal, which refuses the whole notification for them). A new owner asks the center to show its toasts
///   again (their old ids are removed then); no owner is a recoverable failure.
package struct PortalPresenterMachine: Sendable {
    /// Identifies an ``PortalNotificationPresenter/accepted(_:)`` waiter; the shell keeps the continuations.
    package typealias WaiterID = UInt64

    /// How long after its `AddNotification` was answered a portal id is removed at the earliest, by default.
    package static let defaultSettleTime = Duration.milliseconds(500)

    /// Something that happened.
    package enum Event: Sendable {
        /// The center wants this content on screen (a show or an update), with what the shell read from its icon file.
        case show(ToastPresentation, iconFile: PortalIconFile?)
        /// The center wants the toast gone.
        case close(id: String)
        /// Treat `portalID` as the notification toast `toastID` is shown under (a tool that remembers portal ids across
        /// runs): the toast's next content replaces it.
        case adopt(portalID: String, toastID: String)
        /// Someone waits until the portal has answered every `AddNotification` for the toast.
        case awaitAccepted(id: String, waiter: WaiterID)
        /// Someone waits until everything is settled: no call on its way, nothing waiting for the link, no removal
        /// held until an id settles.
        case awaitSettled(waiter: WaiterID)
        /// The link asked for with ``Action/connect(generation:)`` is up: the portal's interface version and owner.
        case linkReady(generation: UInt64, version: UInt32, owner: String?)
        /// The link asked for could not be made, or the portal has no notification interface.
        case linkFailed(generation: UInt64, PresentationError)
        /// The portal answered the `AddNotification` sent as `call` (success: the unique name that answered).
        case addAnswered(id: String, call: UInt64, Result<String?, PresentationError>)
        /// The portal answered a `RemoveNotification` (whatever it answered: the id is gone for us).
        case removeAnswered(portalID: String)
        /// `ActionInvoked` arrived from `sender`.
        case actionInvoked(PortalActionInvoked, sender: String?)
        /// `org.freedesktop.portal.Desktop` has a new owner (`nil`: nobody).
        case ownerChanged(String?)
        /// The screen saver's owner said it became active or inactive.
        case screenSaverChanged(active: Bool)
        /// Time passed: the moment asked for with ``Action/wake(at:)`` (or later) has come.
        case tick
        /// The connection is gone for good.
        case connectionLost(PresentationError)
        /// The sound asked for with ``Action/playSound(id:_:)`` could not be played, for this reason.
        case soundNotPlayed(id: String, reason: String)
        /// The presenter was detached from its center: forget everything.
        case reset
    }

    /// Something the shell must do, in order.
    package enum Action: Sendable, Hashable {
        /// Make the connection (or reuse it) and read the portal's `version` and owner, then report
        /// ``Event/linkReady(generation:version:owner:)`` or ``Event/linkFailed(generation:_:)``.
        case connect(generation: UInt64)
        /// Send `AddNotification(portalID, notification)`; report its answer as
        /// ``Event/addAnswered(id:call:_:)`` with `call`.
        case add(id: String, call: UInt64, portalID: String, PortalNotification)
        /// Send `RemoveNotification(portalID)`; report its answer as ``Event/removeAnswered(portalID:)`` (whatever
        /// it is: the answer only tells that the call is through).
        case remove(portalID: String)
        /// Tell the center, in this order.
        case report(ToastPresenterReport)
        /// Resume these ``PortalNotificationPresenter/accepted(_:)`` waiters.
        case resume([WaiterID], Result<String, PresentationError>)
        /// Feed ``Event/tick`` at this time (a time on the clock of the events) or soon after.
        case wake(at: Duration)
        /// Play the toast's sound here, because the portal plays none (version 1); report a failure as
        /// ``Event/soundNotPlayed(id:reason:)``.
        case playSound(id: String, ToastSound)
    }

    /// A notification on the portal (added, or on its way).
    struct Posted: Sendable {
        var portalID: String
        /// Portal action name → presenter key.
        var actionKeys: [String: String]
        /// When the id may be removed (``settleTime`` after its add was answered).
        var settledAt: Duration
    }

    struct Adding: Sendable {
        var call: UInt64
        var portalID: String
        var actionKeys: [String: String]
        /// The sound of the content on its way, and the sound to play once the portal took it.
        var sound: ToastSound?
        var playing: ToastSound?
    }

    struct Toast: TrackedToast {
        var latest: ToastPresentation?
        /// What the shell read from its icon file.
        var iconFile: PortalIconFile?
        var wanted = false
        /// Whether `latest` is not on the portal yet.
        var dirty = false
        /// Its `AddNotification` on its way.
        var adding: Adding?
        /// The notification the toast is shown under now.
        var shown: Posted?
        var reported: Set<String> = []
        var lastFailure: PresentationError?
        var waiters: [WaiterID] = []
        /// The sound of the content the portal last took: an update with the same sound plays nothing again.
        var soundOnService: ToastSound?

        var serviceID: String? { shown?.portalID }
        var hasCallOnItsWay: Bool { adding != nil }
        var hasContentToSend: Bool { wanted && dirty }

        mutating func drop() {
            wanted = false
            dirty = false
            latest = nil
            iconFile = nil
        }
    }

    /// The presenter's settings (markup, message limit).
    package let configuration: PresenterConfiguration
    /// How long after its `AddNotification` was answered a portal id is removed at the earliest.
    package let settleTime: Duration
    private let idPrefix: String
    /// The link (the portal's interface version), the owner, the toasts, the waiters.
    var ledger = PresenterLedger<UInt32, Toast>()
    /// The toast each portal id that may still speak belongs to (shown or being added).
    private var toastForPortalID: [String: String] = [:]
    private var nextCall: UInt64 = 0
    private var nextPortalID: UInt64 = 0
    /// Toasts with new content held until their current id settles.
    private var waitingForSettle: Set<String> = []
    /// Ids no toast owns any more, removed once they settle.
    private var retiring: [(portalID: String, due: Duration)] = []
    /// `RemoveNotification` calls on their way, by portal id (an adopted id may be removed twice). An answer for an id
    /// not here is stale (its connection was lost) and changes nothing.
    private var removing: [String: Int] = [:]

    package static let portalLeft = "the desktop portal left the bus; toasts come back when it starts"

    /// - Parameters:
    ///   - idPrefix: The start of every portal id this machine makes (then a serial number). Portal ids are per app
    ///     (every unsandboxed program is the same app, `""`), so the shell makes it unique per presenter.
    ///   - settleTime: See ``settleTime``.
    package init(
        configuration: PresenterConfiguration, idPrefix: String, settleTime: Duration = defaultSettleTime
    ) {
        self.configuration = configuration
        self.idPrefix = idPrefix
        self.settleTime = settleTime
    }

    // MARK: - Queries

    /// The portal's interface version, once the link is ready.
    package var version: UInt32? { ledger.ready }

    /// The unique name of the portal, when known.
    package var owner: String? { ledger.owner }

    /// The portal id the toast is shown under (or being added under).
    package func portalID(ofToast id: String) -> String? {
        ledger.toasts[id]?.adding?.portalID ?? ledger.toasts[id]?.shown?.portalID
    }

    /// The ids the machine still tracks (for tests of its bookkeeping).
    package var trackedToastIDs: Set<String> { Set(ledger.toasts.keys) }

    /// The ids the center wants on screen now.
    package var wantedToastIDs: Set<String> { Set(ledger.toasts.filter { $0.value.wanted }.keys) }

    /// `AddNotification` calls on their way.
    package var addCallsInFlight: Int { ledger.toasts.values.filter { $0.adding != nil }.count }

    /// Portal ids waiting to settle before they are removed.
    package var retiringPortalIDs: [String] { retiring.map(\.portalID) }

    /// No call on its way, no toast waiting for the link, nothing held until an id settles.
    package var isSettled: Bool {
        removing.isEmpty && ledger.waitingForLink.isEmpty && waitingForSettle.isEmpty && retiring.isEmpty
            && ledger.toasts.values.allSatisfy { $0.adding == nil }
    }

    // MARK: - Events

    /// Applies `event`, which happened at `now` (a monotonic time; an earlier time than the last event's counts as
    /// the last event's), and returns what to do, in order.
    package mutating func handle(_ event: Event, now: Duration) -> [Action] {
        begin(at: now)
        var out: [Action] = []
        switch event {
        case .show(let presentation, let iconFile):
            let id = presentation.id
            ledger.failures.forget(id)
            var toast = ledger.toasts[id] ?? Toast()
            toast.latest = presentation
            toast.iconFile = iconFile
            toast.wanted = true
            toast.dirty = true
            ledger.toasts[id] = toast
            pump(id, into: &out)
        case .close(let id):
            guard var toast = ledger.toasts[id] else { break }
            toast.drop()
            ledger.toasts[id] = toast
            waitingForSettle.remove(id)
            pump(id, into: &out)
        case .adopt(let portalID, let toastID):
            var toast = ledger.toasts[toastID] ?? Toast()
            if let old = toast.shown { retire(old, into: &out) }
            toast.shown = Posted(portalID: portalID, actionKeys: [:], settledAt: .zero)
            ledger.toasts[toastID] = toast
        case .awaitSettled(let waiter):
            ledger.settleWaiters.append(waiter)
        case .awaitAccepted(let id, let waiter):
            awaitAccepted(id: id, waiter: waiter, into: &out)
        case .linkReady(let generation, let version, let owner):
            linkReady(generation: generation, version, owner: owner, into: &out)
        case .linkFailed(let generation, let error):
            linkFailed(generation: generation, error, into: &out)
        case .addAnswered(let id, let call, let result):
            answered(id, call: call, result, into: &out)
        case .removeAnswered(let portalID):
            guard let count = removing[portalID] else { break }
            removing[portalID] = count > 1 ? count - 1 : nil
        case .actionInvoked(let signal, let sender):
            // Only the real portal may speak, only about a notification a live toast is shown under now, and only
            // with an action name this machine gave it.
            guard let sender, sender == owner, let toastID = toastForPortalID[signal.id],
                let toast = ledger.toasts[toastID],
                toast.wanted
            else { break }
            let keys =
                toast.shown?.portalID == signal.id ? toast.shown?.actionKeys : toast.adding.map(\.actionKeys)
            guard let key = keys?[signal.action] else { break }
            out.append(
                .report(.actionInvoked(toastID: toastID, key: key, activationToken: signal.activationToken)))
        case .ownerChanged(let newOwner):
            ownerChanged(newOwner, into: &out)
        case .screenSaverChanged(let active):
            screenSaverChanged(active: active, into: &out)
        case .tick:
            let due = retiring.filter { $0.due <= ledger.now }
            retiring.removeAll { $0.due <= ledger.now }
            for entry in due { remove(entry.portalID, into: &out) }
            if let next = retiring.map(\.due).min() { out.append(.wake(at: next)) }
            let waiting = waitingForSettle.sorted()
            waitingForSettle = []
            for id in waiting { pump(id, into: &out) }
        case .soundNotPlayed(let id, let reason):
            soundNotPlayed(id, reason: reason, into: &out)
        case .connectionLost(let error):
            connectionLost(error, into: &out)
        case .reset:
            reset(into: &out)
        }
        finish(into: &out)
        return out
    }

    /// Checks the id map against the toasts and the queues against what waits in them; a broken one traps (debug
    /// builds, every event while few toasts are tracked, then spread over more).
    func checkInvariants() {
        #if DEBUG
            for (id, toast) in ledger.toasts {
                if let adding = toast.adding {
                    precondition(toastForPortalID[adding.portalID] == id, "toast \(id)'s add is not mapped")
                }
                if let shown = toast.shown, let owner = toastForPortalID[shown.portalID] {
                    precondition(owner == id, "toast \(id)'s portal id is mapped to \(owner)")
                }
                precondition(!(toast.dirty && !toast.wanted), "toast \(id) has content to send but is not wanted")
            }
            for (portalID, id) in toastForPortalID {
                let toast = ledger.toasts[id]
                precondition(
                    toast?.adding?.portalID == portalID || toast?.shown?.portalID == portalID,
                    "portal id \(portalID) maps to \(id), which is not shown under it")
            }
            precondition(removing.values.allSatisfy { $0 > 0 }, "a removal is counted below one")
            for id in waitingForSettle {
                precondition(ledger.toasts[id] != nil, "untracked toast \(id) waits to settle")
            }
        #endif
    }

    // MARK: - Sending

    /// Sends what toast `id` needs next, if nothing for it is on its way: its latest content under a new id (removing
    /// the old one), or the removal of its notification. Resumes its waiters and forgets it once it is settled and
    /// gone.
    mutating func pump(_ id: String, into out: inout [Action]) {
        guard var toast = ledger.toasts[id], toast.adding == nil else { return }
        if toast.wanted {
            if toast.dirty, let presentation = toast.latest {
                guard case .ready(let version) = ledger.link else {
                    ledger.waitingForLink.insert(id)
                    connectIfNeeded(into: &out)
                    return
                }
                if let shown = toast.shown, ledger.now < shown.settledAt {
                    // Replacing it now would remove an id the portal may not have passed on yet: wait (latest wins).
                    if waitingForSettle.insert(id).inserted { out.append(.wake(at: shown.settledAt)) }
                    return
                }
                toast.dirty = false
                let mapped: PortalNotification
                do {
                    mapped = try PortalNotificationMapping.notification(
                        presentation, version: version, configuration: configuration, iconFile: toast.iconFile,
                        soundIsNew: presentation.request.sound != toast.soundOnService
                            && !presentation.toast.soundHasPlayed)
                } catch let error {
                    ledger.toasts[id] = toast
                    fail(id, PresentationError(.invalidInput, reason: error.description), into: &out)
                    return
                }
                reportDegradations(mapped.degradations, of: id, &toast, into: &out)
                // The old notification goes first (it has settled: new content waited for that above). GNOME Shell 43
                // shows nothing when a banner is removed while the new notification waits in its queue: the removal
                // hides the banner without the animation whose end shows the next one (`messageTray.js`,
                // `_hideNotification(false)` from `_updateState`, which does not look at the queue again).
                if let old = toast.shown {
                    toast.shown = nil
                    retire(old, into: &out)
                }
                nextCall += 1
                nextPortalID += 1
                let portalID = "\(idPrefix)\(nextPortalID)"
                toast.adding = Adding(
                    call: nextCall, portalID: portalID, actionKeys: mapped.actionKeys,
                    sound: presentation.request.sound, playing: mapped.localSound)
                toastForPortalID[portalID] = id
                out.append(.add(id: id, call: nextCall, portalID: portalID, mapped))
                ledger.toasts[id] = toast
                return
            }
        } else if let shown = toast.shown {
            toast.shown = nil
            retire(shown, into: &out)
        }
        settle(id, toast, into: &out)
    }

    /// Removes a notification no toast is shown under any more: at once when it has settled, else when it does.
    private mutating func retire(_ posted: Posted, into out: inout [Action]) {
        if toastForPortalID[posted.portalID] != nil { toastForPortalID[posted.portalID] = nil }
        if posted.settledAt <= ledger.now {
            remove(posted.portalID, into: &out)
        } else {
            if retiring.allSatisfy({ $0.due > posted.settledAt }) { out.append(.wake(at: posted.settledAt)) }
            retiring.append((posted.portalID, posted.settledAt))
        }
    }

    private mutating func remove(_ portalID: String, into out: inout [Action]) {
        removing[portalID, default: 0] += 1
        out.append(.remove(portalID: portalID))
    }

    // MARK: - Answers

    private mutating func answered(
        _ id: String, call: UInt64, _ result: Result<String?, PresentationError>, into out: inout [Action]
    ) {
        guard var toast = ledger.toasts[id], let adding = toast.adding, adding.call == call else { return }
        toast.adding = nil
        switch result {
        case .success(let sender):
            if owner == nil { ledger.owner = sender }
            let posted = Posted(
                portalID: adding.portalID, actionKeys: adding.actionKeys, settledAt: ledger.now + settleTime)
            if let sender, sender != owner {
                // Answered by a portal that has since been replaced (the owner change asked the center to show the
                // toast again): the id means nothing to the new one; remove it in case its backend lived on.
                retire(posted, into: &out)
            } else {
                // An id adopted while the add was on its way is replaced by it.
                if let adopted = toast.shown { retire(adopted, into: &out) }
                toast.shown = posted
                toast.lastFailure = nil
                toast.soundOnService = adding.sound
                if let playing = adding.playing { out.append(.playSound(id: id, playing)) }
            }
        case .failure(let error):
            toastForPortalID[adding.portalID] = nil
            ledger.toasts[id] = toast
            fail(id, error, into: &out)
            return
        }
        ledger.toasts[id] = toast
        pump(id, into: &out)
    }
}

extension PortalPresenterMachine: LedgerMachine {
    static var serviceLeft: String { portalLeft }
    static var settledValue: String { "" }

    /// The ids stay: a restarted portal whose backend lived on still shows them, and the center's show-again
    /// replaces (removes) them.
    mutating func ownerWillChange() {}

    /// Nothing the portal was asked for is waited for any more; only the ids of adds on their way (whose answers
    /// still come) may still speak.
    mutating func connectionWillEnd() {
        waitingForSettle = []
        retiring = []
        removing = [:]
        toastForPortalID = toastForPortalID.filter { entry in ledger.toasts[entry.value]?.adding?.portalID == entry.key
        }
        for id in ledger.toasts.keys { ledger.toasts[id]?.shown = nil }
    }

    /// Its portal ids go on from where they were: an id is never added twice (NOTES P26), not after a detach either.
    func detached() -> Self {
        var fresh = PortalPresenterMachine(configuration: configuration, idPrefix: idPrefix, settleTime: settleTime)
        fresh.nextCall = nextCall
        fresh.nextPortalID = nextPortalID
        return fresh
    }

    static func step(_ action: Action) -> PresenterStep<String>? {
        switch action {
        case .connect(let generation): .connect(generation: generation)
        case .report(let report): .report(report)
        case .resume(let waiters, let result): .resume(waiters, result)
        case .wake(let at): .wake(at: at)
        case .add, .remove, .playSound: nil
        }
    }

    static var tick: Event? { .tick }
    static var attached: Event? { nil }
}

extension PortalPresenterMachine.Event: PresenterEvent {}
extension PortalPresenterMachine.Action: PresenterAction {}
