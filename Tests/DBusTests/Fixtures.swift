import DBus
import Synchronization
import TestSupport

/// A second connection that serves `org.toastkit.Test` at `/test`, for method-call tests.
final class TestService: Sendable {
    static let interface: InterfaceName = "org.toastkit.Test"
    static let path: ObjectPath = "/test"
    let connection: DBusConnection
    /// Calls to `Hold` that were never answered, so a test can answer them later.
    let held = Mutex<[IncomingCall]>([])
    /// The same calls, as they arrive.
    let heldCalls: AsyncStream<IncomingCall>
    private let heldContinuation: AsyncStream<IncomingCall>.Continuation

    init(connection: DBusConnection) {
        self.connection = connection
        (heldCalls, heldContinuation) = AsyncStream.makeStream()
    }

    static func start(on bus: PrivateBus) async throws -> TestService {
        let service = TestService(connection: try await bus.connect())
        var object = DBusObject(interface: interface)
        object.method("Echo") { call in call.reply(call.message.body) }
        object.method("Fail") { call in
            call.fail(DBusError(name: "org.toastkit.Error.Nope", message: "nope: \(call.message.body.count) args"))
        }
        // The handler keeps the service alive until the test closes its connection.
        object.method("Hold") { call in
            service.held.withLock { $0.append(call) }
            service.heldContinuation.yield(call)
        }
        object.asyncMethod("Add") { message in
            let values = try message.arguments("ii")
            return [.int32((values[0].int32Value ?? 0) &+ (values[1].int32Value ?? 0))]
        }
        object.asyncMethod("Throw") { _ in throw CancellationError() }
        service.connection.export(object, at: path)
        return service
    }

    func call(
        from client: DBusConnection,
        _ member: MemberName,
        _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(10)
    ) async throws -> DBusMessage {
        try await client.call(
            destination: BusName(validating: connection.uniqueName), path: Self.path, interface: Self.interface,
            member: member, arguments: arguments, timeout: timeout)
    }
}

/// The match rules the bus holds for `connection`, asked by `asker` (the bus's debug statistics interface).
func matchRules(of connection: DBusConnection, askedBy asker: DBusConnection) async throws -> [String] {
    let reply = try await asker.call(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus.Debug.Stats", member: "GetAllMatchRules")
    let all = try reply.arguments("a{sas}")[0].dictionaryValue ?? []
    return all.first { $0.key.stringValue == connection.uniqueName }?.value.stringsValue ?? []
}
