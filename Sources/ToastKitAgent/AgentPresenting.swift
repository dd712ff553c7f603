// `Present`: a toast decoded and checked, admitted by the ledger into its lane, written ahead to the journal, handed
// to its center, and answered with the server's id (or how it waits, or how it ended).
import DBus
import Glibc
import ToastKit
import ToastModel

extension ToastAgent {
    /// A `Present` call's toast, decoded and checked.
    struct Prepared {
        var request: AgentRequest
        var toast: ToastMessage
        /// It updates a live toast the agent shows (`-r` of its server id).
        var continues: Bool
        /// A scheduled toast this agent claimed (``fire(_:)``): not admitted once the agent is leaving, for it was
        /// given back then (``ScheduleClaims``).
        var fromSchedule = false
    }

    /// Decodes and checks a `Present` call's argument, without acting on it.
    func prepare(_ message: DBusMessage) throws -> Prepared {
        var request: AgentRequest
        let toast: ToastMessage
        do {
            request = try AgentRequest(try message.arguments("a{sv}")[0])
        } catch let error as AgentRequestError {
            let name = error.unknownKey ? AgentInterface.ErrorName.unknownKey : AgentInterface.ErrorName.invalidToast
            throw DBusError(name: name, message: error.description)
        } catch let error as DBusError {
            throw DBusError(name: DBusError.Name.invalidArgs, message: error.message)
        }
        let continues = continuing(&request)
        do throws(ToastOptionError) {
            toast = try request.message()
        } catch {
            throw DBusError(name: AgentInterface.ErrorName.invalidToast, message: error.message)
        }
        return Prepared(request: request, toast: toast, continues: continues)
    }

    /// `-r N` where N is the server id of a toast the agent shows: the request becomes an update of that toast — its
    /// id, its lane, its actions and commands when the request brings none, and its waiters, who keep waiting for
    /// its end (``AgentLedger/Live/continues``). Any other `-r N` replaces notification N on the server, in a lane of
    /// its own.
    private func continuing(_ request: inout AgentRequest) -> Bool {
        // The sender's own generated id (`toastkit-…`) does not count as an id it chose.
        guard let serverID = request.options.replaceID, request.options.id?.hasPrefix("toastkit-") != false,
            let (id, live) = ledger.withLock({ $0.continuation(ofServerID: serverID) })
        else { return false }
        request.options.id = id
        request.options.replaceID = nil
        if request.options.actions.isEmpty && request.options.tap == nil {
            request.options.actions = live.request.options.actions
            request.options.tap = live.request.options.tap
            request.onAction = live.request.onAction
            // Its commands run where their sender's did (a sound of this update's plays with its own sender's).
            request.environment = live.request.environment ?? request.environment
            request.workingDirectory = live.request.workingDirectory
        }
        return true
    }

    /// `Present(a{sv}) → (s id, a{sv} shown)`.
    func present(_ prepared: Prepared) async throws -> [DBusValue] {
        let (request, toast) = (prepared.request, prepared.toast)
        let id = toast.id
        if let due = request.options.due, due > AgentStore.now() {
            return try await schedule(request, id: id, due: due)
        }
        // Shown now: an earlier schedule of the id is over (the latest word wins).
        await cancelSchedule(id)
        if let replaceID = request.options.replaceID {
            desktop.adopt(serverID: replaceID, forToast: id, soundPlayed: request.options.soundPlayed)
        }
        // A center ready for a lane that opens, made outside every lock.
        lanes.prepareSpare()
        // A live id stays in its lane (updated in place), unless it now needs one of its own; a new one joins the
        // lane its kind says. The lanes change in the same step as the ledger (a lane is never closed while a toast is
        // on its way into it); no center is made there.
        let admission = ledger.withLock { ledger -> Result<(ToastCenter, ToastCenter?, UInt32?), DBusError> in
            switch ledger.admit(
                id: id, request: request, continues: prepared.continues, fromSchedule: prepared.fromSchedule)
            {
            case .full:
                return .failure(
                    DBusError(
                        name: AgentInterface.ErrorName.queueFull,
                        message: "the agent holds \(AgentLimits.maximumLive) live toasts, its limit; close some first"))
            case .givenBack: return .failure(Self.stopping)
            case .admitted(let lane, _, let leaving, let releases, let serverID):
                let leavingCenter = leaving.flatMap(lanes.center(of:))
                for old in releases { lanes.release(old) }
                style.set(CommandLineStyle(options: request.options), for: id)
                return .success((lanes.open(lane), leavingCenter, serverID))
            }
        }
        let (center, leaving, serverKnown) = try admission.get()
        let notSaved = await writeAhead(request, id: id, toast: toast, serverKnown: serverKnown)
        crash(at: "after-write-ahead")
        // Off its application's lane first (its end there is ignored: it is being presented anew).
        if let leaving {
            leaving.dismiss(id: id)
            await leaving.eventsDelivered()
        }
        center.present(toast)
        // A lane just opened waits for the presenter's first word on Do Not Disturb before it shows anything.
        await center.doNotDisturbKnown()
        if !center.isOnPresenter(id) {
            // Behind its application's front toast, held for Do Not Disturb, or already over: answer now, or once it
            // is shown when the sender needs the server's id (never for a held one: that may be hours).
            guard request.awaitShown, ledger.withLock({ $0.live[id] != nil }), !center.heldToastIDs.contains(id)
            else {
                await center.eventsDelivered()
                return queuedOrEnded(id).arguments
            }
            await shown(id)
        }
        let serverID: UInt32
        do {
            // An update in place that waits for its interval (a script that updates one toast in a loop) is answered
            // with the notification it replaces: the loop is not held to the server's pace, the newest goes out.
            if let waiting = desktop.waitingUpdate(ofToast: id) {
                serverID = waiting
            } else {
                serverID = try await desktop.accepted(id)
            }
        } catch let error as PresentationError {
            // Closed before the server answered (a duration of 0, a close), or withheld by the presenter for Do Not
            // Disturb (the center holds or drops it): its end, or how it is held, says the rest — once the
            // presenter's report of it and the center's event have reached this agent.
            if error.kind == .notPresented {
                await desktop.reportsDelivered()
                await center.eventsDelivered()
                return queuedOrEnded(id).arguments
            }
            let name =
                error.kind == .invalidInput
                ? AgentInterface.ErrorName.invalidToast : AgentInterface.ErrorName.unavailable
            throw DBusError(name: name, message: error.reason)
        }
        // Its sound, where the agent plays it, has played or failed (or is still playing after ``soundWait``): a
        // failure is the sender's warning, as on the direct path, where `send` waits for its sound before it exits.
        // A scheduled toast has no sender waiting: what comes later goes to the log (``watchEvents()``).
        if !prepared.fromSchedule { await desktop.soundsPlayed(id, within: AgentInterface.soundWait) }
        // What the presenter reported on the way (a degraded feature, a sound not played) has reached the center now.
        await desktop.reportsDelivered()
        await center.eventsDelivered()
        // 0: no notification (a job view on Plasma). The id it had (`send -p` printed it, the script sends `-r` with
        // it), or a number of the agent's own, stays its name for `-r` and is what the sender is told.
        let knownAs = ledger.withLock { $0.serverAnswered(id: id, serverID: serverID) }
        // Its server id (and its timer, as it runs now) is on disk before the answer: a crash after it leaves the
        // next agent able to show it again in place, with the time it has.
        let entry = center.entryState(of: id)
        let serverNotSaved = await saver.save([
            .server(id, Self.savedServerID(knownAs) ?? 0, server: desktop.serverOwner),
            .timer(id, remaining: entry?.remaining?.seconds, running: entry?.isRunning ?? false),
        ])
        if let serverNotSaved, notSaved == nil {
            style.warn(
                "the toast's server id is not saved, a restarted agent will show it anew: \(serverNotSaved)", for: id)
        }
        crash(at: "before-reply")
        let warnings = style.takeWarnings(for: id)
        if prepared.fromSchedule {
            for warning in warnings { ErrorLine.write("warning: toast \"\(id)\": \(warning)") }
        }
        // Sent during Do Not Disturb (`--dnd show`): said as on the direct path.
        return AgentPresented(
            id: id, serverID: knownAs, warnings: warnings, suppression: ledger.withLock { $0.suppressed[id] }
        ).arguments
    }

    /// Write-ahead: the toast is on disk before the server hears of it, so a crash from here on leaves it to the next
    /// agent (docs/agent.md). Returns why it is not, if it is not (the toast is shown all the same, with a warning:
    /// a full disk is no reason to lose the message).
    private func writeAhead(_ request: AgentRequest, id: String, toast: ToastMessage, serverKnown: UInt32?) async
        -> String?
    {
        let duration = try? toast.duration.resolved(default: .standardDefault)
        // An id is saved with the server that gave it, never without (a next agent would take it for any server's).
        let owner = desktop.serverOwner
        let notSaved = await saver.save(
            .put(
                AgentStore.Saved(
                    request: request, id: id, serverID: owner == nil ? nil : serverKnown, server: owner,
                    remaining: duration?.seconds, running: false)))
        if let notSaved {
            style.warn("the toast is not saved, a restarted agent will not know it: \(notSaved)", for: id)
        }
        return notSaved
    }

    /// Dies at fail point `step` when ``crashPoint`` names it.
    private func crash(at step: String) {
        if crashPoint == step { kill(getpid(), SIGKILL) }
    }

    /// The center that holds live toast `id`, if any.
    func center(holding id: String) -> ToastCenter? {
        guard let lane = ledger.withLock({ $0.machine.lanes[id] }) else { return nil }
        return lanes.center(of: lane)
    }

    /// `Present`'s details for a toast not on screen: `queued` while it waits, `ended` (the outcome's name) once
    /// it is over.
    private func queuedOrEnded(_ id: String) -> AgentPresented {
        let (live, ended, suppressed) = ledger.withLock { ($0.live[id] != nil, $0.ended[id], $0.suppressed[id]) }
        if live {
            return AgentPresented(id: id, queued: true, warnings: style.takeWarnings(for: id), suppression: suppressed)
        }
        return AgentPresented(id: id, suppression: suppressed, ended: ended?.name ?? "closed")
    }

    /// Returns once toast `id` is on the presenter, held for Do Not Disturb, or has ended.
    private func shown(_ id: String) async {
        await waiters.wait { waiter in
            carry(ledger.withLock { $0.handle(.awaitShown(id: id, waiter: waiter, onPresenter: false)) })
            // It may have been shown, held, or ended before the waiter was in place (a resumed waiter is passed over
            // when the ledger names it again).
            let onPresenter =
                center(holding: id).map { $0.isOnPresenter(id) || $0.heldToastIDs.contains(id) } ?? true
            if onPresenter { waiters.resume([waiter]) }
        }
    }
}
