package import DBus
package import ToastKit

/// The `toastkit agent`'s D-Bus interface, `org.toastkit.Agent1` at `/org/toastkit/Agent1` on the session bus: its
/// names, errors, event kinds, methods and introspection data (its one structured argument, the toast, is
/// ``AgentRequest``; a toast's end, ``AgentOutcome``). Both the agent and the `toastkit` commands that talk to it use
/// this file; docs/agent.md describes it for other clients.
package enum AgentInterface {
    /// The agent's well-known name.
    package static let busName: BusName = "org.toastkit.Agent1"
    /// Its object.
    package static let path: ObjectPath = "/org/toastkit/Agent1"
    /// Its interface.
    package static let interface: InterfaceName = "org.toastkit.Agent1"
    /// How long the agent may take to call the server: the direct path's limit (`callTimeout`, 10 s), the one the
    /// README's exit code 69 names.
    package static let serverTimeout: Duration = .seconds(10)
    /// How long `Present` waits, once the server has the toast, for the sound the agent plays for it (where the server
    /// plays none) to have played or failed: a failure is then among the answer's warnings, as `send` says it on the
    /// direct path; one that comes later is an `Event` (`warning`) and a line in the agent's log.
    package static let soundWait: Duration = .seconds(2)

    /// The errors the agent answers with.
    package enum ErrorName {
        /// The toast cannot be shown as given (a missing title, a NUL byte, a bad hint…): `toastkit` exits 65.
        package static let invalidToast: DBusError.Name = "org.toastkit.Agent1.Error.InvalidToast"
        /// No notification server, or it refused: `toastkit` exits 69.
        package static let unavailable: DBusError.Name = "org.toastkit.Agent1.Error.Unavailable"
        /// No toast with this id is live or ended recently.
        package static let unknownToast: DBusError.Name = "org.toastkit.Agent1.Error.UnknownToast"
        /// The caller is not the agent's own user.
        package static let accessDenied: DBusError.Name = "org.toastkit.Agent1.Error.AccessDenied"
        /// The agent is exiting for being idle and took nothing: call again (the next agent answers).
        package static let stopping: DBusError.Name = "org.toastkit.Agent1.Error.Stopping"
        /// The agent holds as many live toasts as it may (``AgentLimits/maximumLive``): `toastkit` exits 69.
        package static let queueFull: DBusError.Name = "org.toastkit.Agent1.Error.QueueFull"
        /// The toast has a key this agent does not know (a newer `toastkit` sent it): the sender shows it directly.
        /// Agents before 0.2.1 said this as ``invalidToast`` with "unknown key" in the message.
        package static let unknownKey: DBusError.Name = "org.toastkit.Agent1.Error.UnknownKey"
    }

    /// The kinds of the `Event(s id, s kind, a{sv} details)` signal, as the agent sends them and the client reads
    /// them: one list for both sides.
    package enum EventKind: String, Sendable, CaseIterable {
        /// A presentation of the toast went out to its center.
        case presented
        /// The toast, held for Do Not Disturb, is shown now (`server_id` once the server has it).
        case shown
        /// Do Not Disturb held, dropped or let through the toast (its details: `dnd`, `dnd_source`, …).
        case suppressed
        /// An action was invoked (`action`, `activation_token`).
        case action
        /// A reply prompt opened for action `action`.
        case replyAsked = "reply_asked"
        /// The reply prompt of action `action` was cancelled.
        case replyCancelled = "reply_cancelled"
        /// The person sent `text` with reply action `action`.
        case replied
        /// The toast ended (`outcome`, with the outcome's details).
        case ended
        /// Something went wrong on the way after `Present` answered (`reason`): a sound that could not be played, a
        /// feature the server lacks in a later presentation.
        case warning
        /// The notification server left the bus (`reason`); the id is empty unless one toast failed.
        case serverLeft = "server-left"
        /// A notification server is back (empty id).
        case serverBack = "server-back"
        /// The screen was locked, or Do Not Disturb paused the toasts' time (empty id).
        case paused
        /// The toasts' time runs again (empty id).
        case resumed
    }

    /// A call of `member` on the agent.
    package static func call(_ member: MemberName, _ arguments: [DBusValue] = []) -> DBusMethodCall {
        DBusMethodCall(destination: busName, path: path, interface: interface, member: member, arguments: arguments)
    }

    /// One argument of a method or signal: its name, its type, and whether it is an input.
    package struct Argument: Sendable {
        package var name: String
        package var type: String
        package var input = false
    }

    /// The interface's methods, each with its arguments in order: what ``introspection`` says and what the agent
    /// exports (it checks that it exports exactly these).
    package static let methods: [(name: MemberName, arguments: [Argument])] = [
        (
            "Present",
            [
                Argument(name: "toast", type: "a{sv}", input: true), Argument(name: "id", type: "s"),
                Argument(name: "shown", type: "a{sv}"),
            ]
        ),
        ("Close", [Argument(name: "id", type: "s", input: true), Argument(name: "closed", type: "b")]),
        (
            "Wait",
            [
                Argument(name: "id", type: "s", input: true), Argument(name: "outcome", type: "s"),
                Argument(name: "details", type: "a{sv}"),
            ]
        ),
        ("List", [Argument(name: "toasts", type: "aa{sv}")]),
        ("TakeHandOver", []),
        ("GetInfo", [Argument(name: "info", type: "a{sv}")]),
    ]

    /// The interface's one signal: `Event(s id, s kind, a{sv} details)`, its kinds ``EventKind``.
    package static let event: (name: MemberName, arguments: [Argument]) = (
        "Event",
        [Argument(name: "id", type: "s"), Argument(name: "kind", type: "s"), Argument(name: "details", type: "a{sv}")]
    )

    /// The introspection data of the interface (docs/agent.md quotes it), made from ``methods`` and ``event``.
    package static let introspection: String = {
        func line(_ argument: Argument, direction: Bool) -> String {
            let way = direction ? " direction=\"\(argument.input ? "in" : "out")\"" : ""
            return "      <arg name=\"\(argument.name)\" type=\"\(argument.type)\"\(way)/>"
        }
        var lines = [
            #"<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN""#,
            #" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">"#,
            "<node name=\"\(path.rawValue)\">", "  <interface name=\"\(interface.rawValue)\">",
        ]
        for (name, arguments) in methods {
            guard !arguments.isEmpty else {
                lines.append("    <method name=\"\(name.rawValue)\"/>")
                continue
            }
            lines.append("    <method name=\"\(name.rawValue)\">")
            lines += arguments.map { line($0, direction: true) }
            lines.append("    </method>")
        }
        lines.append("    <signal name=\"\(event.name.rawValue)\">")
        lines += event.arguments.map { line($0, direction: false) }
        lines += [
            "    </signal>", "  </interface>", #"  <interface name="org.freedesktop.DBus.Introspectable">"#,
            #"    <method name="Introspect"><arg name="data" type="s" direction="out"/></method>"#, "  </interface>",
            "</node>",
        ]
        return lines.joined(separator: "\n")
    }()
}

extension AgentInterface {
    /// A ``ToastSuppression`` in a `Present` answer and a `suppressed` event: `dnd` (s: held, dropped, sent_anyway),
    /// `dnd_source` (s), `dnd_effect` (s, when known).
    package static func details(of suppression: ToastSuppression) -> [(String, DBusValue)] {
        [("dnd", .string(suppression.kind.wireName)), ("dnd_source", .string(suppression.source))]
            + (suppression.serverEffect.map { [("dnd_effect", .string($0))] } ?? [])
    }

    /// The suppression in `details` (a `Present` answer or a `suppressed` event), if any.
    package static func suppression(in details: [String: DBusValue]) -> ToastSuppression? {
        guard let name = details["dnd"]?.stringValue,
            let kind = ToastSuppression.Kind.allCases.first(where: { $0.wireName == name })
        else { return nil }
        let state = ToastDoNotDisturb(
            isOn: true, source: details["dnd_source"]?.stringValue ?? "",
            serverEffect: details["dnd_effect"]?.stringValue)
        return ToastSuppression(kind: kind, state: state)
    }
}

extension ToastSuppression.Kind {
    /// The kind's name in the agent's `dnd` field and the `suppressed` JSON event's `how`.
    package var wireName: String {
        switch self {
        case .held: "held"
        case .dropped: "dropped"
        case .sentAnyway: "sent_anyway"
        }
    }
}
