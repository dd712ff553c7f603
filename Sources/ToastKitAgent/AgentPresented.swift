// `Present`'s answer, one type for the agent that writes it and the client that reads it: the toast's id and the
// `shown` dictionary's keys in one place.
package import DBus
package import ToastModel

/// What `Present(a{sv}) → (s id, a{sv} shown)` answered: the toast's server id once the server has it, or that it
/// waits (`queued`), is scheduled, or already ended; the warnings on the way; what Do Not Disturb did to it.
package struct AgentPresented: Sendable, Equatable {
    /// The toast's id.
    package var id: String
    /// The server's id; nil while the toast waits behind the front toast (`queued`) or once it has ended.
    package var serverID: UInt32?
    /// It waits behind its application's front toast, or is held for Do Not Disturb.
    package var queued = false
    /// What degraded on the way (a feature the server lacks, a sound not played).
    package var warnings: [String] = []
    /// When a scheduled toast (`--in`, `--at`) is due, in seconds since 1970.
    package var scheduled: Double?
    /// How Do Not Disturb held the toast back, if it did.
    package var suppression: ToastSuppression?
    /// How the toast ended before `Present` answered, if it did.
    package var ended: String?

    /// An answer for toast `id`.
    package init(
        id: String, serverID: UInt32? = nil, queued: Bool = false, warnings: [String] = [], scheduled: Double? = nil,
        suppression: ToastSuppression? = nil, ended: String? = nil
    ) {
        self.id = id
        self.serverID = serverID
        self.queued = queued
        self.warnings = warnings
        self.scheduled = scheduled
        self.suppression = suppression
        self.ended = ended
    }

    /// The keys of the `shown` dictionary.
    private enum Key {
        static let serverID = "server_id"  // u
        static let queued = "queued"  // b
        static let warnings = "warnings"  // as
        static let scheduled = "scheduled"  // d
        static let ended = "ended"  // s: the outcome's name
        // dnd, dnd_source, dnd_effect: ``AgentInterface/details(of:)``
    }

    /// The reply's arguments.
    package var arguments: [DBusValue] {
        var shown: [(String, DBusValue)] = []
        if let serverID { shown.append((Key.serverID, .uint32(serverID))) }
        if queued { shown.append((Key.queued, .boolean(true))) }
        if let ended { shown.append((Key.ended, .string(ended))) }
        if !warnings.isEmpty { shown.append((Key.warnings, .strings(warnings))) }
        if let scheduled { shown.append((Key.scheduled, .double(scheduled))) }
        if let suppression { shown += AgentInterface.details(of: suppression) }
        return [.string(id), .variantDictionary(shown)]
    }

    /// Reads `Present`'s reply.
    package init(arguments reply: DBusMessage) throws(DBusError) {
        let values = try reply.arguments("sa{sv}")
        let shown = values[1].variantDictionaryValue ?? [:]
        id = values[0].stringValue ?? ""
        serverID = shown[Key.serverID]?.uint32Value
        queued = shown[Key.queued]?.boolValue ?? false
        warnings = shown[Key.warnings]?.stringsValue ?? []
        scheduled = shown[Key.scheduled]?.doubleValue
        suppression = AgentInterface.suppression(in: shown)
        ended = shown[Key.ended]?.stringValue
    }
}
