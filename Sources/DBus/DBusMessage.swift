internal import CDBus
import Synchronization

/// A received D-Bus message: its header fields, and its body decoded into Swift values when first read.
///
/// The sender is the unique connection name the bus stamped on the message (`:1.42`), never a well-known name:
/// compare it with the current owner of a well-known name to know who really sent it.
///
/// The body of a received message is decoded only when ``body`` or ``arguments(_:)`` is first read, so a message
/// dropped on its header (a stranger's signal, a reply nobody waits for) costs no decoding, however large it is.
/// Check the header first — sender, member, ``signature`` — then read the body.
public struct DBusMessage: Sendable, Hashable {
    /// The kind of a message.
    public enum Kind: Sendable, Hashable {
        /// A method call.
        case methodCall
        /// A successful reply to a method call.
        case methodReturn
        /// An error reply to a method call.
        case error
        /// A signal.
        case signal
    }

    /// The kind of message.
    public var kind: Kind
    /// The serial number the sender gave the message.
    public var serial: UInt32
    /// For replies: the serial of the call this answers.
    public var replySerial: UInt32?
    /// The unique name of the sending connection, as stamped by the bus.
    public var sender: String?
    /// The destination name, for method calls, replies and unicast signals.
    public var destination: String?
    /// The object path, for method calls and signals.
    public var path: ObjectPath?
    /// The interface, for signals and for method calls that name one.
    public var interface: String?
    /// The method or signal name.
    public var member: String?
    /// The error name, for error replies.
    public var errorName: String?
    /// The signature of the body.
    public var signature: String
    /// The body, decoded on first read for a received message.
    public var body: [DBusValue] {
        get { storage.values }
        set { storage = MessageBody(newValue) }
    }
    /// For method calls: the caller asked for no reply.
    public var noReplyExpected: Bool
    private var storage: MessageBody

    /// Creates a message value (mostly useful in tests).
    public init(
        kind: Kind,
        serial: UInt32 = 0,
        replySerial: UInt32? = nil,
        sender: String? = nil,
        destination: String? = nil,
        path: ObjectPath? = nil,
        interface: String? = nil,
        member: String? = nil,
        errorName: String? = nil,
        body: [DBusValue] = [],
        noReplyExpected: Bool = false
    ) {
        self.kind = kind
        self.serial = serial
        self.replySerial = replySerial
        self.sender = sender
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.signature = body.map(\.signature).joined()
        self.storage = MessageBody(body)
        self.noReplyExpected = noReplyExpected
    }

    /// The body, after checking that its signature is exactly `expected`.
    ///
    /// Use this on every reply before reading arguments by position: a peer may send anything.
    public func arguments(_ expected: Signature) throws(DBusError) -> [DBusValue] {
        guard signature == expected.rawValue else {
            throw DBusError(
                name: DBusError.Name.invalidSignature,
                message: "\(describe) has signature \"\(signature)\", expected \"\(expected)\"")
        }
        return body
    }

    /// A short description used in error messages, e.g. `reply to GetCapabilities`.
    var describe: String {
        switch kind {
        case .methodCall: "call of \(member ?? "?")"
        case .methodReturn: "reply"
        case .error: "error \(errorName ?? "?")"
        case .signal: "signal \(interface ?? "?").\(member ?? "?")"
        }
    }

    /// The error this message carries, for an error reply.
    var asError: DBusError {
        DBusError(name: errorName.map { DBusError.Name($0) } ?? .failed, message: body.first?.stringValue ?? "")
    }
}

extension DBusMessage {
    /// Reads a libdbus message's header and keeps a reference to it for the body, decoded when first read (the
    /// caller's reference is borrowed, not taken).
    init(decoding raw: OpaquePointer) {
        let type = dbus_message_get_type(raw)
        kind =
            switch type {
            case CDBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
            case CDBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
            case CDBUS_MESSAGE_TYPE_ERROR: .error
            case CDBUS_MESSAGE_TYPE_SIGNAL: .signal
            default: .signal  // libdbus never hands over an invalid message type
            }
        serial = dbus_message_get_serial(raw)
        let reply = dbus_message_get_reply_serial(raw)
        replySerial = reply == 0 ? nil : reply
        sender = dbus_message_get_sender(raw).map { String(cString: $0) }
        destination = dbus_message_get_destination(raw).map { String(cString: $0) }
        path = dbus_message_get_path(raw).map { ObjectPath(trusted: String(cString: $0)) }
        interface = dbus_message_get_interface(raw).map { String(cString: $0) }
        member = dbus_message_get_member(raw).map { String(cString: $0) }
        errorName = dbus_message_get_error_name(raw).map { String(cString: $0) }
        signature = dbus_message_get_signature(raw).map { String(cString: $0) } ?? ""
        storage = signature.isEmpty ? MessageBody([]) : MessageBody(retaining: raw)
        noReplyExpected = dbus_message_get_no_reply(raw) != 0
    }

    /// On the I/O thread, before the received message may be held anywhere else (a handler's task, a subscriber's
    /// queue, a caller): its body, if not yet read, reads a copy of the libdbus message from now on
    /// (``MessageBody/detachFromConnection()``). With `onlyIfHeldElsewhere`, only when a copy of this value is
    /// already held somewhere else (the delivery kept it); otherwise it is about to be dropped, and so is the body.
    mutating func detachFromConnection(onlyIfHeldElsewhere: Bool = false) {
        if onlyIfHeldElsewhere, isKnownUniquelyReferenced(&storage) { return }
        storage.detachFromConnection()
    }

    /// The size of the received body on the wire, in bytes (alignment padding aside), read without decoding it; nil
    /// for a body given as values or already read.
    var receivedBodySize: Int? { storage.encodedSize }
}

/// A message body: decoded values, or a libdbus message still to decode (decoded once, by whoever reads it first).
///
/// libdbus counts a received message against its connection's read-ahead (`Limits.maxReadAhead`) until its last
/// release, reads nothing more from the socket while the count is over it, and toggles the socket's watch on the
/// thread of that release. A body still held by a task (a handler's call, a subscriber's signal, a caller's reply)
/// would stop its connection for as long as the task held it — until a call's timeout when the task awaited another
/// message on the same connection (issue 39: an agent that asked the bus about a new caller while it held that
/// caller's 5 MiB call answered no one for 25 s) — and its release would touch the I/O thread's watch table from the
/// task's thread. So a received body that leaves the I/O thread undecoded holds a copy instead
/// (``detachFromConnection()``), which libdbus does not count; the original is released on the I/O thread.
///
/// `@unchecked Sendable` invariant: the libdbus message is touched only under `state`'s lock (decoding iterates it;
/// libdbus messages are immutable once received and their reference count is atomic), and released exactly once.
final class MessageBody: @unchecked Sendable, Hashable {
    /// A libdbus message reference, owned by the body.
    private struct Encoded: @unchecked Sendable {
        let raw: OpaquePointer
    }

    private enum State: Sendable {
        case encoded(Encoded)
        case decoded([DBusValue])
    }

    private let state: Mutex<State>

    init(_ values: [DBusValue]) {
        state = Mutex(.decoded(values))
    }

    init(retaining raw: OpaquePointer) {
        state = Mutex(.encoded(Encoded(raw: dbus_message_ref(raw))))
    }

    deinit {
        state.withLock { state in
            if case .encoded(let message) = state { dbus_message_unref(message.raw) }
        }
    }

    var values: [DBusValue] {
        state.withLock { state in
            switch state {
            case .decoded(let values):
                return values
            case .encoded(let message):
                let values = MessageDecoder.decodeBody(of: message.raw)
                dbus_message_unref(message.raw)
                state = .decoded(values)
                return values
            }
        }
    }

    /// Swaps a received libdbus message still to decode for a copy of it, which libdbus does not count against the
    /// connection that received the original (`dbus_message_copy`): call it on that connection's I/O thread, which
    /// then holds the last reference to the original. Short of memory for the copy, it decodes the body now.
    func detachFromConnection() {
        state.withLock { state in
            guard case .encoded(let message) = state else { return }
            if let copy = dbus_message_copy(message.raw) {
                state = .encoded(Encoded(raw: copy))
            } else {
                state = .decoded(MessageDecoder.decodeBody(of: message.raw))
            }
            dbus_message_unref(message.raw)
        }
    }

    /// The size of the body still to decode, on the wire (``MessageDecoder/bodySize(of:)``); nil once decoded.
    var encodedSize: Int? {
        state.withLock { state in
            guard case .encoded(let message) = state else { return nil }
            return MessageDecoder.bodySize(of: message.raw)
        }
    }

    static func == (lhs: MessageBody, rhs: MessageBody) -> Bool { lhs === rhs || lhs.values == rhs.values }

    func hash(into hasher: inout Hasher) { hasher.combine(values) }
}

/// A libdbus message being built or handed to the I/O thread.
///
/// `@unchecked Sendable` invariant: exactly one owner at a time. The building thread creates it and gives it away
/// (through the connection's inbox) without touching it again; the I/O thread sends it and releases it.
struct OutgoingMessage: @unchecked Sendable {
    let raw: OpaquePointer

    /// Builds a message with a body, checking all input; on failure nothing leaks.
    static func make(
        _ create: () -> OpaquePointer?,
        body: [DBusValue]
    ) throws(DBusError) -> OutgoingMessage {
        guard let raw = create() else { throw .noMemory }
        do {
            var encoder = MessageEncoder()
            try encoder.append(body, to: raw)
            if encoder.payloadBytes > Limits.maxMessageSize / 2 {
                try checkMarshalledSize(raw)
            }
        } catch {
            dbus_message_unref(raw)
            throw error
        }
        return OutgoingMessage(raw: raw)
    }

    private static func checkMarshalledSize(_ raw: OpaquePointer) throws(DBusError) {
        var buffer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &buffer, &length) != 0 else { throw .noMemory }
        dbus_free(buffer)
        if Int(length) > Limits.maxMessageSize {
            throw DBusError(
                name: DBusError.Name.limitsExceeded,
                message: "message is \(length) bytes; the bus accepts at most \(Limits.maxMessageSize)")
        }
    }

    static func methodCall(
        destination: BusName?,
        path: ObjectPath,
        interface: InterfaceName?,
        member: MemberName,
        body: [DBusValue],
        noReply: Bool = false
    ) throws(DBusError) -> OutgoingMessage {
        let message = try make(
            {
                dbus_message_new_method_call(
                    destination?.rawValue, path.rawValue, interface?.rawValue, member.rawValue)
            }, body: body)
        if noReply { dbus_message_set_no_reply(message.raw, 1) }
        return message
    }

    /// Sets whether the bus may start the destination's service for this message.
    func setAutoStart(_ autoStart: Bool) {
        dbus_message_set_auto_start(raw, autoStart ? 1 : 0)
    }

    static func signal(
        path: ObjectPath,
        interface: InterfaceName,
        member: MemberName,
        destination: BusName?,
        body: [DBusValue]
    ) throws(DBusError) -> OutgoingMessage {
        let message = try make(
            { dbus_message_new_signal(path.rawValue, interface.rawValue, member.rawValue) }, body: body)
        if let destination { _ = dbus_message_set_destination(message.raw, destination.rawValue) }
        return message
    }

    /// A method return or error reply to a received call (identified by its serial and sender).
    static func reply(
        toSerial serial: UInt32,
        destination: String?,
        error: DBusError?,
        body: [DBusValue]
    ) throws(DBusError) -> OutgoingMessage {
        let type = error == nil ? CDBUS_MESSAGE_TYPE_METHOD_RETURN : CDBUS_MESSAGE_TYPE_ERROR
        var errorBody = body
        if let error {
            _ = try ErrorName(validating: error.name.rawValue)
            errorBody = [.string(error.message)]
        }
        let message = try make({ dbus_message_new(type) }, body: errorBody)
        dbus_message_set_reply_serial(message.raw, serial)
        dbus_message_set_no_reply(message.raw, 1)
        if let error { _ = dbus_message_set_error_name(message.raw, error.name.rawValue) }
        if let destination, (try? BusName(validating: destination)) != nil {
            _ = dbus_message_set_destination(message.raw, destination)
        }
        return message
    }

    func release() { dbus_message_unref(raw) }
}

extension DBusMessage {
    /// The outcome of a completed pending call from its reply message (taken from the call; released here): the
    /// reply, or the error it carries.
    static func outcome(ofReply message: OpaquePointer?) -> Result<DBusMessage, DBusError> {
        guard let message else {
            return .failure(DBusError(name: DBusError.Name.noReply, message: "no reply"))
        }
        var decoded = DBusMessage(decoding: message)
        // The caller holds the reply, wherever it runs: its body reads a copy, and the reply is released here.
        decoded.detachFromConnection()
        dbus_message_unref(message)
        guard decoded.kind == .error else { return .success(decoded) }
        // The bus answers for a recipient that left without replying; a local timeout has no sender.
        if decoded.errorName == DBusError.Name.noReply.rawValue, decoded.sender == "org.freedesktop.DBus" {
            return .failure(DBusError(name: DBusError.Name.noReply, message: DBusError.recipientDisconnectedMessage))
        }
        return .failure(decoded.asError)
    }
}
