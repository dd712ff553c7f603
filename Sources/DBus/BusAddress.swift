import Glibc

/// Which bus a connection goes to.
public enum BusAddress: Sendable, Hashable {
    /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` when that socket exists.
    case session
    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, else `unix:path=/run/dbus/system_bus_socket`.
    case system
    /// An explicit D-Bus address such as `unix:path=/tmp/bus` (a bus daemon; the connection says `Hello`).
    case address(String)

    /// The address string to connect to, or an error saying why there is none.
    ///
    /// libdbus would fall back to X11 autolaunch for a missing session address, which starts a stray daemon;
    /// this resolves the address itself so a missing bus is a clear error instead.
    public func resolve() throws(DBusError) -> String {
        try resolve(environment: environmentVariable)
    }

    /// ``resolve()`` with the environment given, for tests.
    func resolve(environment: (String) -> String?) throws(DBusError) -> String {
        let resolved: String
        switch self {
        case .session:
            if let value = environment("DBUS_SESSION_BUS_ADDRESS"), !value.isEmpty {
                resolved = value
            } else if let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty,
                isSocket("\(runtime)/bus")
            {
                resolved = "unix:path=\(runtime)/bus"
            } else {
                throw DBusError(
                    name: DBusError.Name.badAddress,
                    message:
                        "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist")
            }
        case .system:
            resolved =
                environment("DBUS_SYSTEM_BUS_ADDRESS").flatMap { $0.isEmpty ? nil : $0 }
                ?? "unix:path=/run/dbus/system_bus_socket"
        case .address(let value):
            guard !value.isEmpty else { throw DBusError(name: DBusError.Name.badAddress, message: "empty bus address") }
            resolved = value
        }
        try checkNoNUL(resolved, what: "bus address")
        return resolved
    }
}

func environmentVariable(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

private func isSocket(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
}
