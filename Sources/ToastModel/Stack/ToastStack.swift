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
///   ends, the oldest waiting one comes in, in front. Nothing on screen is ever closed to make room. An indefinite
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
    /// The settings of a stack.
    public struct Configuration: Sendable, Hashable {
        /// The duration of `.automatic` toasts.
        public var defaultDuration: ToastDuration
        /// How many toasts are handed to the presenter at most (at least 1).
        public var maxVisible: Int
        /// What happens to toasts beyond ``maxVisible``.
        public var overflow: ToastOverflowPolicy
        /// How long a confirmation text replaces a toast after an action.
        public var confirmationDuration: Duration
        /// The built-in labels.
        public var labels: ToastLabels
        /// The least time a timed toast has left once a reply prompt opens for it (``ToastReplyPrompt/allowance``):
        /// its time runs on, and when it is up the prompt is closed and the toast expires.
        public var replyAllowance: Duration

        /// How many toasts of one center are on screen at once unless the app says otherwise: three, stacked as
        /// the desktop draws them, the newest in front.
        public static let standardMaxVisible = 3

        /// Creates a configuration. `maxVisible` below 1 is taken as 1.
        public init(
            defaultDuration: ToastDuration = ToastDuration.standardDefault,
            maxVisible: Int = Configuration.standardMaxVisible,
            overflow: ToastOverflowPolicy = .queue,
            confirmationDuration: Duration = .milliseconds(1500),
            labels: ToastLabels = ToastLabels(language: .english),
            replyAllowance: Duration = ToastReplyPrompt.allowance
        ) {
            self.defaultDuration = defaultDuration
            self.maxVisible = max(1, maxVisible)
            self.overflow = overflow
            self.confirmationDuration = confirmationDuration
            self.labels = labels
            self.replyAllowance = replyAllowance
        }
    }

    /// Something the caller must do, in order.
    public enum Output: Sendable {
        /// Call ``ToastPresenter/show(_:)``.
        case show(PresentedToast)
        /// Call ``ToastPresenter/update(_:)``.
        case update(PresentedToast)
        /// Call ``ToastPresenter/close(id:reason:)``.
        case close(id: String, reason: ToastCloseReason)
        /// Call ``ToastPresenter/timerChanged(id:remaining:isRunning:)``: the timer of a toast on the presenter
        /// started or stopped.
        case timer(id: String, remaining: Duration?, isRunning: Bool)
        /// Deliver an event.
        case event(ToastEvent)
        /// Run the action's handler, then the observer, then call ``ToastStack/completeAction(_:now:)``.
        case runAction(ActionInvocation)
        /// Ask the presenter for the reply's text (``ToastPresenter/promptReply(_:)``), then call
        /// ``ToastStack/replyPrompted(_:result:now:)``: the person chose a reply action on a service without a
        /// field of its own. The toast's time stays stopped meanwhile.
        case promptReply(ActionInvocation, ToastReplyPrompt)
        /// Close the prompt asked for with ``promptReply(_:_:)`` for this presentation
        /// (``ActionInvocation/presentation``), if it is still open: the toast ended or was replaced, or the presenter
        /// was detached. Its result, if one still comes, is ignored, and ``ToastEvent/replyCancelled(id:actionID:)``
        /// was already reported.
        case cancelReplyPrompt(presentation: UInt64)
        /// Store the message for ``ToastAction/later``.
        case keepForLater(ToastMessage)
    }

    /// An invoked action whose handler and observer must run before its effect.
    public struct ActionInvocation: Sendable {
        /// The handler's and observer's argument.
        public var context: ToastActionContext
        /// The invoked action.
        public var action: ToastAction
        /// Identifies the presentation, so the effect applies only if it is still the same one.
        public var presentation: UInt64
    }

    /// A read-only view of one entry, for tests and diagnostics.
    public struct EntryState: Sendable, Hashable {
        /// The toast's id.
        public var id: String
        /// Whether this is a confirmation rather than a toast.
        public var isConfirmation: Bool
        /// The remaining time; `nil` for indefinite.
        public var remaining: Duration?
        /// Whether its timer is running.
        public var isRunning: Bool
        /// Whether it is on the presenter.
        public var isOnPresenter: Bool
        /// Whether it has a room of its own beyond ``Configuration/maxVisible``: a question that came when every room
        /// was taken.
        public var hasRoomOfItsOwn = false
    }

    enum Content: Sendable {
        case toast(ToastMessage)
        case confirmation(String)
    }

    enum PresenterState: Sendable, Hashable {
        /// Not handed to the presenter.
        case off
        /// Handed to the presenter.
        case shown
        /// The presenter failed to show it and will tell us when to try again.
        case failed
        /// The presenter closed it while its action was in flight.
        case gone
    }

    struct Entry: Sendable {
        var id: String
        var serial: UInt64
        var content: Content
        var remaining: Duration?
        var runningSince: Duration?
        var presenter: PresenterState = .off
        var pendingAction: String?
        /// Whether ``pendingAction`` is a reply action whose text is being asked for (``Output/promptReply(_:_:)``):
        /// nothing is decided yet, so whatever ends the toast meanwhile reports its own outcome and closes the prompt.
        var isPrompting = false
        /// The time it had left when its reply prompt opened: a prompt closed without a text leaves it no more.
        var remainingBeforePrompt: Duration?
        /// Whether the presenter was last told that this entry's timer runs (see ``reconcile(now:into:)``).
        var toldRunning = false
        /// Whether it was reported as sent to the presenter during Do Not Disturb.
        var toldSentAnyway = false
        /// The sound of the content the presenter was last handed (shown or updated), once it was: a toast that comes
        /// back with the same sound does not play it again.
        var handedSound: ToastSound?? = nil
        /// Whether it is on screen in a room of its own beyond ``Configuration/maxVisible``: a question that came when
        /// there was none (``ToastStack/questionRooms``).
        var hasExtraRoom = false

        /// Whether it asks something of the person (a tap or buttons): it never waits for a room.
        var isQuestion: Bool {
            if case .toast(let message) = content { return !message.actions.isEmpty }
            return false
        }

        var isToast: Bool {
            if case .toast = content { return true }
            return false
        }

        /// The sound of its content (none for a confirmation).
        var sound: ToastSound? {
            if case .toast(let message) = content { return message.sound }
            return nil
        }

        func state(at now: Duration) -> EntryState {
            EntryState(
                id: id, isConfirmation: !isToast, remaining: remaining(at: now), isRunning: runningSince != nil,
                isOnPresenter: presenter == .shown, hasRoomOfItsOwn: hasExtraRoom)
        }

        func remaining(at now: Duration) -> Duration? {
            guard let remaining else { return nil }
            guard let runningSince else { return remaining }
            return max(.zero, remaining - (now - runningSince))
        }
    }

    /// The settings.
    public private(set) var configuration: Configuration
    /// Whether a presenter is attached; without one nothing is shown and no timer runs.
    public private(set) var isPresenterAttached = false
    /// Whether the app paused the timers.
    public private(set) var isPausedByApp = false
    /// Whether the presenter paused the timers (for example, screen locked).
    public private(set) var isPausedByPresenter = false
    /// The Do Not Disturb state the presenter reported last (``ToastDoNotDisturb/off`` until it reports one, and
    /// again after it is detached).
    public private(set) var doNotDisturb = ToastDoNotDisturb.off
    /// Whether the attached presenter has yet to report Do Not Disturb: nothing is shown meanwhile.
    public private(set) var isAwaitingDoNotDisturb = false

    var entries: [Entry] = []
    /// Toasts held while Do Not Disturb is on, in arrival order: outside the order, never on the presenter, their
    /// time not running. Empty whenever Do Not Disturb is off.
    private var held: [Entry] = []
    /// The ids in `entries` and `held`, so presenting a new id needs no scan of a long queue.
    private var entryIDs: Set<String> = []
    /// How many entries were visible after the last reconcile: only those can still be on the presenter.
    private var lastVisibleCount = 0
    /// Entries removed since the last reconcile: each lets one waiting entry slide into the visible part.
    private var removedSinceReconcile = 0
    /// Entries on screen in a room of their own (``Entry/hasExtraRoom``): the visible part is ``capacity`` long.
    private var questionRooms = 0
    /// Entries put in front since the last reconcile (new toasts while there was room, updated ones, ones taking a
    /// freed room): each may be new to the presenter, and each pushes a running timer one place back.
    private var movedToFrontSinceReconcile = 0
    private var nextSerial: UInt64 = 0
    /// The front entry got new content while on the presenter: the next reconcile sends it as an update (after the
    /// timers are settled, so the snapshot carries the timer state the presenter should follow). `announces`
    /// says whether the update is also an ``ToastEvent/updated(id:)`` (a replaced toast, not a confirmation).
    private var pendingUpdate: (serial: UInt64, announces: Bool)?
    /// The presenter asked to show everything again: the next reconcile looks at every visible entry.
    private var reshowVisible = false
    #if DEBUG
        /// Reconciles so far, to spread the full invariant scan over long stacks (see ``checkInvariants()``).
        private var reconciles = 0
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
    /// ``Configuration/maxVisible`` entries): a toast waiting behind a long queue costs no scan of it.
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
                entries.insert(entry, at: 0)
                movedToFrontSinceReconcile += 1
            } else if entry.isQuestion {
                // Waiting, and now a question: it never waits for a room (M4), so it takes one of its own, in front.
                entry.hasExtraRoom = true
                questionRooms += 1
                entries.insert(entry, at: 0)
                movedToFrontSinceReconcile += 1
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
    private mutating func place(_ entry: Entry) {
        var entry = entry
        entry.hasExtraRoom = false
        if entries.count >= capacity {
            guard entry.isQuestion else {
                entries.append(entry)
                return
            }
            entry.hasExtraRoom = true
            questionRooms += 1
        }
        entries.insert(entry, at: 0)
        movedToFrontSinceReconcile += 1
    }

    /// Ends the oldest entries beyond the visible part when the overflow policy says so (never one in a room of its
    /// own).
    private mutating func trimOverflow(into out: inout [Output]) {
        guard configuration.overflow == .replaceOldest else { return }
        while entries.count > capacity {
            let oldest = entries.dropLast().indices.filter { !entries[$0].hasExtraRoom }.min {
                entries[$0].serial < entries[$1].serial
            }!
            end(at: oldest, outcome: .replaced, closeReason: .replaced, into: &out)
        }
    }

    /// Holds a toast (not in `entries`, not on the presenter) until Do Not Disturb ends, or drops it.
    private mutating func holdOrDrop(_ entry: Entry, policy: ToastDoNotDisturbPolicy, into out: inout [Output]) {
        precondition(doNotDisturb.isOn && entry.presenter == .off && entry.runningSince == nil)
        switch policy {
        case .hold:
            held.append(entry)
            entryIDs.insert(entry.id)
            out.append(.event(.presented(id: entry.id)))
            out.append(.event(.suppressed(id: entry.id, suppression: .init(kind: .held, state: doNotDisturb))))
        case .drop:
            out.append(.event(.suppressed(id: entry.id, suppression: .init(kind: .dropped, state: doNotDisturb))))
            out.append(.event(.ended(id: entry.id, outcome: entry.fixedOutcome ?? .suppressed)))
        case .show:
            preconditionFailure("a toast shown during Do Not Disturb is not held")
        }
    }

    /// The presenter's Do Not Disturb state changed (or was reported for the first time). Coming on, toasts not on
    /// the presenter (waiting behind the visible part, or not shown yet before the first report) are held or dropped
    /// by their policy; going off, the held toasts are put in the order in arrival order, as new ones are.
    private mutating func doNotDisturbChanged(to state: ToastDoNotDisturb, into out: inout [Output]) {
        let wasOn = doNotDisturb.isOn
        doNotDisturb = state
        isAwaitingDoNotDisturb = false
        if state.isOn != wasOn { out.append(.event(.doNotDisturbChanged(state))) }
        if state.isOn, !wasOn {
            // One pass (a long queue is not shifted once per toast taken out).
            var staying: [Entry] = []
            staying.reserveCapacity(entries.count)
            for entry in entries {
                guard entry.presenter == .off, entry.pendingAction == nil, case .toast(let message) = entry.content,
                    message.doNotDisturb != .show
                else {
                    staying.append(entry)
                    continue
                }
                var taken = entry
                if taken.hasExtraRoom {
                    taken.hasExtraRoom = false
                    questionRooms -= 1
                }
                takeBack(taken, policy: message.doNotDisturb, into: &out)
            }
            entries = staying
        } else if !state.isOn {
            releaseHeld(into: &out)
        }
    }

    /// The presenter put a toast off before it reached the screen (it learned that Do Not Disturb is on): the toast
    /// is off the presenter, its time stops, and it is held or dropped as Do Not Disturb says — or shown again, when
    /// it shows anyway or Do Not Disturb is off after all. A toast the presenter no longer has is left as it is.
    private mutating func withheld(toastID: String, now: Duration, into out: inout [Output]) {
        guard let index = entries.firstIndex(where: { $0.id == toastID && $0.presenter == .shown }),
            entries[index].pendingAction == nil, !entries[index].isPrompting
        else { return }
        if entries[index].runningSince != nil {
            entries[index].remaining = entries[index].remaining(at: now)
            entries[index].runningSince = nil
        }
        entries[index].presenter = .off
        // The presenter forgot it; an update sent to it before this report was read came to it as a new toast, and
        // would be shown: it is closed (an id the presenter does not have is nothing to it).
        out.append(.close(id: toastID, reason: .covered))
        // It played nothing: its sound is still to come.
        entries[index].handedSound = nil
        guard doNotDisturb.isOn, case .toast(let message) = entries[index].content, message.doNotDisturb != .show
        else {
            reshowVisible = true
            return
        }
        takeBack(removeEntry(at: index), policy: message.doNotDisturb, into: &out)
    }

    /// A toast taken out of the order because Do Not Disturb is on (`policy` is `.hold` or `.drop`): it was announced
    /// as presented already, so holding it is told with `suppressed`, never a second `presented`.
    private mutating func takeBack(_ entry: Entry, policy: ToastDoNotDisturbPolicy, into out: inout [Output]) {
        removedSinceReconcile += 1
        if policy == .hold {
            held.append(entry)
            out.append(.event(.suppressed(id: entry.id, suppression: .init(kind: .held, state: doNotDisturb))))
        } else {
            entryIDs.remove(entry.id)
            holdOrDrop(entry, policy: .drop, into: &out)
        }
    }

    /// Puts the held toasts in the order, in arrival order, as new ones are put (``place(_:)``).
    private mutating func releaseHeld(into out: inout [Output]) {
        guard !held.isEmpty else { return }
        for entry in held { place(entry) }
        held.removeAll()
        trimOverflow(into: &out)
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
                entries.insert(entry, at: 0)
                movedToFrontSinceReconcile += 1
                if entry.presenter == .shown { pendingUpdate = (entry.serial, false) }
            } else {
                end(at: index, outcome: .actionInvoked(actionID: actionID), closeReason: .actionCompleted, into: &out)
            }
        }
        reconcile(now: now, into: &out)
        return out
    }

    // MARK: - Presenter reports

    /// The person chose an action (`reply`: with the text typed in the service's own reply field). A reply action
    /// chosen as a plain button asks for its text first (``Output/promptReply(_:_:)``).
    private mutating func invokeAction(
        toastID: String, key: String, token: String?, reply: String?, now: Duration, into out: inout [Output]
    ) {
        guard let index = entries.firstIndex(where: { $0.id == toastID }),
            entries[index].presenter == .shown, entries[index].pendingAction == nil || entries[index].isPrompting,
            case .toast(let message) = entries[index].content
        else { return }
        let match = message.actions.first { role, action in
            role == .tap ? key == ToastActionRole.tapKey : key == action.id
        }
        guard let action = match?.action else { return }
        if entries[index].isPrompting {
            // Another button while the dialog is open (or the text from the service's own field): that choice wins,
            // and the dialog closes. The same reply button again leaves the open dialog be.
            guard action.id != entries[index].pendingAction || reply != nil else { return }
            cancelPrompt(of: entries[index], into: &out)
            entries[index].isPrompting = false
        }
        entries[index].pendingAction = action.id
        entries[index].isPrompting = action.reply != nil && reply == nil
        let context = ToastActionContext(
            toast: message, actionID: action.id, activationToken: token, reply: action.reply == nil ? nil : reply)
        let invocation = ActionInvocation(context: context, action: action, presentation: entries[index].serial)
        if let field = action.reply, reply == nil {
            let prompt = ToastReplyPrompt(
                toastID: message.id, title: message.title, message: message.message,
                actionTitle: action.builtInLabel.map { configuration.labels[$0] } ?? action.title, field: field,
                activationToken: token)
            out.append(.event(.replyAsked(id: message.id, actionID: action.id)))
            out.append(.promptReply(invocation, prompt))
            // Every wait ends: the toast's time runs on while the prompt is open, with at least the reply allowance.
            if let left = entries[index].remaining(at: now) {
                entries[index].remainingBeforePrompt = left
                entries[index].remaining = max(left, configuration.replyAllowance)
                if entries[index].runningSince != nil { entries[index].runningSince = now }
            }
        } else {
            out.append(.runAction(invocation))
        }
    }

    /// What came of the prompt for a reply action's text: the text runs the action (handler, observer, effect);
    /// a cancel, or no prompt at all, gives the toast back its time (and shows it again if the server closed it
    /// meanwhile). Does nothing if the presentation already ended.
    public mutating func replyPrompted(
        _ invocation: ActionInvocation, result: ToastReplyPromptResult, now: Duration
    ) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        guard let index = entries.firstIndex(where: { $0.serial == invocation.presentation }),
            entries[index].pendingAction == invocation.action.id, entries[index].isPrompting
        else {
            reconcile(now: now, into: &out)
            return out
        }
        let id = entries[index].id
        entries[index].isPrompting = false
        switch result {
        case .text(let text):
            var answered = invocation
            answered.context.reply = text
            out.append(.runAction(answered))
        case .cancelled, .unavailable:
            entries[index].pendingAction = nil
            leavePrompt(at: index, now: now)
            if entries[index].presenter == .gone {
                // Closed by the server meanwhile: shown again, wherever it stands among the visible ones.
                entries[index].presenter = .off
                reshowVisible = true
            }
            if case .unavailable(let reason) = result {
                out.append(.event(.degraded(id: id, reason: "the reply could not be asked for: \(reason)")))
            }
            out.append(.event(.replyCancelled(id: id, actionID: invocation.action.id)))
        }
        reconcile(now: now, into: &out)
        return out
    }

    /// A reply prompt closed without a text: the toast keeps the time it has, but no more than it had when the prompt
    /// opened (the allowance was for typing).
    private mutating func leavePrompt(at index: Int, now: Duration) {
        guard let before = entries[index].remainingBeforePrompt else { return }
        entries[index].remainingBeforePrompt = nil
        guard let left = entries[index].remaining(at: now) else { return }
        entries[index].remaining = min(left, before)
        if entries[index].runningSince != nil { entries[index].runningSince = now }
    }

    private mutating func closedByPresenter(
        toastID: String, reason: ToastPresenterCloseReason, into out: inout [Output]
    ) {
        guard let index = entries.firstIndex(where: { $0.id == toastID }), entries[index].presenter == .shown
        else { return }
        if entries[index].pendingAction != nil {
            entries[index].presenter = .gone
            return
        }
        entries[index].presenter = .off
        let outcome: ToastOutcome =
            switch reason {
            case .expired: .expired
            case .closedByCall: .closedByApp
            case .dismissedByUser, .other: .dismissed
            }
        end(at: index, outcome: outcome, closeReason: nil, into: &out)
    }

    private mutating func presenterFailed(
        toastID: String?, reason: String, recoverable: Bool, into out: inout [Output]
    ) {
        let targets = entries.filter { entry in
            entry.presenter == .shown && (toastID == nil || entry.id == toastID)
        }.map(\.serial)
        if recoverable {
            for serial in targets {
                guard let index = entries.firstIndex(where: { $0.serial == serial }) else { continue }
                entries[index].presenter = .failed
                if entries[index].isToast {
                    out.append(.event(.presenterFailed(id: entries[index].id, reason: reason)))
                }
            }
            if targets.isEmpty, toastID == nil {
                out.append(.event(.presenterFailed(id: nil, reason: reason)))
            }
            return
        }
        for serial in targets {
            guard let index = entries.firstIndex(where: { $0.serial == serial }) else { continue }
            entries[index].presenter = .off
            end(at: index, outcome: .failed(.presenter(reason: reason)), closeReason: nil, into: &out)
        }
    }

    private mutating func reshow(now: Duration, into out: inout [Output]) {
        guard isPresenterAttached else { return }
        // Taken off here and shown again by the reconcile that follows, after the timers are settled, so each
        // snapshot says whether its timer runs.
        for index in entries.indices.prefix(capacity)
        where entries[index].presenter == .shown || entries[index].presenter == .failed {
            entries[index].presenter = .off
        }
        reshowVisible = true
    }

    // MARK: - Core rules

    private mutating func setPaused(byApp paused: Bool, now: Duration) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        isPausedByApp = paused
        reconcile(now: now, into: &out)
        return out
    }

    /// Ends front entries whose time is up, one at a time, bringing the next forward at `now`.
    private mutating func expireDue(now: Duration, into out: inout [Output]) {
        while let deadline = nextDeadline, deadline <= now {
            end(at: 0, outcome: .expired, closeReason: entries[0].isToast ? .expired : .actionCompleted, into: &out)
            reconcile(now: now, into: &out)
        }
    }

    /// Removes the entry at `index`, closing it on the presenter (when `closeReason` is given and it is shown)
    /// and reporting its one ending (toasts only; a confirmation's toast already ended).
    private mutating func end(
        at index: Int, outcome: ToastOutcome, closeReason: ToastCloseReason?, into out: inout [Output]
    ) {
        let entry = removeEntry(at: index)
        entryIDs.remove(entry.id)
        removedSinceReconcile += 1
        finish(entry, outcome: outcome, closeReason: closeReason, into: &out)
    }

    /// Takes the entry at `index` out of the order. A room of its own goes with it. A room it frees on screen goes to a
    /// question in a room of its own, if one is on screen (fewer toasts beyond `maxVisible`), else to the oldest
    /// waiting entry, in front: it is the newest on screen (M4).
    private mutating func removeEntry(at index: Int) -> Entry {
        let room = capacity - 1
        var entry = entries.remove(at: index)
        if entry.hasExtraRoom {
            entry.hasExtraRoom = false
            questionRooms -= 1
            return entry
        }
        guard index <= room else { return entry }
        if questionRooms > 0, let extra = entries.indices.prefix(room).first(where: { entries[$0].hasExtraRoom }) {
            entries[extra].hasExtraRoom = false
            questionRooms -= 1
        } else if entries.count > room, room > 0 {
            entries.insert(entries.remove(at: room), at: 0)
            movedToFrontSinceReconcile += 1
        }
        return entry
    }

    /// Closes a removed entry on the presenter (when `closeReason` is given and it is shown) and reports its end.
    private func finish(
        _ entry: Entry, outcome: ToastOutcome, closeReason: ToastCloseReason?, into out: inout [Output]
    ) {
        if let closeReason, entry.presenter == .shown {
            out.append(.close(id: entry.id, reason: closeReason))
        }
        if entry.isToast {
            cancelPrompt(of: entry, into: &out)
            out.append(.event(.ended(id: entry.id, outcome: entry.fixedOutcome ?? outcome)))
        }
    }

    /// Closes the reply prompt open for `entry`, if one is: the person's text can no longer answer it.
    private func cancelPrompt(of entry: Entry, into out: inout [Output]) {
        guard entry.isPrompting, let actionID = entry.pendingAction else { return }
        out.append(.cancelReplyPrompt(presentation: entry.serial))
        out.append(.event(.replyCancelled(id: entry.id, actionID: actionID)))
    }

    /// Brings presenter and timers in line with the order: entries beyond the visible part are closed first
    /// (so the presenter never holds more than `maxVisible`), then only the front timer may run, then the
    /// presenter hears what changed: the pending update, the new visible entries, and timers that started or
    /// stopped on entries it already shows. Timers are settled before any snapshot is taken, so every snapshot
    /// says whether its timer runs, and a toast shown or updated needs no separate timer call.
    ///
    /// What the presenter is told about a timer differs from the center's own clock in one case: an action in
    /// flight stops the center's clock (its handler may take a while) but is not reported, because the action's
    /// effect ends or replaces the toast right after, and most servers close a toast themselves after an action;
    /// a re-send then would put it back on screen for a moment.
    ///
    /// Every operation changes the order by moves to the front (counted), one append and removals, and reconciles
    /// right after. A move to the front never takes an entry from beyond the visible part past one that is on the
    /// presenter, except for the oldest waiting one taking a room a removal freed; so only the entries up to one past
    /// the previously visible part can be on the presenter, entries that are new to the visible part are among the
    /// moved ones at the front or at its end, and only the first two plus one per move can have a running timer. The
    /// scans are bounded by that, which keeps an operation cheap with thousands of toasts waiting. Debug builds check
    /// that invariant with a full scan (``checkInvariants()``).
    private mutating func reconcile(now: Duration, into out: inout [Output]) {
        settleRooms()
        keepATimedToastInFront()
        let visibleCount = self.visibleCount
        let mayBeShown = min(entries.count, max(lastVisibleCount, visibleCount) + 1)
        for index in visibleCount..<max(visibleCount, mayBeShown) {
            if entries[index].presenter == .shown {
                out.append(.close(id: entries[index].id, reason: isPresenterAttached ? .covered : .detached))
            }
            if entries[index].presenter != .off { entries[index].presenter = .off }
        }
        // Entries that are off inside the visible part: one moved to the front, or ones that slid in from behind
        // (after removals) or were appended; after a reshow request, all of them.
        let firstNew =
            reshowVisible ? 1 : max(0, min(lastVisibleCount, entries.count) - removedSinceReconcile - 1)
        let moved = min(visibleCount, movedToFrontSinceReconcile + 1)
        let candidates = Array(0..<max(1, moved)) + Array(max(moved, firstNew, 1)..<max(1, visibleCount))
        let timed = min(entries.count, 2 + movedToFrontSinceReconcile)
        lastVisibleCount = visibleCount
        removedSinceReconcile = 0
        movedToFrontSinceReconcile = 0
        reshowVisible = false
        var newlyShown: [Int] = []
        for index in candidates where index < visibleCount && entries[index].presenter == .off {
            entries[index].presenter = .shown
            newlyShown.append(index)
        }
        for index in 0..<timed {
            // An action in flight stops the clock; a reply prompt does not (``Configuration/replyAllowance``).
            let shouldRun =
                tellsRunning(index, visibleCount: visibleCount)
                && (entries[index].pendingAction == nil || entries[index].isPrompting)
            if shouldRun, entries[index].runningSince == nil {
                entries[index].runningSince = now
            } else if !shouldRun, entries[index].runningSince != nil {
                entries[index].remaining = entries[index].remaining(at: now)
                entries[index].runningSince = nil
            }
        }
        var told: Set<Int> = []
        if let update = pendingUpdate {
            pendingUpdate = nil
            // Put in front by the update, or right behind the front when it is indefinite and a timed toast is on
            // screen (``keepATimedToastInFront()``).
            if let index = entries.indices.prefix(timed).first(where: { entries[$0].serial == update.serial }),
                entries[index].presenter == .shown, !newlyShown.contains(index)
            {
                entries[index].toldRunning = tellsRunning(index, visibleCount: visibleCount)
                out.append(.update(snapshot(entries[index], now: now)))
                entries[index].handedSound = .some(entries[index].sound)
                if update.announces { out.append(.event(.updated(id: entries[index].id))) }
                told.insert(index)
            }
        }
        // Back to front: a server that stacks its popups draws the last one on top, and the front is the newest.
        for index in newlyShown.reversed() {
            entries[index].toldRunning = tellsRunning(index, visibleCount: visibleCount)
            out.append(.show(snapshot(entries[index], now: now)))
            entries[index].handedSound = .some(entries[index].sound)
            if entries[index].isToast {
                if doNotDisturb.isOn, !entries[index].toldSentAnyway,
                    case .toast(let message) = entries[index].content, message.doNotDisturb == .show
                {
                    entries[index].toldSentAnyway = true
                    out.append(
                        .event(
                            .suppressed(
                                id: entries[index].id, suppression: .init(kind: .sentAnyway, state: doNotDisturb))))
                }
                out.append(.event(.shown(id: entries[index].id)))
            }
            told.insert(index)
        }
        for index in 0..<timed where entries[index].presenter == .shown && !told.contains(index) {
            let running = tellsRunning(index, visibleCount: visibleCount)
            guard running != entries[index].toldRunning else { continue }
            entries[index].toldRunning = running
            out.append(
                .timer(id: entries[index].id, remaining: entries[index].remaining(at: now), isRunning: running))
        }
        #if DEBUG
            reconciles &+= 1
            if InvariantScan.isDue(step: reconciles, count: entries.count) { checkInvariants() }
        #endif
    }

    /// A question keeps a room of its own only while every room of the `maxVisible` is taken: once one is free (the
    /// order got shorter than the visible part), it has that one. Only looked at while there are such rooms.
    private mutating func settleRooms() {
        while questionRooms > 0, entries.count < capacity {
            guard let extra = entries.indices.prefix(capacity).first(where: { entries[$0].hasExtraRoom }) else {
                preconditionFailure("\(questionRooms) rooms of their own, none in the visible part")
            }
            entries[extra].hasExtraRoom = false
            questionRooms -= 1
        }
    }

    /// An indefinite toast never covers a timed one (decision 0010): in front, it would stop the covered toast's time
    /// for good. When the front is indefinite, the newest timed entry of the visible part takes the front. Only then
    /// is the visible part scanned, so a stack of timed toasts pays nothing.
    private mutating func keepATimedToastInFront() {
        guard entries.first?.remaining == nil, entries.count > 1 else { return }
        let visible = entries.indices.prefix(capacity).dropFirst()
        guard let timed = visible.first(where: { entries[$0].remaining != nil }) else { return }
        entries.insert(entries.remove(at: timed), at: 0)
        movedToFrontSinceReconcile += 1
    }

    /// How many entries the presenter is to show: none without a presenter, or before its first Do Not Disturb
    /// report when it makes them.
    private var visibleCount: Int {
        isPresenterAttached && !isAwaitingDoNotDisturb ? min(capacity, entries.count) : 0
    }

    /// How long the visible part of the order is: ``Configuration/maxVisible``, and a room for each question that
    /// came when there was none.
    private var capacity: Int { configuration.maxVisible + questionRooms }

    /// Whether the presenter should let the entry at `index` run out on its own: it is the visible front entry,
    /// on the presenter, timed, and nothing paused the center.
    private func tellsRunning(_ index: Int, visibleCount: Int) -> Bool {
        index == 0 && index < visibleCount && entries[index].presenter == .shown && !isPaused
            && entries[index].remaining != nil
    }

    #if DEBUG
        /// The invariant the bounded scans of ``reconcile(now:into:)`` rely on, checked over every entry: nothing
        /// beyond the visible part is on the presenter, only the front entry's timer runs, only an entry the presenter
        /// shows was told its timer runs, and the id set matches the entries. Run after every reconcile on short
        /// stacks and on a spread of them on long ones, so the check stays linear overall.
        private func checkInvariants() {
            let visibleCount = self.visibleCount
            precondition(lastVisibleCount == visibleCount, "lastVisibleCount \(lastVisibleCount) ≠ \(visibleCount)")
            precondition(
                entryIDs.count == entries.count + held.count,
                "entryIDs has \(entryIDs.count) ids, entries \(entries.count), held \(held.count)")
            precondition(held.isEmpty || doNotDisturb.isOn, "\(held.count) toasts held while Do Not Disturb is off")
            let extraRooms = entries.indices.filter { entries[$0].hasExtraRoom }
            precondition(
                extraRooms.count == questionRooms, "\(extraRooms.count) rooms of their own, \(questionRooms) counted")
            precondition(
                extraRooms.allSatisfy { $0 < capacity }, "a room of its own beyond the visible part: \(extraRooms)")
            for entry in held {
                precondition(entryIDs.contains(entry.id), "held toast \(entry.id) is missing from entryIDs")
                precondition(!entry.hasExtraRoom, "held toast \(entry.id) keeps a room of its own")
                precondition(
                    entry.presenter == .off && entry.runningSince == nil && entry.isToast,
                    "held toast \(entry.id) is \(entry.presenter), running: \(entry.runningSince != nil)")
            }
            for (index, entry) in entries.enumerated() {
                precondition(entryIDs.contains(entry.id), "entry \(entry.id) is missing from entryIDs")
                precondition(
                    index < visibleCount || entry.presenter == .off,
                    "entry \(index) (\(entry.id)) is beyond the \(visibleCount) visible ones but \(entry.presenter)")
                precondition(
                    !entry.isPrompting || (entry.pendingAction != nil && entry.isToast),
                    "entry \(index) (\(entry.id)) is prompting with no reply action pending")
                precondition(
                    index == 0 || entry.runningSince == nil, "entry \(index) (\(entry.id)) has a running timer")
                precondition(
                    index == 0 || entry.presenter != .shown || !entry.toldRunning,
                    "entry \(index) (\(entry.id)) is on the presenter and was told its timer runs")
                precondition(
                    entry.runningSince == nil || (entry.presenter == .shown && !isPaused),
                    "entry \(index) (\(entry.id)) runs while \(entry.presenter), paused: \(isPaused)")
            }
        }
    #endif

    private func snapshot(_ entry: Entry, now: Duration) -> PresentedToast {
        switch entry.content {
        case .toast(let message):
            let actions = message.actions.map { role, action in
                PresentedAction(
                    key: role == .tap ? ToastActionRole.tapKey : action.id,
                    actionID: action.id,
                    title: action.builtInLabel.map { configuration.labels[$0] } ?? action.title,
                    icon: action.icon,
                    role: role,
                    reply: action.reply)
            }
            return PresentedToast(
                id: entry.id, status: message.status, title: message.title, message: message.message,
                icon: message.icon, actions: actions, remaining: entry.remaining(at: now),
                isTimerRunning: entry.toldRunning, progress: message.progress, sound: message.sound,
                soundHasPlayed: entry.handedSound == .some(message.sound))
        case .confirmation(let text):
            return PresentedToast(
                id: entry.id, status: .success, title: text, remaining: entry.remaining(at: now),
                isTimerRunning: entry.toldRunning, isConfirmation: true)
        }
    }
}

extension ToastStack.Entry {
    /// Once an action is invoked, whatever ends the presentation reports that action.
    /// A reply action still asking for its text is not invoked yet.
    fileprivate var fixedOutcome: ToastOutcome? {
        isPrompting ? nil : pendingAction.map { .actionInvoked(actionID: $0) }
    }
}
