public import DBus
import Synchronization

/// A stand-in for systemd-logind on a private "system" bus: `org.freedesktop.login1` with the Manager's
/// `ListSessions` and each session's properties (`GetAll`), for tests of finding a user's graphical sessions where
/// the machine has no logind.
public final class FakeLogind: Sendable {
    /// A session it lists.
    public struct Session: Sendable {
        /// The session id ("2").
        public var id: String
        /// The user's uid.
        public var uid: UInt32
        /// The user's name.
        public var user: String
        /// `x11`, `wayland`, `tty`, …
        public var type: String
        /// `user`, `greeter`, …
        public var sessionClass: String
        /// The X11 display (empty for none).
        public var display: String

        /// Creates the value.
        public init(id: String, uid: UInt32, user: String, type: String, sessionClass: String = "user", display: String)
        {
            self.id = id
            self.uid = uid
            self.user = user
            self.type = type
            self.sessionClass = sessionClass
            self.display = display
        }
    }

    /// The connection that owns `org.freedesktop.login1`.
    public let connection: DBusConnection

    private init(connection: DBusConnection) { self.connection = connection }

    /// Starts it on `bus` with `sessions`, and returns once it owns the name.
    public static func start(on bus: PrivateBus, sessions: [Session]) async throws -> FakeLogind {
        let logind = FakeLogind(connection: try await bus.connect())
        var manager = DBusObject(interface: "org.freedesktop.login1.Manager")
        let listed: [DBusValue] = sessions.map { session in
            .structure([
                .string(session.id), .uint32(session.uid), .string(session.user), .string("seat0"),
                .objectPath(path(of: session)),
            ])
        }
        manager.method("ListSessions") { call in call.reply([.array("(susso)", listed)]) }
        logind.connection.export(manager, at: "/org/freedesktop/login1")
        for session in sessions {
            var properties = DBusObject(interface: "org.freedesktop.DBus.Properties")
            let user = DBusValue.structure([
                .uint32(session.uid),
                .objectPath(try ObjectPath(validating: "/org/freedesktop/login1/user/_\(session.uid)")),
            ])
            properties.method("GetAll") { call in
                call.reply([
                    .variantDictionary([
                        "Id": .string(session.id), "Type": .string(session.type),
                        "Class": .string(session.sessionClass),
                        "Display": .string(session.display), "User": user, "Name": .string(session.user),
                    ])
                ])
            }
            logind.connection.export(properties, at: path(of: session))
        }
        let reply = try await logind.connection.bus.requestName("org.freedesktop.login1", flags: .doNotQueue)
        guard reply == .primaryOwner else { throw TestEnvironmentError("fake logind could not own its name: \(reply)") }
        return logind
    }

    private static func path(of session: Session) -> ObjectPath {
        (try? ObjectPath(validating: "/org/freedesktop/login1/session/_3\(session.id)")) ?? "/org/freedesktop/login1"
    }

    /// Leaves the bus.
    public func stop() { connection.close() }
}
