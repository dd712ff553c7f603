// The agent's journal and adoption: the live toasts written as they change (``AgentSaver``, ``AgentStore``), and what
// a killed agent saved, or a `send` showed itself while no agent ran, taken up again by the next agent on the bus.
import DBus
import Dispatch
import ToastKit
import ToastModel

extension ToastAgent {
    /// Appends a batch of records to the journal (best effort: a failure is noted on stderr), and compacts it when
    /// its records outnumber twice the live toasts (or removes it when none is live). Called by the ``AgentSaver``
    /// only, one batch at a time, in order.
    func write(_ records: [AgentStore.Record]) -> String? {
        let live = ledger.withLock { $0.live.count }
        do {
            let written = try store.append(records)
            if live == 0 {
                try store.compact([])
            } else if written > max(64, 2 * live) {
                compact()
            }
            return nil
        } catch {
            ErrorLine.write("warning: \(error)")
            return error.description
        }
    }

    /// Rewrites the journal as the live toasts with their remaining time now.
    func compact() {
        let live = ledger.withLock { $0.live }
        // The server whose ids the live toasts hold (a change of owner forgets them all).
        let owner = desktop.serverOwner
        let states = Dictionary(
            lanes.centers.flatMap(\.entryStates).filter { !$0.isConfirmation }.map { ($0.id, $0) },
            uniquingKeysWith: { first, _ in first })
        let saved = live.map { id, toast in
            AgentStore.Saved(
                request: toast.request, id: id,
                // Never an id without the server that gave it, and only as the presenter holds it now.
                serverID: owner == nil ? nil : desktop.serverID(ofToast: id).flatMap(Self.savedServerID), server: owner,
                remaining: states[id]?.remaining?.seconds, running: states[id]?.isRunning ?? false)
        }
        do {
            try store.compact(saved)
        } catch {
            ErrorLine.write("warning: \(error)")
        }
    }

    /// `TakeHandOver`: adopts the hand-over file, if a `send` left one (it may have seen no owner of the name while
    /// this agent was taking it). One look at a time, in the order of the calls; each returns once its look is done.
    func takeHandOver() async {
        let look = handOverTurn.withLock { last -> Task<Void, Never> in
            let previous = last
            let next = Task { [self] in
                await previous?.value
                if handOver.exists { await adoptSavedToasts([], handedOver: handOver.load()) }
            }
            last = next
            return next
        }
        await look.value
    }

    /// Shows again the toasts a previous agent saved, in place (their server ids adopted), with the time they had
    /// left (minus the time since, for the one whose timer ran); then writes the journal anew, with them. The
    /// `handedOver` toasts (a `send` showed them while no agent ran) are taken over as they are on screen, and the
    /// hand-over file is removed once they are in the journal.
    func adoptSavedToasts(
        _ journal: [(toast: AgentStore.Saved, age: Double)], handedOver: [(toast: AgentStore.Saved, age: Double)]
    ) async {
        let loaded = journal + handedOver
        let onScreen = Set(handedOver.map(\.toast.id))
        let saved = loaded.map(\.toast)
        var ranOut: [String] = []
        for (item, age) in loaded {
            var request = item.request
            request.options.id = item.id
            if let remaining = item.remaining {
                let left = item.running ? remaining - age : remaining
                guard left > 0 else {
                    // Its time ran out while no agent was there: it expired, and what it left on screen is closed
                    // now, never shown again first (sent again with the few milliseconds it had, the server could
                    // expire it itself, or draw it anew, before the close).
                    expireSaved(item)
                    ranOut.append(item.id)
                    continue
                }
                request.options.duration = .duration(.seconds(left))
            }
            let toast: ToastMessage
            do throws(ToastOptionError) {
                toast = try request.message()
            } catch {
                // Never dropped without a word: the log says why, and `wait --id` gets the failure.
                let reason = "the saved toast \"\(item.id)\" cannot be shown again: \(error.message)"
                ErrorLine.write("warning: \(reason)")
                var details: [String: DBusValue] = ["reason": .string(reason)]
                if let serverID = item.serverID { details["server_id"] = .uint32(serverID) }
                ledger.withLock { $0.remember(AgentOutcome(name: "failed", details: details), for: item.id) }
                continue
            }
            style.set(CommandLineStyle(options: request.options), for: item.id)
            if let serverID = item.serverID, serverID != 0 {
                // Shown before (by the agent that saved it, or by `send`): its sound has played. (0: it was a job
                // view, which ended with its agent.)
                desktop.adopt(
                    serverID: serverID, forToast: item.id, onScreen: onScreen.contains(item.id), soundPlayed: true,
                    server: item.server)
            }
            lanes.prepareSpare()
            let center = ledger.withLock { ledger -> ToastCenter? in
                guard case .admitted(let lane, _, _, _, _) = ledger.admit(id: item.id, request: request) else {
                    return nil
                }
                ledger.adopted(item.id, serverID: item.serverID)
                return lanes.open(lane)
            }
            center?.present(toast)
        }
        guard !saved.isEmpty else { return }
        // One line in agent.log for each source: what a restarted agent adopted, and how old the file was; what
        // `send` showed itself and handed over.
        func described(_ toasts: [AgentStore.Saved]) -> String {
            toasts.map { "\($0.id) (\($0.remaining.map { "\(($0 * 100).rounded() / 100) s left" } ?? "no limit"))" }
                .joined(separator: ", ")
        }
        if !journal.isEmpty {
            let age = journal.map(\.age).min() ?? 0
            ErrorLine.write(
                "adopting \(journal.count) saved toast(s) from \(Int(min(age, 1e12) * 1000)) ms ago: "
                    + described(journal.map(\.toast)))
        }
        if !ranOut.isEmpty {
            ErrorLine.write(
                "closing \(ranOut.count) saved toast(s) whose time ran out: \(ranOut.joined(separator: ", "))")
        }
        if !handedOver.isEmpty {
            ErrorLine.write(
                "taking over \(handedOver.count) toast(s) shown by send while no agent ran: "
                    + described(handedOver.map(\.toast)))
        }
        for center in lanes.centers { await center.flush() }
        // As the presenter holds them: an adopted id it refused (another server gave it) is no id of the toast.
        ledger.withLock { $0.adoptServerIDs { desktop.serverID(ofToast: $0) } }
        // What was adopted, as it is now: one compact journal.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.saver.barrier { self.compact() }
                continuation.resume()
            }
        }
        // In the journal now (or, if it could not be written, noted on the log as every write failure is).
        if !handedOver.isEmpty { handOver.removeHandOver() }
    }

    /// Ends a saved toast whose time ran out while no agent ran: `expired` for whoever waits for it, and its
    /// notification, if a server showed it, closed.
    func expireSaved(_ item: AgentStore.Saved) {
        let ended = AgentOutcome(.expired, serverID: item.serverID, activationToken: nil, unexplained: nil)
        ledger.withLock { $0.remember(ended, for: item.id) }
        if let serverID = item.serverID, serverID != 0 {
            // (Never another server's: after a restart of the server the id may be another application's.)
            desktop.adopt(serverID: serverID, forToast: item.id, onScreen: true, soundPlayed: true, server: item.server)
            desktop.close(id: item.id, reason: .expired)
        }
        announceEnd(item.id, ended)
    }
}
