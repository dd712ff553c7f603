import DBus
import Glibc
import ToastKit
import ToastKitAgent

/// `toastkit listen [--json]`: a bus monitor that prints the notification traffic, one line per message —
/// `Notify` (with the id the server answered), `CloseNotification`, and the server's signals.
struct ListenCommand {
    let json: Bool

    private enum Input: Sendable {
        case message(DBusMessage)
        case ended(String)
        case signal(Int32)
    }

    func run() async throws(CommandFailure) -> ExitCode {
        let watcher = SignalWatcher()
        let connection = try await BusAccess.connect()
        defer { connection.close() }
        let traffic: SignalSubscription
        do {
            traffic = try await connection.monitor([
                MatchRule(kind: .methodCall, interface: NotificationsClient.interface),
                MatchRule(kind: .signal, interface: NotificationsClient.interface),
                MatchRule(kind: .methodReturn),
                MatchRule(kind: .error),
            ])
        } catch {
            throw .unavailable("cannot monitor the session bus: \(error)")
        }
        // Once the monitor is in place: tells a person (and a script) that nothing sent from now on is missed.
        Output.error("listening for notifications on the session bus (Ctrl-C stops)")
        let (inputs, continuation) = AsyncStream<Input>.makeStream()
        let reader = Task {
            do {
                for try await message in traffic { continuation.yield(.message(message)) }
                continuation.yield(.ended("the bus monitor ended"))
            } catch {
                continuation.yield(.ended("the session bus went away: \(error)"))
            }
        }
        let signals = Task {
            for await signal in watcher.signals { continuation.yield(.signal(signal)) }
        }
        defer {
            reader.cancel()
            signals.cancel()
        }
        var formatter = TrafficFormatter(json: json)
        for await input in inputs {
            switch input {
            case .message(let message):
                for line in formatter.lines(for: message) { Output.line(line) }
                // Nobody reads any more (`listen | head -1`), or the disk is full: stop rather than lose lines.
                if let failure = Output.lostOutput { throw failure }
            case .signal:
                for line in formatter.flush() { Output.line(line) }
                return .success
            case .ended(let reason):
                for line in formatter.flush() { Output.line(line) }
                throw .unavailable(reason)
            }
        }
        return .success
    }
}

/// Turns monitored messages into lines. A `Notify` is printed when its reply (with the server's id) arrives.
struct TrafficFormatter {
    let json: Bool
    private var pending: [String: (order: Int, call: DBusMessage)] = [:]
    private var counter = 0

    init(json: Bool) {
        self.json = json
    }

    mutating func lines(for message: DBusMessage) -> [String] {
        switch message.kind {
        case .methodCall where message.member == "Notify":
            guard !message.noReplyExpected, let sender = message.sender else { return [notify(message, id: nil)] }
            counter += 1
            pending["\(sender) \(message.serial)"] = (counter, message)
            if pending.count > 256, let oldest = pending.min(by: { $0.value.order < $1.value.order }) {
                pending[oldest.key] = nil
                return [notify(oldest.value.call, id: nil)]
            }
            return []
        case .methodCall where message.member == "CloseNotification":
            let id = message.body.first?.uint32Value ?? 0
            if json {
                return [
                    JSONObject([
                        ("event", .string("close")), ("sender", .optional(message.sender)),
                        ("id", .integer(Int64(id))),
                    ]).serialized
                ]
            }
            return ["close \(message.sender ?? "?") id=\(id)"]
        case .methodCall:
            return []
        case .methodReturn, .error:
            guard let destination = message.destination, let serial = message.replySerial,
                let call = pending.removeValue(forKey: "\(destination) \(serial)")?.call
            else { return [] }
            if message.kind == .error {
                return [notify(call, id: nil, error: message.errorName ?? "error")]
            }
            return [notify(call, id: message.body.first?.uint32Value)]
        case .signal:
            guard let signal = NotificationSignal(message) else { return [] }
            return [describe(signal, sender: message.sender)]
        }
    }

    /// The `Notify` calls still waiting for a reply, without their id.
    mutating func flush() -> [String] {
        let calls = pending.values.sorted { $0.order < $1.order }.map(\.call)
        pending = [:]
        return calls.map { notify($0, id: nil) }
    }

    private func notify(_ call: DBusMessage, id: UInt32?, error: String? = nil) -> String {
        guard let notify = try? NotifyCall(call) else {
            return json
                ? JSONObject([("event", .string("notify")), ("sender", .optional(call.sender))]).serialized
                : "notify \(call.sender ?? "?") (malformed arguments: \(call.signature))"
        }
        let (app, replaces, icon, summary, body) = (
            notify.appName, notify.replacesID, notify.appIcon, notify.summary, notify.body
        )
        let actions = notify.actionList
        let hints = notify.hints.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let expire = notify.expireTimeout
        if json {
            var object = JSONObject([("event", .string("notify")), ("sender", .optional(call.sender))])
            object["id"] = id.map { .integer(Int64($0)) } ?? .null
            object["app"] = .string(app)
            object["replaces"] = .integer(Int64(replaces))
            object["icon"] = .string(icon)
            object["summary"] = .string(summary)
            object["body"] = .string(body)
            object["actions"] = .array(actions.map(JSONValue.string))
            object["hints"] = .object(JSONObject(hints.map { ($0.0, Self.json($0.1)) }))
            object["expire"] = .integer(Int64(expire))
            if let error { object["error"] = .string(error) }
            return object.serialized
        }
        var line = "notify \(call.sender ?? "?")"
        if let id { line += " id=\(id)" }
        line += " app=\(JSONValue.quote(app)) summary=\(JSONValue.quote(summary)) body=\(JSONValue.quote(body))"
        line += " replaces=\(replaces)"
        if !icon.isEmpty { line += " icon=\(JSONValue.quote(icon))" }
        line += " actions=[" + actions.map(JSONValue.quote).joined(separator: ",") + "]"
        line +=
            " hints={" + hints.map { "\(TerminalText.escape($0.0))=\(Self.text($0.1))" }.joined(separator: ",") + "}"
        line += " expire=\(expire)"
        if let error { line += " error=\(error)" }
        return line
    }

    private func describe(_ signal: NotificationSignal, sender: String?) -> String {
        switch signal {
        case .actionInvoked(let id, let key):
            if json {
                return JSONObject([
                    ("event", .string("action")), ("sender", .optional(sender)), ("id", .integer(Int64(id))),
                    ("action", .string(key)),
                ]).serialized
            }
            return "action id=\(id) key=\(JSONValue.quote(key))"
        case .closed(let id, let reason):
            let name = Self.reasonName(reason)
            if json {
                return JSONObject([
                    ("event", .string("closed")), ("sender", .optional(sender)), ("id", .integer(Int64(id))),
                    ("reason", .string(name)), ("reason_code", .integer(Int64(reason.rawValue))),
                ]).serialized
            }
            return "closed id=\(id) reason=\(name)"
        case .activationToken(let id, let token):
            if json {
                return JSONObject([
                    ("event", .string("activation_token")), ("sender", .optional(sender)),
                    ("id", .integer(Int64(id))), ("token", .string(token)),
                ]).serialized
            }
            return "activation-token id=\(id) token=\(JSONValue.quote(token))"
        case .replied(let id, let text):
            if json {
                return JSONObject([
                    ("event", .string("replied")), ("sender", .optional(sender)), ("id", .integer(Int64(id))),
                    ("text", .string(text)),
                ]).serialized
            }
            return "replied id=\(id) text=\(JSONValue.quote(text))"
        }
    }

    static func reasonName(_ reason: NotificationCloseReason) -> String {
        switch reason {
        case .expired: "expired"
        case .dismissedByUser: "dismissed"
        case .closedByCall: "closed"
        case .undefined: "undefined"
        case .unknown(let value): "unknown-\(value)"
        }
    }

    static func json(_ value: DBusValue) -> JSONValue {
        switch value {
        case .byte(let v): .integer(Int64(v))
        case .boolean(let v): .bool(v)
        case .int16(let v): .integer(Int64(v))
        case .uint16(let v): .integer(Int64(v))
        case .int32(let v): .integer(Int64(v))
        case .uint32(let v): .integer(Int64(v))
        case .int64(let v): .integer(v)
        case .uint64(let v): .integer(Int64(clamping: v))
        case .double(let v): .number(v)
        case .string(let v): .string(v)
        case .variant(let inner): json(inner)
        default: .string("<\(value.signature)>")
        }
    }

    static func text(_ value: DBusValue) -> String {
        switch value {
        case .string(let v): JSONValue.quote(v)
        case .byte(let v): "byte:\(v)"
        case .boolean(let v): "\(v)"
        case .double(let v): "\(v)"
        case .int32(let v): "\(v)"
        case .uint32(let v): "uint32:\(v)"
        case .int64(let v): "int64:\(v)"
        case .variant(let inner): text(inner)
        default: "<\(value.signature)>"
        }
    }
}
