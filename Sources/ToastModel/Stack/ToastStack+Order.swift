// ToastStack+Order: the core rules: the order (placement, removals, rooms, an indefinite toast behind a timed one),
// time running out, and reconcile, which brings the presenter and the timers in line with the order (M2, M4, M9).

extension ToastStack {
    // MARK: - Core rules

    mutating func setPaused(byApp paused: Bool, now: Duration) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        isPausedByApp = paused
        reconcile(now: now, into: &out)
        return out
    }

    /// Ends front entries whose time is up, one at a time, bringing the next forward at `now`.
    mutating func expireDue(now: Duration, into out: inout [Output]) {
        while let deadline = nextDeadline, deadline <= now {
            end(at: 0, outcome: .expired, closeReason: entries[0].isToast ? .expired : .actionCompleted, into: &out)
            reconcile(now: now, into: &out)
        }
    }

    /// Removes the entry at `index`, closing it on the presenter (when `closeReason` is given and it is shown)
    /// and reporting its one ending (toasts only; a confirmation's toast already ended).
    mutating func end(
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
    mutating func removeEntry(at index: Int) -> Entry {
        let room = capacity - 1
        var entry = entries.remove(at: index)
        if giveUpRoomOfItsOwn(&entry) || index > room || giveFreedRoomToAQuestion() { return entry }
        if entries.count > room, room > 0 {
            entries.prepend(entries.remove(at: room))
            movedToFrontSinceReconcile += 1
        }
        return entry
    }

    /// Takes `entry` (out of the order) out of its room of its own, if it has one: the visible part is one shorter.
    /// Returns whether it had one.
    mutating func giveUpRoomOfItsOwn(_ entry: inout Entry) -> Bool {
        guard entry.hasExtraRoom else { return false }
        entry.hasExtraRoom = false
        questionRooms -= 1
        return true
    }

    /// A room of the `maxVisible` that was freed on screen goes to a question in a room of its own, if one is there
    /// (the screen gets back to `maxVisible` as soon as it can). Returns whether one took it.
    mutating func giveFreedRoomToAQuestion() -> Bool {
        guard questionRooms > 0,
            let extra = entries.indices.prefix(capacity).first(where: { entries[$0].hasExtraRoom })
        else { return false }
        entries[extra].hasExtraRoom = false
        questionRooms -= 1
        return true
    }

    /// Closes a removed entry on the presenter (when `closeReason` is given and it is shown) and reports its end.
    func finish(
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
    func cancelPrompt(of entry: Entry, into out: inout [Output]) {
        guard entry.isPrompting, let actionID = entry.pendingAction else { return }
        out.append(.cancelReplyPrompt(presentation: entry.serial))
        out.append(.event(.replyCancelled(id: entry.id, actionID: actionID)))
    }

    /// Brings presenter and timers in line with the order: entries beyond the visible part (`maxVisible` and the
    /// questions' rooms of their own) are closed first, so the presenter never holds more, then only the front timer
    /// may run, then the presenter hears what changed: the pending update, the new visible entries, and timers that
    /// started or stopped on entries it already shows. Timers are settled before any snapshot is taken, so every snapshot
    /// says whether its timer runs, and a toast shown or updated needs no separate timer call.
    ///
    /// What the presenter is told about a timer differs from the center's own clock in one case: an action in
    /// flight stops the center's clock (its handler may take a while) but is not reported, because the action's
    /// effect ends or replaces the toast right after, and most servers close a toast themselves after an action;
    /// a re-send then would put it back on screen for a moment.
    ///
    /// Every operation changes the order by moves to the front (counted), one append and removals, and reconciles
    /// right after. Each move pushes what was on the presenter at most one place back (held toasts put back in the
    /// order while the presenter is detached may be several), so only the entries up to one plus one per move past
    /// the previously visible part can be on the presenter; entries that are new to the visible part are among the
    /// moved ones at the front or at its end; and only the first two plus one per move can have a running timer. The
    /// scans are bounded by that, which keeps an operation cheap with thousands of toasts waiting. Debug builds check
    /// that invariant with a full scan (``checkInvariants()``).
    mutating func reconcile(now: Duration, into out: inout [Output]) {
        settleRooms()
        keepATimedToastInFront()
        let visibleCount = self.visibleCount
        // Each move to the front since the last reconcile pushed what was on the presenter one place back.
        let mayBeShown = min(
            entries.count, max(lastVisibleCount, visibleCount) + 1 + movedToFrontSinceReconcile)
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
        let tail = max(moved, firstNew, 1)
        let candidates = Array(0..<max(1, moved)) + Array(tail..<max(tail, visibleCount))
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
    mutating func settleRooms() {
        while questionRooms > 0, entries.count < capacity {
            guard giveFreedRoomToAQuestion() else {
                preconditionFailure("\(questionRooms) rooms of their own, none in the visible part")
            }
        }
    }

    /// An indefinite toast never covers a timed one (decision 0010): in front, it would stop the covered toast's time
    /// for good. When the front is indefinite, the newest timed entry of the visible part takes the front. Only then
    /// is the visible part scanned, so a stack of timed toasts pays nothing.
    mutating func keepATimedToastInFront() {
        guard entries.first?.remaining == nil, entries.count > 1 else { return }
        let visible = entries.indices.prefix(capacity).dropFirst()
        guard let timed = visible.first(where: { entries[$0].remaining != nil }) else { return }
        entries.prepend(entries.remove(at: timed))
        movedToFrontSinceReconcile += 1
    }

    /// How many entries the presenter is to show: none without a presenter, or before its first Do Not Disturb
    /// report when it makes them.
    var visibleCount: Int {
        isPresenterAttached && !isAwaitingDoNotDisturb ? min(capacity, entries.count) : 0
    }

    /// How long the visible part of the order is: ``Configuration/maxVisible``, and a room for each question that
    /// came when there was none.
    var capacity: Int { configuration.maxVisible + questionRooms }

    /// Whether the presenter should let the entry at `index` run out on its own: it is the visible front entry,
    /// on the presenter, timed, and nothing paused the center.
    func tellsRunning(_ index: Int, visibleCount: Int) -> Bool {
        index == 0 && index < visibleCount && entries[index].presenter == .shown && !isPaused
            && entries[index].remaining != nil
    }

    #if DEBUG
        /// The invariant the bounded scans of ``reconcile(now:into:)`` rely on, checked over every entry: nothing
        /// beyond the visible part is on the presenter, only the front entry's timer runs, only an entry the presenter
        /// shows was told its timer runs, and the id set matches the entries. Run after every reconcile on short
        /// stacks and on a spread of them on long ones, so the check stays linear overall.
        func checkInvariants() {
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

    func snapshot(_ entry: Entry, now: Duration) -> PresentedToast {
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
