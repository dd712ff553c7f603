import Synchronization
package import ToastModel

/// The scheduled toasts this agent took from the user's store (``ScheduleStore/claim(_:due:)``) when they were due,
/// until a server has accepted them. A scheduled toast is the user's, not the session's: one claimed by an agent whose
/// session ends before any server showed it (the bus closed under it, a failed `Notify`) goes back to the store, due
/// at once, for the next agent of the user (``giveBack(keeping:)``), instead of ending with the session.
///
/// Claiming and giving back are one lock's steps: once the agent has started to leave, it claims nothing more, so no
/// toast can be claimed after its give-back.
package final class ClaimedSchedules: Sendable {
    private struct State {
        var entries: [String: ScheduleStore.Entry] = [:]
        var leaving = false
    }

    private let store: ScheduleStore
    private let state = Mutex(State())

    package init(store: ScheduleStore) {
        self.store = store
    }

    /// Takes `entry`, due now, for this agent to show: false when another agent of the user showed it first, it was
    /// cancelled or scheduled anew, or this agent is leaving (it stays in the store for the next).
    package func claim(_ entry: ScheduleStore.Entry) throws(PrivateFileError) -> Bool {
        try state.withLock { state throws(PrivateFileError) -> Bool in
            guard !state.leaving, try store.claim(entry.id, due: entry.due) else { return false }
            state.entries[entry.id] = entry
            return true
        }
    }

    /// Whether toast `id` is claimed and not yet settled.
    package func holds(_ id: String) -> Bool {
        state.withLock { $0.entries[id] != nil }
    }

    /// Toast `id` is settled: a server accepted it, or it ended for a reason of its own (the person, its sender, its
    /// time, Do Not Disturb's drop). It is no longer the store's to get back.
    package func settle(_ id: String) {
        state.withLock { _ = $0.entries.removeValue(forKey: id) }
    }

    /// The agent is leaving: every claimed toast `keeping` does not keep elsewhere goes back to the store, due at once
    /// (unless the id was scheduled anew meanwhile: the newer schedule stays), and nothing more is claimed. Returns
    /// the ids put back.
    package func giveBack(keeping: (String) -> Bool) throws(PrivateFileError) -> [String] {
        try state.withLock { state throws(PrivateFileError) -> [String] in
            state.leaving = true
            let given = state.entries.values.filter { !keeping($0.id) }.sorted { $0.id < $1.id }
            state.entries.removeAll()
            guard !given.isEmpty else { return [] }
            return try store.giveBack(given)
        }
    }
}
