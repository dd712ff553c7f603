/// The scheduled toasts this agent took from the user's store (``ScheduleStore/claim(_:due:)``) when they were due,
/// until a server has accepted them: a part of the ledger (``AgentLedger/claims``). A scheduled toast is the user's,
/// not the session's: one claimed by an agent whose session ends before any server showed it (the bus closed under
/// it, a failed `Notify`) goes back to the store, due at once, for the next agent of the user, instead of ending with
/// the session.
///
/// The store's claims and give-backs run on one queue (the agent's `storeIO`), so a claim never overlaps the
/// give-back: once claims are closed (``close(keeping:)``, as the agent leaves), a claim that finds them closed
/// claims nothing, and no toast can be claimed after its give-back.
package struct ScheduleClaims: Sendable {
    /// The claimed toasts not yet settled, by id.
    package private(set) var entries: [String: ScheduleStore.Entry] = [:]
    /// Whether the claimed toasts were given back (the agent is leaving): nothing more is claimed.
    package private(set) var isClosed = false

    package init() {}

    /// Whether a toast may still be claimed.
    package var isOpen: Bool { !isClosed }

    /// `entry` was claimed in the store: kept until it is settled or given back.
    package mutating func claimed(_ entry: ScheduleStore.Entry) {
        precondition(!isClosed, "a toast claimed after the give-back")
        entries[entry.id] = entry
    }

    /// Whether toast `id` is claimed and not yet settled.
    package func holds(_ id: String) -> Bool {
        entries[id] != nil
    }

    /// Toast `id` is settled: a server accepted it, or it ended for a reason of its own (the person, its sender, its
    /// time, Do Not Disturb's drop). It is no longer the store's to get back.
    package mutating func settle(_ id: String) {
        entries[id] = nil
    }

    /// The agent is leaving: closes the claims and returns every claimed toast `keeping` does not keep elsewhere, by
    /// id, for the store to take back (due at once, unless the id was scheduled anew meanwhile).
    package mutating func close(keeping: (String) -> Bool) -> [ScheduleStore.Entry] {
        isClosed = true
        defer { entries.removeAll() }
        return entries.values.filter { !keeping($0.id) }.sorted { $0.id < $1.id }
    }
}
