// Where a click's command finds the desktop's display when neither its sender nor the agent had one (an agent a cron
// job started): the systemd user manager's environment, which desktops fill at login, else the notification server's
// own process environment, the server being a program that draws on that display (the same user's only).
import DBus
import Foundation
import Glibc

/// The session's display variables, looked up on the session bus when a click's command needs them.
package enum SessionDisplay {
    /// The display variables (``ActionEnvironment/displayVariables``) of `environment`, or nil when it names no
    /// display (neither `DISPLAY` nor `WAYLAND_DISPLAY`, or both empty).
    package static func variables(of environment: [String: String]) -> [String: String]? {
        func named(_ name: String) -> Bool { !(environment[name]?.isEmpty ?? true) }
        guard named("DISPLAY") || named("WAYLAND_DISPLAY") else { return nil }
        return environment.filter { ActionEnvironment.displayVariables.contains($0.key) && !$0.value.isEmpty }
    }

    /// The `NAME=value` entries of a list (systemd's `Environment` property, or `/proc/PID/environ` split at its NULs)
    /// as a dictionary; an entry without `=` is skipped, and the first of a repeated name wins, as `getenv` finds it.
    package static func environment(ofEntries entries: some Sequence<Substring>) -> [String: String] {
        var environment: [String: String] = [:]
        for entry in entries {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else { continue }
            let name = String(entry[..<equals])
            if environment[name] == nil { environment[name] = String(entry[entry.index(after: equals)...]) }
        }
        return environment
    }

    /// The session's display variables as `connection`'s bus knows them: the systemd user manager's environment
    /// first, then the notification server's process environment; nil when neither names a display. Each question
    /// is bounded by `timeout`, and a bus without systemd answers at once (no service is started for it).
    static func lookUp(on connection: DBusConnection, timeout: Duration = .seconds(2)) async -> [String: String]? {
        if let manager = await managerEnvironment(on: connection, timeout: timeout),
            let display = variables(of: manager)
        {
            return display
        }
        if let server = await serverEnvironment(on: connection, timeout: timeout) { return variables(of: server) }
        return nil
    }

    /// `systemctl --user show-environment`, asked of the manager on the bus.
    private static func managerEnvironment(on connection: DBusConnection, timeout: Duration) async -> [String: String]?
    {
        var call = DBusMethodCall(
            destination: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1",
            interface: "org.freedesktop.DBus.Properties", member: "Get",
            arguments: [.string("org.freedesktop.systemd1.Manager"), .string("Environment")])
        call.autoStart = false
        guard let reply = try? await connection.call(call, timeout: timeout),
            let entries = (try? reply.arguments("v"))?.first?.variantValue?.arrayValue
        else { return nil }
        return environment(ofEntries: entries.compactMap { $0.stringValue.map { Substring($0) } })
    }

    /// The environment the notification server's process started with, when that process is this user's.
    private static func serverEnvironment(on connection: DBusConnection, timeout: Duration) async -> [String: String]? {
        // The bus answers for a well-known name's owner: one question, within `timeout`.
        guard
            let pid = try? await connection.call(
                .bus("GetConnectionUnixProcessID", [.string("org.freedesktop.Notifications")]), timeout: timeout
            ).arguments("u")[0].uint32Value
        else { return nil }
        let descriptor = open("/proc/\(pid)/environ", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        // Another user's process (root's, a greeter's) is never read, even where the kernel would allow it.
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_uid == geteuid() else { return nil }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        // An environment is at most a few hundred KiB (the kernel's argument limit); more is not one.
        while bytes.count < 1 << 20 {
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return environment(ofEntries: text.split(separator: "\0"))
    }
}
