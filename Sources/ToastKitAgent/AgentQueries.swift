// The agent's queries: `Close`, `Wait`, `List` and `GetInfo`, answered from the ledger and the centers.
import DBus
import Glibc
import ToastKit
import ToastModel

extension ToastAgent {
    /// `Close(s id) → (b closed)`: false when no toast with this id is live.
    func close(_ message: DBusMessage) async throws -> [DBusValue] {
        guard let id = try message.arguments("s")[0].stringValue else { return [.boolean(false)] }
        if await cancelSchedule(id) { return [.boolean(true)] }
        guard let center = center(holding: id), center.liveToastIDs.contains(id) else { return [.boolean(false)] }
        center.dismiss(id: id)
        return [.boolean(true)]
    }

    /// `Wait(s id) → (s outcome, a{sv} details)`: answers when the toast ends (at once for one that ended
    /// recently).
    func wait(_ message: DBusMessage) async throws -> [DBusValue] {
        guard let id = try message.arguments("s")[0].stringValue else { return [] }
        let unknown = DBusError(
            name: AgentInterface.ErrorName.unknownToast, message: "no toast \"\(id)\" is live or ended recently")
        var outcome: ToastOutcome
        var missed = 0
        while true {
            // The agent's record first: it is written, with the toast's removal from `live`, as the end is delivered.
            if let ended = ledger.withLock({ $0.live[id] == nil ? $0.ended[id] : nil }) { return ended.arguments }
            guard let center = center(holding: id) else { throw unknown }
            do {
                outcome = try await center.outcome(of: id)
            } catch is ToastCenterError {
                // It ended in the center and the end is on its way to the agent (an action's end, right after the
                // click): once the center's events are delivered, the agent's record has it.
                missed += 1
                guard missed < 3 else { throw unknown }
                await center.eventsDelivered()
                continue
            }
            await center.eventsDelivered()
            // A snooze (`-A later=10m`) is the center's action, and the agent's deferral: the agent's record says so.
            if case .actionInvoked("later") = outcome,
                let ended = ledger.withLock({ $0.live[id] == nil ? $0.ended[id] : nil }), ended.name == "deferred"
            {
                await eventsSent()
                return ended.arguments
            }
            // Still live after its end: a new presentation of the id took its place (`--id` again, or it moved to a
            // lane of its own), and this one was replaced.
            let (stillLive, continues) = ledger.withLock { ($0.live[id] != nil, $0.live[id]?.continues == true) }
            if stillLive, outcome != .replaced { outcome = .replaced }
            // A `-r` of its server id updated it: who waits for it waits for the updated toast's end.
            if outcome == .replaced, continues { continue }
            break
        }
        let record = ledger.withLock { $0.ended[id] }
        // After the events of its end (a closed prompt, an action): the caller hears them first.
        await eventsSent()
        return AgentOutcome(
            outcome, serverID: record?.details["server_id"]?.uint32Value,
            activationToken: record?.details["activation_token"]?.stringValue,
            reply: record?.details["reply"]?.stringValue, unexplained: observer.unexplainedClose(of: id)
        ).arguments
    }

    /// `List() → aa{sv}`: the live toasts, front first, then the kept ones (Later).
    func list() -> [DBusValue] {
        let live = ledger.withLock { $0.live }
        var items: [DBusValue] = []
        for center in lanes.centers {
            for (index, entry) in center.entryStates.enumerated() where !entry.isConfirmation {
                items.append(listItem(entry, front: index == 0, live: live[entry.id]))
            }
        }
        let scheduled = ledger.withLock { $0.scheduled.values.sorted { ($0.due, $0.id) < ($1.due, $1.id) } }
        for entry in scheduled {
            items.append(
                .variantDictionary([
                    ("id", .string(entry.id)), ("state", .string("scheduled")), ("running", .boolean(false)),
                    ("due", .double(entry.due)), ("title", .string(entry.request.options.title)),
                    ("status", .string((entry.request.options.status ?? .normal).rawValue)),
                ]))
        }
        return [.array("a{sv}", items)]
    }

    /// One toast of `List`.
    func listItem(_ entry: ToastStack.EntryState, front: Bool, live toast: AgentLedger.Live?) -> DBusValue {
        do {
            var fields: [(String, DBusValue)] = [
                ("id", .string(entry.id)),
                (
                    "state",
                    .string(front && entry.isOnPresenter ? "front" : entry.isOnPresenter ? "shown" : "waiting")
                ),
                ("running", .boolean(entry.isRunning)),
            ]
            if let remaining = entry.remaining { fields.append(("remaining", .double(remaining.seconds))) }
            if let toast {
                fields.append(("title", .string(toast.request.options.title)))
                fields.append(("status", .string((toast.request.options.status ?? .normal).rawValue)))
                if let serverID = toast.serverID { fields.append(("server_id", .uint32(serverID))) }
            }
            return .variantDictionary(fields)
        }
    }

    /// `GetInfo() → a{sv}`.
    func info() -> [DBusValue] {
        [
            .variantDictionary([
                ("version", .string(version)), ("pid", .uint32(UInt32(getpid()))),
                ("uid", .uint32(getuid())), ("live", .uint32(UInt32(ledger.withLock { $0.live.count }))),
                ("max_visible", .uint32(UInt32(settings.maxVisible))),
                ("idle_timeout", .double(settings.idleTimeout?.seconds ?? 0)),
            ])
        ]
    }
}
