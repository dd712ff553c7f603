// ToastStack+DoNotDisturb: the stack's Do Not Disturb rules: toasts held or dropped while it is on, taken back when the
// presenter withheld them, and put back in the order when it ends.

extension ToastStack {
    /// Holds a toast (not in `entries`, not on the presenter) until Do Not Disturb ends, or drops it.
    mutating func holdOrDrop(_ entry: Entry, policy: ToastDoNotDisturbPolicy, into out: inout [Output]) {
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
    mutating func doNotDisturbChanged(to state: ToastDoNotDisturb, into out: inout [Output]) {
        let wasOn = doNotDisturb.isOn
        doNotDisturb = state
        isAwaitingDoNotDisturb = false
        if state.isOn != wasOn { out.append(.event(.doNotDisturbChanged(state))) }
        if state.isOn, !wasOn {
            // One pass (a long queue is not shifted once per toast taken out).
            var staying = RingOrder<Entry>()
            let visibleRooms = capacity
            var freedRooms = 0
            for (position, entry) in entries.enumerated() {
                guard entry.presenter == .off, entry.pendingAction == nil, case .toast(let message) = entry.content,
                    message.doNotDisturb != .show
                else {
                    staying.append(entry)
                    continue
                }
                var taken = entry
                if !giveUpRoomOfItsOwn(&taken), position < visibleRooms { freedRooms += 1 }
                takeBack(taken, policy: message.doNotDisturb, into: &out)
            }
            entries = staying
            // A room freed in the visible part goes to a question in a room of its own first, as in removeEntry(at:).
            while freedRooms > 0, giveFreedRoomToAQuestion() { freedRooms -= 1 }
        } else if !state.isOn {
            releaseHeld(into: &out)
        }
    }

    /// The presenter put a toast off before it reached the screen (it learned that Do Not Disturb is on): the toast
    /// is off the presenter, its time stops, and it is held or dropped as Do Not Disturb says — or shown again, when
    /// it shows anyway or Do Not Disturb is off after all. A toast the presenter no longer has is left as it is.
    mutating func withheld(toastID: String, now: Duration, into out: inout [Output]) {
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
    mutating func takeBack(_ entry: Entry, policy: ToastDoNotDisturbPolicy, into out: inout [Output]) {
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
    mutating func releaseHeld(into out: inout [Output]) {
        guard !held.isEmpty else { return }
        for entry in held { place(entry) }
        held.removeAll()
        trimOverflow(into: &out)
    }
}
