// Scheduled toasts (`send --in`, `--at`, a snooze) as the agent carries them out: kept in the user's store and the
// ledger, fired when due (claimed first, so two sessions' agents show it once), given back when no server showed
// it, and followed as the store changes; and the requests of toasts kept with Later with their `--on-action` commands.
import DBus
import ToastKit
import ToastModel

extension ToastAgent {
    /// Keeps `request` until `due` (seconds since 1970): on disk for the next agent of the user, in the machine for
    /// this one. Answers `(id, {"scheduled": due})`.
    func schedule(_ request: AgentRequest, id: String, due: Double) async throws -> [DBusValue] {
        guard let schedules else {
            throw DBusError(
                name: AgentInterface.ErrorName.unavailable,
                message: "the agent cannot keep scheduled toasts: its state folder cannot be used (see its log)")
        }
        var kept = request
        kept.options.due = nil
        kept.options.id = id
        kept.awaitShown = false
        let entry = ScheduleStore.Entry(id: id, due: due, request: kept)
        do {
            try await storeIO.run { try schedules.put(entry) }
        } catch {
            throw DBusError(
                name: AgentInterface.ErrorName.unavailable, message: "the scheduled toast cannot be kept: \(error)")
        }
        let actions = ledger.withLock { $0.schedule(entry, due: machineTime(of: due), now: now()) }
        guard actions.contains(.keepScheduled) else {
            _ = try? await storeIO.run { try schedules.remove(id) }
            throw DBusError(
                name: AgentInterface.ErrorName.queueFull,
                message: "the agent holds \(AgentLimits.maximumLive) toasts, its limit; close some first")
        }
        perform(actions)
        return AgentPresented(id: id, scheduled: due).arguments
    }

    /// The machine's time for `due` (seconds since 1970).
    func machineTime(of due: Double) -> Duration {
        now() + .milliseconds(Int64(((due - AgentStore.now()) * 1000).rounded()))
    }

    /// Cancels the schedule of `id`, if it has one (and removes it from disk); whether it had one.
    @discardableResult
    func cancelSchedule(_ id: String) async -> Bool {
        let actions = ledger.withLock { $0.cancelSchedule(id, now: now()) }
        guard let actions else { return false }
        if let schedules {
            do { _ = try await storeIO.run { try schedules.remove(id) } } catch { ErrorLine.write("warning: \(error)") }
        }
        perform(actions)
        return true
    }

    /// Shows the scheduled toast `id`, whose time has come, unless another agent of the user (another session)
    /// showed it first or this one is leaving; then answers the call the machine counted for it. It stays claimed
    /// (``ScheduleClaims``) until a server accepts it: if the agent leaves before, it goes back to the user's store.
    func fire(_ id: String) async {
        defer { leave() }
        guard let entry = ledger.withLock({ $0.takeDue(id) }) else { return }
        // A session with no notification server (a headless `dbus-run-session`, an SSH login) leaves the toast to
        // one that has one: unclaimed, it stays in the user's store for that session's agent, and this one takes it
        // up again if a server comes here.
        guard await sessionShowsToasts() else {
            ErrorLine.write(
                "the scheduled toast \"\(id)\" is due, but this session has no notification server: it is left for "
                    + "a session that has one")
            awaitServerForSchedules()
            return
        }
        let mine: Bool
        do {
            if let schedules {
                // On the store's queue, as the give-back: claims that are closed claim nothing.
                mine = try await storeIO.run { [self] in
                    guard ledger.withLock({ $0.claims.isOpen }), try schedules.claim(entry.id, due: entry.due) else {
                        return false
                    }
                    ledger.withLock { $0.claims.claimed(entry) }
                    return true
                }
            } else {
                mine = true
            }
        } catch {
            // The store cannot be changed: shown all the same (another session's agent may show it too).
            ErrorLine.write("warning: \(error)")
            mine = true
        }
        guard mine else { return }
        if entry.setAsideLost, !entry.request.onAction.isEmpty {
            runner.note(
                "toast \(id): the runtime file of its sender's environment is gone (the session it was sent in ended,"
                    + " or the machine restarted): its commands run with the kept variables only")
        }
        do {
            let toast = try entry.request.message()
            _ = try await present(
                Prepared(request: entry.request, toast: toast, continues: false, fromSchedule: true))
            // A server has it (its id is known): settled here, not only by the `shown` event's own look.
            ledger.withLock { if $0.live[id]?.serverID != nil { $0.claims.settle(id) } }
        } catch let error as DBusError where error.name == AgentInterface.ErrorName.stopping {
            return  // given back as the agent left
        } catch {
            // Never showable as it is (the store refuses what is invalid): not kept. Anything else (the agent full,
            // the server or the bus gone) is given back when the agent leaves.
            let invalid = (error as? DBusError)?.name == AgentInterface.ErrorName.invalidToast
            if invalid { ledger.withLock { $0.claims.settle(id) } }
            ErrorLine.write(
                "warning: the scheduled toast \"\(id)\" cannot be shown: \(error)"
                    + (invalid ? "" : "; it is kept for the next agent"))
        }
    }

    /// Whether a toast shown here can reach a person: the notification service's name has an owner, or the bus can
    /// start one and the session has a display for it (D-Bus activation of a server fails without one).
    func sessionShowsToasts() async -> Bool {
        let name = NotificationsClient.busName
        if (try? await connection.bus.nameOwner(of: name)) != nil { return true }
        guard
            environment["DISPLAY"].map({ !$0.isEmpty }) == true
                || environment["WAYLAND_DISPLAY"].map({ !$0.isEmpty }) == true
        else { return false }
        guard
            let reply = try? await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "ListActivatableNames"),
            let names = (try? reply.arguments("as"))?.first?.stringsValue
        else { return false }
        return names.contains(name.rawValue)
    }

    /// Takes up the user's schedules again once a notification server owns its name on this bus (once: one watch at
    /// a time).
    func awaitServerForSchedules() {
        let start = serverWatch.withLock { watching in
            defer { watching = true }
            return !watching
        }
        guard start else { return }
        Task { [weak self, connection] in
            guard let changes = try? await connection.bus.nameOwnerChanges(of: NotificationsClient.busName) else {
                return
            }
            defer { self?.serverWatch.withLock { $0 = false } }
            for try await change in changes where change.newOwner != nil {
                self?.serverWatch.withLock { $0 = false }
                self?.takeUpSchedules()
                return
            }
        }
    }

    /// The agent is leaving: the scheduled toasts it claimed that no server accepted go back to the user's store,
    /// due at once, except (with `keepingLive`) those live here: the saved journal takes them to this bus's next
    /// agent.
    func giveBackClaimedSchedules(keepingLive: Bool) {
        guard let schedules else { return }
        do {
            // After every claim on the store's queue: one under way is recorded, and given back, too.
            let given = try storeIO.runNow { () throws(PrivateFileError) -> [String] in
                let entries = ledger.withLock { $0.closeClaims(keepingLive: keepingLive) }
                return entries.isEmpty ? [] : try schedules.giveBack(entries)
            }
            guard !given.isEmpty else { return }
            ErrorLine.write(
                "giving back \(given.count) scheduled toast(s) no server showed, for the next agent: "
                    + given.joined(separator: ", "))
        } catch {
            ErrorLine.write("warning: scheduled toasts no server showed are lost: \(error)")
        }
    }

    /// `-A later=DURATION` chosen: the toast goes now and comes back after its snooze, by itself. (Its end,
    /// `.actionInvoked("later")`, follows from the center as for any action: recorded as deferred.)
    func snooze(_ id: String, _ request: AgentRequest) async {
        guard let seconds = request.options.snooze else { return }
        do {
            _ = try await schedule(request, id: id, due: AgentStore.now() + seconds)
        } catch {
            ErrorLine.write("warning: the toast \"\(id)\" cannot come back later: \(error)")
        }
    }

    /// `-A later` chosen on a toast with `--on-action` commands: its request is kept with it
    /// (``CommandLineLater/commands(environment:)``), here and now — on the center's thread, before the center keeps
    /// its record — so that `toastkit later --show`, which hands it back, finds its commands with it.
    func keepCommands(_ id: String, _ request: AgentRequest) {
        var kept = request
        kept.options.id = id
        do {
            let store = try CommandLineLater.commands(environment: environment)
            try store.put(ScheduleStore.Entry(id: id, due: AgentStore.now(), request: kept))
        } catch {
            ErrorLine.write("warning: the toast \"\(id)\" is kept for later without its --on-action commands: \(error)")
        }
    }

    /// Holds what the user's store of schedules holds: at start (each toast waits for its time, or is shown at once
    /// when its time came while no agent ran), and whenever files of it change (``ScheduleWatch``, `changed`: their
    /// names, nil when any may have) — a schedule another session's agent or `close --id` made, moved or removed, a
    /// toast another agent showed (claimed) or gave back (``ScheduleClaims``). Only the files that changed are read
    /// again when their names tell their ids. The first agent of the user to reach a toast's time shows it.
    func takeUpSchedules(changed: Set<String>? = nil) {
        guard let schedules else { return }
        let some = changed.flatMap { schedules.load(names: $0) }
        guard let entries = some?.entries ?? schedules.loadIfLocked() else { return }
        // A claimed id is off the disk until given back: one found there is a newer schedule of the id, taken up as
        // any other (a stale reading costs one claim that fails, for its due time is gone).
        let (actions, taken) = ledger.withLock {
            $0.reconcile(entries, ids: some?.ids, due: machineTime(of:), now: now())
        }
        if !taken.isEmpty {
            ErrorLine.write("taking up \(taken.count) scheduled toast(s): \(taken.joined(separator: ", "))")
        }
        perform(actions)
    }

    /// Follows the user's store of schedules from now on (``takeUpSchedules(changed:)`` on each change of its
    /// folder); without inotify, says so once and looks at the folder every couple of seconds.
    func watchSchedules() {
        guard let schedules else { return }
        let folder = schedules.folder
        let (watch, unwatched) = ScheduleWatch.start(folder: folder) { [weak self] changed in
            self?.takeUpSchedules(changed: changed)
        }
        scheduleWatch.withLock { $0 = watch }
        if let unwatched {
            ErrorLine.write(
                "warning: \(folder) cannot be watched (\(unwatched)): it is looked at every"
                    + " \(ScheduleWatch.pollInterval.components.seconds) s instead")
        }
    }
}
