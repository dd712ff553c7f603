import Glibc

/// Which bus a connection goes to.
public enum BusAddress: Sendable, Hashable {
    /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` when that socket exists, else
    /// `/run/user/<uid>/bus` when that socket is the user's own — where systemd and logind put it, and what a cron
    /// job or a service without a session environment can still reach.
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

    /// ``resolve()`` with the environment given, for tests. `TOASTKIT_USER_RUNTIME_ROOT` stands for `/run/user` (the
    /// tests' private folders).
    func resolve(environment: (String) -> String?) throws(DBusError) -> String {
        try resolveExplained(environment: environment).address
    }

    /// The address ``resolve()`` gives, and in plain words where it was found (`DBUS_SESSION_BUS_ADDRESS`,
    /// `$XDG_RUNTIME_DIR/bus`, …), for tools that explain how they reach the desktop.
    public func resolveExplained() throws(DBusError) -> (address: String, source: String) {
        try resolveExplained(environment: environmentVariable)
    }

    /// ``resolveExplained()`` with the environment given.
    public func resolveExplained(
        environment: (String) -> String?
    ) throws(DBusError) -> (address: String, source: String) {
        let resolved: String
        let source: String
        switch self {
        case .session:
            let runtime = environment("XDG_RUNTIME_DIR").flatMap { $0.isEmpty ? nil : $0 }
            let root = environment("TOASTKIT_USER_RUNTIME_ROOT").flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user"
            let userBus = "\(root)/\(geteuid())/bus"
            if let value = environment("DBUS_SESSION_BUS_ADDRESS"), !value.isEmpty {
                resolved = value
                source = "DBUS_SESSION_BUS_ADDRESS"
            } else if let runtime, isSocket("\(runtime)/bus") {
                resolved = "unix:path=\(runtime)/bus"
                source = "$XDG_RUNTIME_DIR/bus (DBUS_SESSION_BUS_ADDRESS is not set)"
            } else if let owner = socketOwner(userBus) {
                guard owner == geteuid() else {
                    throw DBusError(
                        name: DBusError.Name.badAddress,
                        message:
                            "no session bus: refusing \(userBus), which belongs to uid \(owner), not \(geteuid())")
                }
                resolved = "unix:path=\(userBus)"
                source = "the user's bus at \(userBus) (no DBUS_SESSION_BUS_ADDRESS, no $XDG_RUNTIME_DIR/bus)"
            } else {
                let looked = runtime.map { "\($0)/bus" } ?? "$XDG_RUNTIME_DIR/bus (unset)"
                throw DBusError(
                    name: DBusError.Name.badAddress,
                    message:
                        "no session bus: DBUS_SESSION_BUS_ADDRESS is not set, and there is no bus at \(looked) or "
                        + "\(userBus); is this user logged in to a desktop? From another user's job, run as that user (as root: "
                        + "toastkit --user NAME)")
            }
        case .system:
            if let value = environment("DBUS_SYSTEM_BUS_ADDRESS"), !value.isEmpty {
                resolved = value
                source = "DBUS_SYSTEM_BUS_ADDRESS"
            } else {
                resolved = "unix:path=/run/dbus/system_bus_socket"
                source = "the system bus's standard socket"
            }
        case .address(let value):
            guard !value.isEmpty else { throw DBusError(name: DBusError.Name.badAddress, message: "empty bus address") }
            resolved = value
            source = "the address given"
        }
        try checkNoNUL(resolved, what: "bus address")
        return (resolved, source)
    }
}

func environmentVariable(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

private func isSocket(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
}

/// The owner of the socket at `path` (not following a symbolic link), or nil when there is none.
private func socketOwner(_ path: String) -> uid_t? {
    var info = stat()
    guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { return nil }
    return info.st_uid
}
