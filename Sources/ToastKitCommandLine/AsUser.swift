import DBus
import FreedesktopNotifications
import Glibc
import ToastKit
import ToastKitAgent

/// `toastkit --user NAME|UID|all <command> …` for root (a system service, a cron job of root, `sudo`): runs the rest
/// of the command line as that user, in that user's desktop session, so the toast reaches the person at the desk.
///
/// - **Privileges are dropped first.** The command runs in a child started with util-linux's `setpriv` (the
///   user's uid, gid and groups) before it connects to anything: never a root connection to a user's bus.
/// - **Nothing of root's is handed over** (``UserChildren``): no terminal (a session of its own, standard input from
///   `/dev/null` or relayed through a pipe, output through pipes root copies), no other descriptor, and root's own
///   programs from fixed files (`/usr/bin/setpriv`, `/usr/bin/getent`, `/proc/self/exe`), never from a PATH.
/// - **The user's session**: the bus at `/run/user/UID/bus` (where systemd and logind put it), and from logind
///   (`org.freedesktop.login1` on the system bus, where present) the user's graphical sessions, whose `DISPLAY` the
///   command gets. The environment is the user's: `HOME`, `USER`, `LOGNAME`, `XDG_RUNTIME_DIR`,
///   `DBUS_SESSION_BUS_ADDRESS`, `DISPLAY`, and of the caller's only `PATH`, `LANG`, `LANGUAGE`, `LC_*`, `TERM` and
///   `TOASTKIT_*`.
/// - **`all`**: every user with a graphical session (logind's, or without logind every user's own bus under
///   `/run/user`), all at once; no user can hold root (``UserDelivery``'s rules).
/// - With no session to reach, it fails at once (exit 69) saying where it looked.
enum AsUser {
    /// A user the command runs as.
    struct Target: Equatable {
        var name: String
        var uid: uid_t
        var gid: gid_t
        var home: String
        /// The `DISPLAY` of the user's graphical session, when logind names one.
        var display: String?
    }

    /// A graphical session logind knows.
    struct Session: Equatable {
        var uid: uid_t
        var display: String?
    }

    /// Runs `arguments` (the command line without `--user`) as `value`; nil when `value` is the caller itself (the
    /// command then runs here as usual).
    static func run(_ value: String, arguments: [[UInt8]], environment: CommandEnvironment) -> Int32? {
        let root = environment.variable("TOASTKIT_USER_RUNTIME_ROOT").flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user"
        let sessions = logindSessions()
        let targets: [Target]
        if value == "all" {
            guard geteuid() == 0 else { return fail(.usage, "--user all: only root can reach other users' desktops") }
            let uids = sessions.map { Set($0.map(\.uid)) } ?? busOwners(under: root)
            targets = uids.sorted().compactMap { user(uid: $0, sessions: sessions) }
            guard !targets.isEmpty else {
                let looked = sessions == nil ? "no bus under \(root)" : "logind lists no graphical session"
                return fail(.unavailable, "--user all: nobody is logged in to a desktop (\(looked))")
            }
        } else {
            guard let target = lookUp(value, sessions: sessions) else {
                return fail(.usage, "--user \(value): no such user")
            }
            if target.uid == geteuid() { return nil }
            guard geteuid() == 0 else {
                return fail(
                    .usage, "--user \(value): only root can act as another user (run the command as \(target.name))")
            }
            targets = [target]
        }
        // The command is read here first: a malformed one fails once, as root, before any user's process starts;
        // and what it is decides what its processes get (standard input) and how long they may take.
        let invocation: Invocation
        do throws(CommandFailure) {
            let (_, rest) = try CommandLineParser.globalOptions(arguments.map { Argument(bytes: $0) })
            invocation = try CommandLineParser.parse(arguments: rest)
        } catch {
            return fail(error.code, error.message)
        }
        return runAs(
            targets, label: "--user \(value)", arguments: arguments, root: root, environment: environment,
            invocation: invocation)
    }

    /// Whether `invocation` reads standard input: `send` with MESSAGE `-`, and `progress`.
    static func readsInput(_ invocation: Invocation) -> Bool {
        switch invocation {
        case .send(let options): options.message == .standardInput
        case .progress: true
        default: false
        }
    }

    /// How long `invocation` may take as another user before root ends it: nil for the commands that wait for a
    /// person or a program (`send --wait` and the sends that wait, `wait`, `run`, `progress`, `listen`, `agent`),
    /// whose own bounds and Ctrl-C end them; a minute for the others, which only hand something over.
    static func bound(of invocation: Invocation) -> Duration? {
        switch invocation {
        case .send(let options) where options.waits: nil
        case .wait, .run, .progress, .listen, .agent: nil
        default: .seconds(60)
        }
    }

    private static func fail(_ code: ExitCode, _ message: String) -> Int32 {
        Output.error(message)
        return code.rawValue
    }

    // MARK: - Users and sessions

    private static func lookUp(_ value: String, sessions: [Session]?) -> Target? {
        guard let entry = passwd(uid_t(value).map { .uid($0) } ?? .name(value)) else { return nil }
        return target(entry, sessions: sessions)
    }

    private static func user(uid: uid_t, sessions: [Session]?) -> Target? {
        passwd(.uid(uid)).map { target($0, sessions: sessions) }
    }

    private static func target(_ entry: Target, sessions: [Session]?) -> Target {
        var target = entry
        target.display = sessions?.first { $0.uid == entry.uid && $0.display != nil }?.display
        return target
    }

    private enum Key {
        case name(String)
        case uid(uid_t)
    }

    /// A user's passwd entry: `/etc/passwd` first, then `getent passwd` for the users NSS knows elsewhere (LDAP,
    /// sssd). Never glibc's `getpwnam` here: in the fully static `toastkit` it loads NSS modules of another glibc, and
    /// crashed (SIGSEGV) for a user `/etc/passwd` does not have.
    private static func passwd(_ key: Key) -> Target? {
        func matches(_ line: Substring) -> Target? {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 7, let uid = uid_t(fields[2]), let gid = gid_t(fields[3]), !fields[0].isEmpty else {
                return nil
            }
            switch key {
            case .name(let name) where fields[0] == name: break
            case .uid(let wanted) where uid == wanted: break
            default: return nil
            }
            return Target(name: String(fields[0]), uid: uid, gid: gid, home: String(fields[5]), display: nil)
        }
        if let file = LocalFiles.text(of: "/etc/passwd", limit: 4 << 20),
            let found = file.split(separator: "\n").lazy.compactMap(matches).first
        {
            return found
        }
        let argument =
            switch key {
            case .name(let name): name
            case .uid(let uid): String(uid)
            }
        guard !argument.hasPrefix("-"),
            let output = Subprocess.output(of: [getent, "passwd", argument], environment: ["PATH": "/usr/bin:/bin"])
        else { return nil }
        return output.split(separator: "\n").lazy.compactMap(matches).first
    }

    /// The graphical sessions (`Type` x11, wayland or mir, `Class` user) logind knows, or nil when there is no
    /// logind to ask (no system bus, or no `org.freedesktop.login1` on it). Bounded: one second in all.
    static func logindSessions() -> [Session]? {
        let list = DBusMethodCall(
            destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
            interface: "org.freedesktop.login1.Manager", member: "ListSessions")
        guard
            let (connection, replies) = try? BlockingDBusConnection.connect(
                to: .system, timeout: .seconds(1), calling: [list]),
            case .success(let reply) = replies[0]
        else { return nil }
        defer { connection.close() }
        let paths = ((try? reply.arguments("a(susso)"))?.first?.arrayValue ?? []).compactMap { entry -> ObjectPath? in
            guard case .structure(let fields) = entry, fields.count == 5, case .objectPath(let path) = fields[4] else {
                return nil
            }
            return path
        }
        let calls = paths.map { path in
            DBusMethodCall(
                destination: "org.freedesktop.login1", path: path, interface: "org.freedesktop.DBus.Properties",
                member: "GetAll", arguments: [.string("org.freedesktop.login1.Session")])
        }
        return zip(paths, connection.call(calls, timeout: .seconds(1))).compactMap { _, answer in
            guard case .success(let message) = answer,
                let entries = (try? message.arguments("a{sv}"))?.first?.dictionaryValue
            else { return nil }
            var properties: [String: DBusValue] = [:]
            for entry in entries {
                if let key = entry.key.stringValue { properties[key] = entry.value.variantValue ?? entry.value }
            }
            guard let type = properties["Type"]?.stringValue, ["x11", "wayland", "mir"].contains(type),
                properties["Class"]?.stringValue == "user",
                case .structure(let user)? = properties["User"], let uid = user.first?.uint32Value
            else { return nil }
            let display = properties["Display"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            return Session(uid: uid, display: display)
        }
    }

    /// The users whose own bus socket is under `root` (`/run/user/UID/bus`, owned by UID).
    private static func busOwners(under root: String) -> Set<uid_t> {
        var owners: Set<uid_t> = []
        for name in PrivateFiles.names(in: root) {
            guard let uid = uid_t(name) else { continue }
            var info = stat()
            if lstat("\(root)/\(name)/bus", &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK, info.st_uid == uid {
                owners.insert(uid)
            }
        }
        return owners
    }

    // MARK: - Running as the user

    /// The environment the command gets as `target`.
    static func environment(for target: Target, root: String, caller: [String: String]) -> [String: String] {
        var variables: [String: String] = [:]
        for (key, value) in caller
        where ["PATH", "LANG", "LANGUAGE", "TERM"].contains(key) || key.hasPrefix("LC_") || key.hasPrefix("TOASTKIT_") {
            variables[key] = value
        }
        variables["PATH"] = variables["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        variables["HOME"] = target.home
        variables["USER"] = target.name
        variables["LOGNAME"] = target.name
        variables["XDG_RUNTIME_DIR"] = "\(root)/\(target.uid)"
        variables["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(root)/\(target.uid)/bus"
        if let display = target.display { variables["DISPLAY"] = display }
        return variables
    }

    /// Runs this program again with `arguments` as each of `targets` (through `setpriv`), all at once, and returns
    /// root's exit code (``UserDelivery``). A user without a session bus is told in one line and counted as not
    /// reached.
    private static func runAs(
        _ targets: [Target], label: String, arguments: [[UInt8]], root: String, environment: CommandEnvironment,
        invocation: Invocation
    ) -> Int32 {
        guard let executable = ownExecutable() else {
            return fail(.software, "--user: cannot find this program's own file (/proc/self/exe)")
        }
        guard access(setpriv, X_OK) == 0 else {
            return fail(.unavailable, "--user needs \(setpriv) to drop privileges (install util-linux)")
        }
        let slots = targets.map { target -> UserChildren.Slot in
            var info = stat()
            let bus = "\(root)/\(target.uid)/bus"
            guard lstat(bus, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK, info.st_uid == target.uid else {
                Output.error(
                    "--user \(target.name): no session bus of \(target.name) at \(bus); is \(target.name) logged in "
                        + "to a desktop?")
                return .failed(name: target.name, status: ExitCode.unavailable.rawValue)
            }
            let argv =
                [setpriv, "--reuid=\(target.uid)", "--regid=\(target.gid)", "--init-groups", "--", executable].map {
                    Array($0.utf8)
                } + arguments
            return .run(
                UserChildren.Child(
                    name: target.name, argv: argv,
                    environment: Self.environment(for: target, root: root, caller: environment.variables),
                    workingDirectory: target.home.hasPrefix("/") && PrivateFiles.isFolder(target.home)
                        ? target.home : "/"))
        }
        return UserChildren.run(
            slots, relaysInput: readsInput(invocation),
            settings: UserDelivery.Settings(bound: bound(of: invocation), label: label))
    }

    /// util-linux's `setpriv`, which drops root's privileges for the user: always this file, never one on a PATH.
    static let setpriv = "/usr/bin/setpriv"

    /// glibc's `getent`, for the users `/etc/passwd` does not list: always this file, never one on a PATH.
    static let getent = "/usr/bin/getent"

    /// The path of this program's file.
    private static func ownExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
