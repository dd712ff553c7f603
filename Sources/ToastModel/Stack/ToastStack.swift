// ToastStack: a center's timing and ordering rules as a pure state machine — its state, its queries and its
// operations; the rules it applies are in ToastStack+Order, +Reports and +DoNotDisturb, its types in +Types.

/// The timing and ordering rules of a center as a plain value-type state machine (M10).
///
/// Time is a `Duration` since an origin the caller chooses (the center uses "since the center was made").
/// Each operation takes `now`, updates the stack, and returns the ``Output`` the caller must carry out, in
/// order: presenter commands, events, action runs, kept toasts. ``nextDeadline`` says when to call
/// ``advance(to:)`` next. Nothing here sleeps, locks or calls out, so every rule is tested deterministically.
///
/// The rules:
/// - **Order (M4).** Entries are front first, and the front is the newest toast on screen: the first
///   ``Configuration/maxVisible`` entries are handed to the presenter, the rest wait in arrival order. A new toast
///   goes in front while there is room on screen, and joins the back of the wait otherwise; when a toast on screen
///   ends, the oldest waiting one comes in, in front. Nothing on screen is closed to make room (but with
///   ``ToastOverflowPolicy/replaceOldest``, which ends the oldest toast for the new one). An indefinite
///   toast never covers a timed one: the newest timed toast on screen stays in front of it. A question (a toast with
///   a tap or buttons) never waits: when there is no room, it goes in front in a room of its own, which it keeps
///   until it ends or one of the `maxVisible` rooms frees.
/// - **Replace by id (M2).** Presenting a live id ends the old presentation with ``ToastOutcome/replaced`` and gives
///   the toast the new content with its full duration where it is: on screen it is updated in place and becomes the
///   front (no other toast leaves the screen); waiting, it keeps its place in the wait.
/// - **Only the front counts (M4).** Only the front entry's timer runs, and only while it is on the presenter,
///   nothing paused it and no action is in flight. Everyone else keeps their remaining time.
/// - **Durations (M3).** `.automatic` resolves to ``Configuration/defaultDuration``; `.indefinite` never runs out.
/// - **One ending (M9).** Every accepted presentation ends with exactly one ``ToastEvent/ended(id:outcome:)``.
///   Once an action is invoked, the presentation's outcome is fixed: whatever ends it reports that action. A reply
///   action asking for its text is not invoked yet: whatever ends the toast meanwhile reports its own outcome, after
///   ``ToastEvent/replyCancelled(id:actionID:)``, and the prompt is closed (``Output/cancelReplyPrompt(presentation:)``).
/// - **Do Not Disturb.** While the presenter reports it on, a new toast follows its ``ToastMessage/doNotDisturb``
///   policy: held outside the order (its time does not run) until it ends, then joining the back in arrival order;
///   ended at once with ``ToastOutcome/suppressed``; or shown as usual. Toasts waiting behind the visible part when
///   it comes on are held or dropped the same way; toasts on the presenter stay.
public struct ToastStack: Sendable {
    /// The settings.
    public internal(set) var configuration: Configuration
    /// Whether a presenter is attached; without one nothing is shown and no timer runs.
    public internal(set) var isPresenterAttached = false
    /// Whether the app paused the timers.
    public internal(set) var isPausedByApp = false
    /// Whether the presenter paused the timers (for example, screen locked).
    public internal(set) var isPausedByPresenter = false
    /// The Do Not Disturb state the presenter reported last (``ToastDoNotDisturb/off`` until it reports one, and
    /// again after it is detached).
    public internal(set) var doNotDisturb = ToastDoNotDisturb.off
    /// Whether the attached presenter has yet to report Do Not Disturb: nothing is shown meanwhile.
    public internal(set) var isAwaitingDoNotDisturb = false

    var entries = RingOrder<Entry>()
    /// Toasts held while Do Not Disturb is on, in arrival order: outside the order, never on the presenter, their
    /// time not running. Empty whenever Do Not Disturb is off.
    var held: [Entry] = []
    /// The ids in `entries` and `held`, so presenting a new id needs no scan of a long queue.
    var entryIDs: Set<String> = []
    /// How many entries were visible after the last reconcile: only those can still be on the presenter.
    var lastVisibleCount = 0
    /// Entries removed since the last reconcile: each lets one waiting entry slide into the visible part.
    var removedSinceReconcile = 0
    /// Entries on screen in a room of their own (``Entry/hasExtraRoom``): the visible part is ``capacity`` long.
    var questionRooms = 0
    /// Entries put in front since the last reconcile (new toasts while there was room, updated ones, ones taking a
    /// freed room): each may be new to the presenter, and each pushes a running timer one place back.
    var movedToFrontSinceReconcile = 0
    var nextSerial: UInt64 = 0
    /// The front entry got new content while on the presenter: the next reconcile sends it as an update (after the
    /// timers are settled, so the snapshot carries the timer state the presenter should follow). `announces`
    /// says whether the update is also an ``ToastEvent/updated(id:)`` (a replaced toast, not a confirmation).
    var pendingUpdate: (serial: UInt64, announces: Bool)?
    /// The presenter asked to show everything again: the next reconcile looks at every visible entry.
    var reshowVisible = false
    #if DEBUG
        /// Reconciles so far, to spread the full invariant scan over long stacks (see ``checkInvariants()``).
        var reconciles = 0
    #endif

    /// Creates an empty stack.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    // MARK: - Queries

    /// Whether a toast with `id` is live (shown, covered or waiting; a confirmation left after its toast ended is
    /// not).
    public func isLive(_ id: String) -> Bool {
        entryIDs.contains(id) && (entries.contains { $0.id == id && $0.isToast } || held.contains { $0.id == id })
    }

    /// The ids of live toasts that have actions, front first.
    public var liveToastIDsWithActions: [String] {
        (entries + held).compactMap { entry in
            guard case .toast(let message) = entry.content, !message.actions.isEmpty else { return nil }
            return entry.id
        }
    }

    /// The ids of live toasts, front first (confirmations excluded), then those held for Do Not Disturb.
    public var liveToastIDs: [String] {
        entries.filter(\.isToast).map(\.id) + held.map(\.id)
    }

    /// The ids of toasts held until Do Not Disturb ends, in arrival order.
    public var heldToastIDs: [String] {
        held.map(\.id)
    }

    /// The ids of entries on the presenter, front first (confirmations included).
    public var idsOnPresenter: [String] {
        entries.filter { $0.presenter == .shown }.map(\.id)
    }

    /// Every entry, front first, with its remaining time at `now`; then the toasts held for Do Not Disturb.
    public func entryStates(now: Duration) -> [EntryState] {
        (entries + held).map { $0.state(at: now) }
    }

    /// The toast with `id` (not a confirmation), with its remaining time at `now`; nil when it is not live. The
    /// search stops at the toast: a toast at the front (one that was just shown) costs no scan of the queue.
    public func entryState(of id: String, now: Duration) -> EntryState? {
        guard entryIDs.contains(id) else { return nil }
        return (entries.first { $0.id == id && $0.isToast } ?? held.first { $0.id == id })?.state(at: now)
    }

    /// Whether toast `id` is on the presenter. Only the visible part is looked at (the presenter never holds more than
    /// ``Configuration/maxVisible`` entries and the questions in rooms of their own): a toast waiting behind a long
    /// queue costs no scan of it.
    public func isOnPresenter(_ id: String) -> Bool {
        entries.prefix(capacity).contains { $0.id == id && $0.isToast && $0.presenter == .shown }
    }

    /// Whether timers are paused by the app or the presenter.
    public var isPaused: Bool { isPausedByApp || isPausedByPresenter }

    /// When the front entry's time runs out, if its timer is running.
    public var nextDeadline: Duration? {
        guard let front = entries.first, let since = front.runningSince, let remaining = front.remaining else {
            return nil
        }
        return since + remaining
    }

    // MARK: - Operations

    /// Presents `message` (M2, M3, M4). An invalid message ends at once with ``ToastFailure/invalid(_:)``.
    public mutating func present(_ message: ToastMessage, now: Duration) -> [Output] {
        var out: [Output] = []
        out.reserveCapacity(6)
        expireDue(now: now, into: &out)
        let remaining: Duration?
        do {
            try message.validate(defaultDuration: configuration.defaultDuration)
            remaining = try message.duration.resolved(default: configuration.defaultDuration)
        } catch {
            out.append(.event(.ended(id: message.id, outcome: .failed(.invalid(error)))))
            return out
        }
        nextSerial += 1
        if entryIDs.contains(message.id), let index = entries.firstIndex(where: { $0.id == message.id }) {
            var entry = entries.remove(at: index)
            if entry.isToast {
                cancelPrompt(of: entry, into: &out)
                out.append(.event(.ended(id: entry.id, outcome: entry.fixedOutcome ?? .replaced)))
            }
            entry.serial = nextSerial
            entry.content = .toast(message)
            entry.remaining = remaining
            entry.runningSince = nil
            entry.pendingAction = nil
            entry.isPrompting = false
            entry.toldSentAnyway = false
            if entry.presenter == .gone { entry.presenter = .off }
            if index < capacity {
                // On screen (or about to be): updated where it is, and the front; the visible set stays the same.
                entries.prepend(entry)
                movedToFrontSinceReconcile += 1
            } else if entry.isQuestion {
                // Waiting, and now a question: it never waits for a room (M4); every room is taken (it waited), so
                // it is placed as a new question is, in a room of its own, in front.
                place(entry)
            } else {
                // Waiting: new content, same place in the wait; nothing on screen is closed for it.
                entries.insert(entry, at: index)
            }
            out.append(.event(.presented(id: message.id)))
            if entry.presenter == .shown { pendingUpdate = (entry.serial, true) }
        } else {
            if let index = held.firstIndex(where: { $0.id == message.id }) {
                let old = held.remove(at: index)
                entryIDs.remove(old.id)
                out.append(.event(.ended(id: old.id, outcome: .replaced)))
            }
            let entry = Entry(id: message.id, serial: nextSerial, content: .toast(message), remaining: remaining)
            if doNotDisturb.isOn, message.doNotDisturb != .show {
                holdOrDrop(entry, policy: message.doNotDisturb, into: &out)
            } else {
                place(entry)
                entryIDs.insert(message.id)
                out.append(.event(.presented(id: message.id)))
                trimOverflow(into: &out)
            }
        }
        reconcile(now: now, into: &out)
        return out
    }

    /// Puts a new toast in the order (M4): in front while there is room on screen (the former front is covered); a
    /// question in front in a room of its own when there is none; otherwise at the back of the wait.
    mutating func place(_ entry: Entry) {
        var entry = entry
        if entries.count >= capacity {
            guard entry.isQuestion else {
                entries.append(entry)
                return
            }
            entry.hasExtraRoom = true
            questionRooms += 1
        }
        entries.prepend(entry)
        movedToFrontSinceReconcile += 1
    }

    /// With ``ToastOverflowPolicy/replaceOldest``, ends the oldest toasts (never one in a room of its own) while the order
    /// is longer than the visible part, so the new one is shown at once.
    mutating func trimOverflow(into out: inout [Output]) {
        guard configuration.overflow == .replaceOldest else { return }
        while entries.count > capacity {
            let oldest = entries.dropLast().indices.filter { !entries[$0].hasExtraRoom }.min {
                entries[$0].serial < entries[$1].serial
            }!
            end(at: oldest, outcome: .replaced, closeReason: .replaced, into: &out)
        }
    }

    /// Closes the toast with `id` for the app (``ToastOutcome/closedByApp``). Unknown ids do nothing.
    public mutating func dismiss(id: String, now: Duration) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        if let index = entries.firstIndex(where: { $0.id == id }) {
            end(at: index, outcome: .closedByApp, closeReason: .closedByApp, into: &out)
        } else if let index = held.firstIndex(where: { $0.id == id }) {
            let entry = held.remove(at: index)
            entryIDs.remove(entry.id)
            finish(entry, outcome: .closedByApp, closeReason: nil, into: &out)
        }
        reconcile(now: now, into: &out)
        return out
    }

    /// Closes every toast for the app, front first.
    public mutating func dismissAll(now: Duration) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        // All at once, front first (ending them one by one from the front would shift the array each time).
        let all = entries + held
        entries.removeAll()
        held.removeAll()
        entryIDs.removeAll()
        questionRooms = 0
        removedSinceReconcile += all.count
        for entry in all { finish(entry, outcome: .closedByApp, closeReason: .closedByApp, into: &out) }
        return out
    }

    /// Freezes every remaining time (app request).
    public mutating func pause(now: Duration) -> [Output] {
        setPaused(byApp: true, now: now)
    }

    /// Lets the front timer continue after ``pause(now:)``.
    public mutating func resume(now: Duration) -> [Output] {
        setPaused(byApp: false, now: now)
    }

    /// A presenter was attached: the visible entries are shown and the front timer starts. With
    /// `awaitingDoNotDisturb` (a presenter that reports Do Not Disturb) nothing is shown before its first report.
    public mutating func attachPresenter(now: Duration, awaitingDoNotDisturb: Bool = false) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        isPresenterAttached = true
        isAwaitingDoNotDisturb = awaitingDoNotDisturb
        reconcile(now: now, into: &out)
        return out
    }

    /// The presenter is being detached: its toasts are closed with ``ToastCloseReason/detached`` and wait,
    /// keeping their remaining time. Its Do Not Disturb state goes with it: held toasts join the waiting ones.
    public mutating func detachPresenter(now: Duration) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        isPresenterAttached = false
        isAwaitingDoNotDisturb = false
        // A prompt belongs to the presenter: it closes, and the toast waits with its time, as the others do.
        for index in entries.indices where entries[index].isPrompting {
            cancelPrompt(of: entries[index], into: &out)
            entries[index].isPrompting = false
            entries[index].pendingAction = nil
            leavePrompt(at: index, now: now)
            if entries[index].presenter == .gone { entries[index].presenter = .off }
        }
        if doNotDisturb.isOn { out.append(.event(.doNotDisturbChanged(.off))) }
        doNotDisturb = .off
        releaseHeld(into: &out)
        reconcile(now: now, into: &out)
        return out
    }

    /// Ends the front toasts whose time ran out by `now` and brings the next ones forward.
    public mutating func advance(to now: Duration) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        reconcile(now: now, into: &out)
        return out
    }

    /// Handles a report from the presenter.
    public mutating func handle(_ report: ToastPresenterReport, now: Duration) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        switch report {
        case .actionInvoked(let toastID, let key, let token):
            invokeAction(toastID: toastID, key: key, token: token, reply: nil, now: now, into: &out)
        case .replied(let toastID, let key, let text, let token):
            invokeAction(toastID: toastID, key: key, token: token, reply: text, now: now, into: &out)
        case .closed(let toastID, let reason):
            closedByPresenter(toastID: toastID, reason: reason, into: &out)
        case .failed(let toastID, let reason, let recoverable):
            presenterFailed(toastID: toastID, reason: reason, recoverable: recoverable, into: &out)
        case .degraded(let toastID, let reason):
            out.append(.event(.degraded(id: toastID, reason: reason)))
        case .reshowRequested:
            reshow(now: now, into: &out)
        case .pauseRequested:
            isPausedByPresenter = true
        case .resumeRequested:
            isPausedByPresenter = false
        case .doNotDisturbChanged(let state):
            doNotDisturbChanged(to: state, into: &out)
        case .withheld(let toastID):
            withheld(toastID: toastID, now: now, into: &out)
        }
        reconcile(now: now, into: &out)
        return out
    }

    /// Applies an invoked action's effect, after its handler and the observer ran (M5). Does nothing if the
    /// presentation already ended (for example, the handler re-presented the same id).
    public mutating func completeAction(_ invocation: ActionInvocation, now: Duration) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        guard let index = entries.firstIndex(where: { $0.serial == invocation.presentation }),
            entries[index].pendingAction == invocation.action.id,
            case .toast(let message) = entries[index].content
        else {
            reconcile(now: now, into: &out)
            return out
        }
        let actionID = invocation.action.id
        entries[index].pendingAction = nil
        switch invocation.action.effect {
        case .later:
            // Kept first, so whoever sees `.deferred` (a tool about to exit) finds it in the store.
            out.append(.keepForLater(message))
            end(at: index, outcome: .deferred, closeReason: .deferred, into: &out)
        case .dismiss:
            if let confirmation = invocation.action.confirmation {
                out.append(.event(.ended(id: message.id, outcome: .actionInvoked(actionID: actionID))))
                var entry = entries.remove(at: index)
                nextSerial += 1
                entry.serial = nextSerial
                entry.content = .confirmation(confirmation)
                entry.remaining = configuration.confirmationDuration
                entry.runningSince = nil
                if entry.presenter == .gone { entry.presenter = .off }
                entries.prepend(entry)
                movedToFrontSinceReconcile += 1
                if entry.presenter == .shown { pendingUpdate = (entry.serial, false) }
            } else {
                end(at: index, outcome: .actionInvoked(actionID: actionID), closeReason: .actionCompleted, into: &out)
            }
        }
        reconcile(now: now, into: &out)
        return out
    }

}
