// How a toast ended, as the agent's `Wait` answers and its `Event` signal says.
package import DBus
package import ToastKit

/// How a toast ended, as the agent's `Wait` answers and its `Event` signal says: the outcome's name and details.
package struct AgentOutcome: Sendable, Equatable {
    /// `action`, `dismissed`, `expired`, `closed`, `replaced`, `deferred`, `suppressed` or `failed`.
    package var name: String
    /// `action` (s), `activation_token` (s), `reply` (s, the text sent with a reply action), `server_id` (u),
    /// `reason` (s), `kept` (b, for deferred), `invalid` (b).
    package var details: [String: DBusValue]

    package init(name: String, details: [String: DBusValue] = [:]) {
        self.name = name
        self.details = details
    }

    /// The outcome of `ToastOutcome`, with what the agent knows besides.
    package init(
        _ outcome: ToastOutcome, serverID: UInt32?, activationToken: String?, reply: String? = nil,
        unexplained: String?
    ) {
        var details: [String: DBusValue] = [:]
        if let serverID { details["server_id"] = .uint32(serverID) }
        switch outcome {
        case .actionInvoked(let actionID):
            name = "action"
            details["action"] = .string(actionID)
            if let activationToken { details["activation_token"] = .string(activationToken) }
            if let reply { details["reply"] = .string(reply) }
        case .dismissed:
            if let unexplained {
                name = "closed"
                details["detail"] = .string(unexplained)
            } else {
                name = "dismissed"
            }
        case .expired: name = "expired"
        case .closedByApp: name = "closed"
        case .replaced: name = "replaced"
        case .deferred: name = "deferred"
        case .suppressed: name = "suppressed"
        case .failed(let failure):
            name = "failed"
            switch failure {
            case .invalid(let error):
                details["reason"] = .string(ToastOptions.describe(error))
                details["invalid"] = .boolean(true)
            case .presenter(let reason): details["reason"] = .string(reason)
            }
        }
        self.details = details
    }

    /// The model's outcome this stands for, and the server's words for a close that was not the person's; nil for
    /// `failed` (its reason and `invalid` flag say more) and for a name this version does not know.
    package var toastOutcome: (outcome: ToastOutcome, unexplainedClose: String?)? {
        switch name {
        case "action": details["action"]?.stringValue.map { (.actionInvoked(actionID: $0), nil) }
        case "dismissed": (.dismissed, nil)
        case "expired": (.expired, nil)
        case "closed":
            if let detail = details["detail"]?.stringValue { (.dismissed, detail) } else { (.closedByApp, nil) }
        case "replaced": (.replaced, nil)
        case "deferred": (.deferred, nil)
        case "suppressed": (.suppressed, nil)
        default: nil
        }
    }

    /// The `Wait` reply's arguments.
    package var arguments: [DBusValue] {
        [.string(name), .variantDictionary(details.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })]
    }

    /// Reads a `Wait` reply.
    package init(reply: DBusMessage) throws(DBusError) {
        let values = try reply.arguments("sa{sv}")
        name = values[0].stringValue ?? ""
        details = values[1].variantDictionaryValue ?? [:]
    }
}
