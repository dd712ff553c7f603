// The sounds a desktop presenter asked to play that have not played or failed yet, and who waits for them: how the
// agent answers `Present` only once its toast's sound has played or failed (a failure is then its sender's warning).
import ToastModel

/// The sounds asked for with ``DesktopPresenterMachine/Action/playSound(id:_:)`` that have neither played nor failed
/// yet, counted per toast, and the waiters of ``DesktopPresenterMachine/Event/awaitSoundsPlayed(id:waiter:)``.
struct SoundsUnderWay: Sendable {
    private var counts: [String: Int] = [:]
    private var waiters: [String: [PresenterWaiterID]] = [:]

    /// A sound of toast `id` was asked for.
    mutating func asked(_ id: String) {
        counts[id, default: 0] += 1
    }

    /// A sound of toast `id` played or failed: returns the waiters to resume when it was the toast's last.
    mutating func ended(_ id: String) -> [PresenterWaiterID] {
        guard let count = counts[id] else { return [] }
        guard count <= 1 else {
            counts[id] = count - 1
            return []
        }
        counts[id] = nil
        return waiters.removeValue(forKey: id) ?? []
    }

    /// Whether a sound of toast `id` is under way.
    func isUnderWay(_ id: String) -> Bool {
        counts[id] != nil
    }

    /// `waiter` waits for the sounds of toast `id`; false (it is not kept) when none is under way.
    mutating func await(_ id: String, waiter: PresenterWaiterID) -> Bool {
        guard counts[id] != nil else { return false }
        waiters[id, default: []].append(waiter)
        return true
    }
}

extension DesktopPresenterMachine {
    /// Asks for `sound` to be played for toast `id`, and counts it until it ends.
    mutating func playSound(_ sound: ToastSound, of id: String, into out: inout [Action]) {
        sounds.asked(id)
        out.append(.playSound(id: id, sound))
    }

    /// A sound of toast `id` played or failed (after its failure was reported): its waiters are told once it was the
    /// last.
    mutating func soundEnded(_ id: String, into out: inout [Action]) {
        let waiters = sounds.ended(id)
        if !waiters.isEmpty { out.append(.resume(waiters, .success(ledger.toasts[id]?.serverID ?? 0))) }
    }

    /// `waiter` is told once every sound of toast `id` has played or failed: at once when none is under way.
    mutating func awaitSoundsPlayed(_ id: String, waiter: WaiterID, into out: inout [Action]) {
        guard sounds.await(id, waiter: waiter) else {
            return out.append(.resume([waiter], .success(ledger.toasts[id]?.serverID ?? 0)))
        }
    }
}
