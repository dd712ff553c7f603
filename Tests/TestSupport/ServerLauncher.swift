import DBus
import Foundation
import Glibc
import Synchronization

/// How each server and its helpers start on a desktop's private bus (ported from the shared harness's
/// `with-notify-env.sh` and `servers/*.sh`). Every process gets a server-only environment: its own `XDG_*`
/// folders (and `HOME` where it writes there) inside the run folder, no dconf (`GSETTINGS_BACKEND=memory`), no
/// accessibility bus, and only the display it is meant to use.
struct ServerLauncher: Sendable {
    let kind: NotificationServerKind
    let directory: String
    let busAddress: String
    /// The modern server (issue 41) whose processes run in the Debian 13 chroot, or nil for the host's Debian 12 one.
    var modern: ModernServer? = nil

    static var harness: String { "\(NotificationEnvironment.repositoryRoot)/scripts/harness" }
    static var resolution: String { "\(NotificationEnvironment.screen.width)x\(NotificationEnvironment.screen.height)" }

    // MARK: - Processes

    /// The environment every process starts from: the test's, without any display, session or starter bus.
    var baseEnvironment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for name in [
            "DISPLAY", "WAYLAND_DISPLAY", "SWAYSOCK", "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE",
            "DBUS_SYSTEM_BUS_ADDRESS", "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP", "XDG_SESSION_DESKTOP",
            "DESKTOP_SESSION", "KDE_FULL_SESSION", "GNOME_SETUP_DISPLAY", "NOTIFY_HARNESS_DIR",
        ] {
            env.removeValue(forKey: name)
        }
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        env["NO_AT_BRIDGE"] = "1"
        env["GSETTINGS_BACKEND"] = "memory"
        return env
    }

    /// Starts `executable` with its output appended to `<run folder>/<name>.log`. With `noCoreDumps` it runs
    /// through `sh -c 'ulimit -c 0; exec …'` (same pid): GNOME Shell 43 sometimes segfaults when stopped, and a
    /// core file must never land in the repository.
    func spawn(
        _ name: String, _ executable: String, _ arguments: [String], environment: [String: String],
        noCoreDumps: Bool = false
    ) throws -> StartedProcess {
        let log = "\(directory)/\(name).log"
        let fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestEnvironmentError("cannot open \(log): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let child: ChildProcess
        if modern != nil {
            let command = try ModernChroot.command(
                executable, arguments, environment: environment,
                scratch: "\(directory)/chroot/\(name)-\(UUID().uuidString)")
            child = try ChildProcess.spawn(
                command.executable, command.arguments, environment: command.environment,
                fileDescriptors: [1: fd, 2: fd])
            return StartedProcess(name: name, pid: child.pid, log: log)
        }
        let path = executable.hasPrefix("/") ? executable : try Tools.require(executable, package: kind.package)
        if noCoreDumps {
            child = try ChildProcess.spawn(
                "/bin/sh", ["-c", "ulimit -c 0; exec \"$0\" \"$@\"", path] + arguments, environment: environment,
                fileDescriptors: [1: fd, 2: fd])
        } else {
            child = try ChildProcess.spawn(path, arguments, environment: environment, fileDescriptors: [1: fd, 2: fd])
        }
        return StartedProcess(name: name, pid: child.pid, log: log)
    }

    /// A private folder (mode 700) inside the run folder.
    func folder(_ relative: String) throws -> String {
        let path = "\(directory)/\(relative)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o700)
        return path
    }

    // MARK: - The display

    /// Xvfb on a display it picks itself (`-displayfd`), returned once it accepts clients.
    func startXvfb() async throws -> (process: StartedProcess, display: String) {
        let xvfb = try Tools.require("Xvfb", package: "xvfb")
        let pipe = try PipePair()
        let log = "\(directory)/xvfb.log"
        let fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { close(fd) }
        let child = try ChildProcess.spawn(
            xvfb,
            ["-displayfd", "3", "-screen", "0", "\(Self.resolution)x24", "-nolisten", "tcp", "-noreset"],
            environment: baseEnvironment, fileDescriptors: [3: pipe.writeEnd, 1: fd, 2: fd])
        pipe.closeWriteEnd()
        // It may take a second under load: waited for on a thread of its own, never on the pool's.
        let number = try await onOwnThread { pipe.readLine().trimmingCharacters(in: .whitespaces) }
        let process = StartedProcess(name: "Xvfb", pid: child.pid, log: log)
        guard !number.isEmpty else {
            Tools.stopTree(child.pid, signal: SIGKILL)
            throw TestEnvironmentError("Xvfb did not report a display\(Deadline.tail(of: log))")
        }
        return (process, ":\(number)")
    }

    // MARK: - Helpers (started once per desktop)

    /// Starts what the server needs besides the display: GNOME Shell's and Plasma's stand-in system bus, Plasma's
    /// kactivitymanagerd, the headless sway of mako and swaync.
    func startHelpers(display: String?, systemBus: inout PrivateBus?, splash: inout SplashStandIn?) async throws -> (
        [StartedProcess], NotificationEnvironment.Support
    ) {
        var support = NotificationEnvironment.Support()
        switch kind {
        case .gnomeShell:
            // GNOME Shell 43 exits at start-up without any system bus (loginManager.js, because /run/systemd/seats
            // exists); an empty private one is enough, and keeps it off the machine's real system bus.
            systemBus = try await PrivateBus.start()
            support.systemBus = systemBus
            try installGnomeExtension()
            return ([], support)
        case .plasma:
            systemBus = try await PrivateBus.start()
            support.systemBus = systemBus
            splash = try await SplashStandIn.start(busAddress: busAddress)
            support.splash = splash
            try installPlasmaWallpaper()
            // plasmashell aborts without it ("The activity manager daemon (kactivitymanagerd) is not running").
            let kamd = try await startAwaitingName(
                "org.kde.ActivityManager",
                try spawn(
                    "kactivitymanagerd",
                    (modern == nil
                        ? NotificationServerKind.firstExecutable(NotificationServerKind.kactivitymanagerdPaths)
                        : ModernChroot.firstExisting(NotificationServerKind.kactivitymanagerdPaths))
                        ?? "kactivitymanagerd", [], environment: plasmaEnvironment(display: display, support: support)))
            return ([kamd], support)
        case .mako, .swaync:
            let (sway, wayland, socket) = try await startSway()
            support.waylandDisplay = wayland
            support.swaySocket = socket
            return ([sway], support)
        default:
            return ([], support)
        }
    }

    /// The test desktop's wallpaper (`scripts/harness/plasma-wallpaper`) in Plasma's data folder, where it stands in
    /// for Plasma's own `org.kde.image`: the same picture, read as the item is made, and nothing to wait for.
    /// plasmashell reports its "desktop" stage once its desktop's wallpaper says it has loaded, and in a good start
    /// that load is the last thing the stage waits for. In full test runs the stage sometimes never came: the shell
    /// got as far as ever (panel, tray, notifications, kscreen's second try) and stopped. Plasma's wallpaper with a
    /// load that never ends gives that log line for line. Plasma 5.27 loads the picture on a thread pool (its
    /// `image://package` provider runs KPackage there while the GUI thread runs KPackage too), the likely place.
    /// Plasma 6's `org.kde.image` holds the stage the same way (`loading` until its picture is in), and a full run's
    /// Plasma 6.3 stopped there the same way (2026-12-08, fresh run 36): it gets a stand-in of its own, a
    /// `WallpaperItem` (`scripts/harness/plasma6-wallpaper`; Plasma 6 cannot load the QtQuick 2 one).
    private func installPlasmaWallpaper() throws {
        let wallpaper = "plasma/home/.local/share/plasma/wallpapers/org.kde.image"
        let source = modern == nil ? "plasma-wallpaper" : "plasma6-wallpaper"
        _ = try folder("\(wallpaper)/contents/ui")
        for file in ["metadata.json", "contents/ui/main.qml"] {
            try FileManager.default.copyItem(
                atPath: "\(Self.harness)/\(source)/\(file)", toPath: "\(directory)/\(wallpaper)/\(file)")
        }
    }

    /// The project's GNOME Shell extension (`scripts/harness/gnome-shell-extension`) in the shell's data folder,
    /// and a session mode that enables it (GNOME Shell 43's extensions are enabled by gsettings, which are in
    /// memory here, or by the session mode; a D-Bus `EnableExtension` would race with the shell's start-up).
    private func installGnomeExtension() throws {
        let uuid = GnomeShell.extensionUUID
        let target = try folder("gnome/data/gnome-shell/extensions/\(uuid)")
        for file in ["metadata.json", "extension.js"] {
            // GNOME 45+ loads only ES-module extensions.
            let source = modern == nil ? "gnome-shell-extension" : "gnome-shell-extension-esm"
            try FileManager.default.copyItem(atPath: "\(Self.harness)/\(source)/\(file)", toPath: "\(target)/\(file)")
        }
        let modes = try folder("gnome/system-data/gnome-shell/modes")
        try #"{ "parentMode": "user", "enabledExtensions": ["\#(uuid)"] }"#
            .write(toFile: "\(modes)/\(GnomeShell.mode).json", atomically: true, encoding: .utf8)
    }

    /// sway 1.7 on the wlroots headless backend (pixman, no input devices, no Xwayland). It refuses to run as root
    /// ("Unable to drop root"), so as root it runs as `nobody` through `setpriv`, with the run folder made
    /// traversable (711) for its sockets; the session bus still only admits the test's own uid.
    private func startSway() async throws -> (StartedProcess, wayland: String, socket: String) {
        let runtime = "\(directory)/sway"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let config = "\(directory)/sway.conf"
        let template = try String(contentsOfFile: "\(Self.harness)/sway.conf", encoding: .utf8)
        try template.replacingOccurrences(of: "@RESOLUTION@", with: Self.resolution)
            .write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o644)
        var executable = modern == nil ? try Tools.require("sway", package: "sway") : "/usr/bin/sway"
        var arguments = ["-c", config]
        if getuid() == 0 {
            let nobody: UInt32 = 65534
            chmod(directory, 0o711)
            chown(runtime, nobody, nobody)
            arguments = ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", executable] + arguments
            executable = modern == nil ? try Tools.require("setpriv", package: "util-linux") : "/usr/bin/setpriv"
        }
        chmod(runtime, 0o700)
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "XDG_RUNTIME_DIR": runtime,
            "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman",
        ]
        let sway = try spawn("sway", executable, arguments, environment: environment)
        // sway announces nothing on the bus: its two sockets appearing is the sign it is ready.
        let sockets: @Sendable () -> (String, String)? = {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: runtime)) ?? []
            guard let wayland = names.first(where: { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }),
                let ipc = names.first(where: { $0.hasPrefix("sway-ipc.") && $0.hasSuffix(".sock") })
            else { return nil }
            return ("\(runtime)/\(wayland)", "\(runtime)/\(ipc)")
        }
        do {
            try await Deadline.poll("sway's sockets", within: kind.startLimit, processes: [sway]) { sockets() != nil }
        } catch {
            Tools.stopTree(sway.pid)
            throw error
        }
        let (wayland, socket) = sockets()!
        return (sway, wayland, socket)
    }

    // MARK: - The server (restartable)

    /// Starts the server group and returns once it owns `org.freedesktop.Notifications` (GNOME Shell: once the
    /// shell is ready to be driven). Each process is handed to `record` as soon as it runs.
    func startServer(
        display: String?, support: NotificationEnvironment.Support, excludingOwners excluded: Set<String>,
        record: @escaping @Sendable (StartedProcess) -> Void
    ) async throws {
        var env = baseEnvironment
        env["XDG_RUNTIME_DIR"] = try folder("\(kind.rawValue)/runtime")
        env["XDG_CONFIG_HOME"] = try folder("\(kind.rawValue)/config")
        env["XDG_CACHE_HOME"] = try folder("\(kind.rawValue)/cache")
        env["XDG_DATA_HOME"] = try folder("\(kind.rawValue)/data")
        env["NOTIFY_HARNESS_DIR"] = directory
        if let display { env["DISPLAY"] = display }
        let server: StartedProcess
        switch kind {
        case .dunst:
            let template = try String(contentsOfFile: "\(Self.harness)/dunstrc", encoding: .utf8)
            let config = template.replacingOccurrences(of: "@HARNESS_DIR@", with: Self.harness)
            try (modern == nil ? config : ModernServer.dunstConfig(config))
                .write(toFile: "\(directory)/dunstrc", atomically: true, encoding: .utf8)
            server = try spawn("dunst", "dunst", ["-config", "\(directory)/dunstrc"], environment: env)
        case .notificationDaemon, .mateNotificationDaemon, .xfce4Notifyd:
            let paths =
                switch kind {
                case .notificationDaemon: NotificationServerKind.notificationDaemonPaths
                case .xfce4Notifyd: NotificationServerKind.xfce4NotifydPaths
                default: NotificationServerKind.mateNotificationDaemonPaths
                }
            env["GDK_BACKEND"] = "x11"
            server = try spawn(
                kind.rawValue,
                (modern == nil ? NotificationServerKind.firstExecutable(paths) : ModernChroot.firstExisting(paths))
                    ?? kind.rawValue,
                kind == .xfce4Notifyd ? [] : ["--replace"], environment: env)
        case .lxqtNotificationd:
            env["HOME"] = try folder("lxqt-notificationd/home")
            env["XDG_CONFIG_HOME"] = try folder("lxqt-notificationd/home/.config")
            // As in an LXQt session: the LXQt platform theme, with the icon theme from lxqt.conf.
            let settings = try folder("lxqt-notificationd/home/.config/lxqt")
            if !FileManager.default.fileExists(atPath: "\(settings)/lxqt.conf") {
                try FileManager.default.copyItem(atPath: "\(Self.harness)/lxqt.conf", toPath: "\(settings)/lxqt.conf")
            }
            env["QT_QPA_PLATFORM"] = "xcb"
            env["QT_QPA_PLATFORMTHEME"] = "lxqt"
            server = try spawn("lxqt-notificationd", "lxqt-notificationd", [], environment: env)
        case .mako:
            env["WAYLAND_DISPLAY"] = support.waylandDisplay
            // Built-in defaults (default-timeout 0, so only toasts sent with an expire_timeout expire), plus where
            // the icons are (scripts/harness/mako.conf).
            server = try spawn("mako", "mako", ["--config", "\(Self.harness)/mako.conf"], environment: env)
        case .swaync:
            env["WAYLAND_DISPLAY"] = support.waylandDisplay
            env["GDK_BACKEND"] = "wayland"
            server = try spawn("swaync", "swaync", [], environment: env)
        case .plasma:
            // plasmashell owns org.freedesktop.Notifications before it has drawn anything: a popup then lands in the
            // wrong place and moves. It reports "desktop" to KSplash once its desktop is ready; that is awaited too.
            guard let splash = support.splash else { throw TestEnvironmentError("Plasma needs its KSplash stand-in") }
            let stages = splash.stages()
            var shell = try spawn(
                "plasmashell", "plasmashell", ["--no-respawn"],
                environment: plasmaEnvironment(display: display, support: support), noCoreDumps: true)
            shell.ownsNotifications = true
            record(shell)
            _ = try await startAwaitingName("org.freedesktop.Notifications", shell, excluding: excluded)
            do {
                _ = try await Deadline.run(
                    within: kind.startLimit, "plasmashell's \"desktop\" stage (KSplash.setStage)"
                ) {
                    for await stage in stages where stage == "desktop" { return true }
                    return nil
                }
            } catch {
                // Its shell's own lines (kde.plasmashell, on in plasmaEnvironment) say how far its start got; the
                // many lines about missing services (UDisks2, KScreen, KWin) come with every start and say nothing.
                let log = (try? String(contentsOfFile: shell.log, encoding: .utf8)) ?? ""
                let own = log.split(separator: "\n").filter { $0.hasPrefix("kde.plasmashell") }.suffix(30)
                throw TestEnvironmentError(
                    "\(error); plasmashell's own lines in \(shell.log):\n    \(own.joined(separator: "\n    "))"
                        + Deadline.tail(of: shell.log, lines: 10))
            }
            return
        case .gnomeShell:
            try await startGnomeShell(support: support, excludingOwners: excluded, record: record)
            return
        }
        var owner = server
        owner.ownsNotifications = true
        record(owner)
        _ = try await startAwaitingName("org.freedesktop.Notifications", owner, excluding: excluded)
    }

    /// Plasma's environment: HOME and the XDG folders in the run folder, a KDE session on X.
    private func plasmaEnvironment(display: String?, support: NotificationEnvironment.Support) -> [String: String] {
        var env = baseEnvironment
        let home = "\(directory)/plasma/home"
        for folder in ["", "/.config", "/.cache", "/.local/share"] {
            try? FileManager.default.createDirectory(atPath: home + folder, withIntermediateDirectories: true)
        }
        _ = try? folder("plasma/runtime")
        env["HOME"] = home
        env["XDG_RUNTIME_DIR"] = "\(directory)/plasma/runtime"
        env["XDG_CONFIG_HOME"] = "\(home)/.config"
        env["XDG_CACHE_HOME"] = "\(home)/.cache"
        env["XDG_DATA_HOME"] = "\(home)/.local/share"
        env["DBUS_SYSTEM_BUS_ADDRESS"] = support.systemBus?.address
        env["KDE_FULL_SESSION"] = "true"
        env["KDE_SESSION_VERSION"] = modern == nil ? "5" : "6"
        env["XDG_CURRENT_DESKTOP"] = "KDE"
        env["XDG_SESSION_TYPE"] = "x11"
        env["QT_QPA_PLATFORM"] = "xcb"
        env["DISPLAY"] = display
        // The shell's start in its log (containments, screens, "Plasma Shell startup completed"), for a start that
        // stalls.
        env["QT_LOGGING_RULES"] = "kde.plasmashell.debug=true;kde.plasmashell.screenpool.debug=true"
        return env
    }

    /// GNOME Shell 43: `gnome-shell --headless --wayland --no-x11 --virtual-monitor WxH --mode=toastkit-test`
    /// (mutter's native backend, software rendering; the session mode is the user session plus the project's
    /// extension, which unlocks `org.gnome.Shell.Eval` and owns `org.toastkit.TestShell` once the shell is ready),
    /// then `/usr/share/gnome-shell/org.gnome.Shell.Notifications`: in GNOME 43 that gjs process owns
    /// `org.freedesktop.Notifications` and forwards to the shell (normally D-Bus-activated; the private bus
    /// activates nothing).
    private func startGnomeShell(
        support: NotificationEnvironment.Support, excludingOwners excluded: Set<String>,
        record: @escaping @Sendable (StartedProcess) -> Void
    ) async throws {
        var env = baseEnvironment
        env["XDG_RUNTIME_DIR"] = try folder("gnome/runtime")
        env["XDG_CONFIG_HOME"] = try folder("gnome/config")
        env["XDG_CACHE_HOME"] = try folder("gnome/cache")
        env["XDG_DATA_HOME"] = "\(directory)/gnome/data"
        // Session modes are read from the system data folders only: the test mode's folder goes first.
        env["XDG_DATA_DIRS"] =
            "\(directory)/gnome/system-data:"
            + (ProcessInfo.processInfo.environment["XDG_DATA_DIRS"] ?? "/usr/local/share:/usr/share")
        env["DBUS_SYSTEM_BUS_ADDRESS"] = support.systemBus?.address
        env["XDG_SESSION_TYPE"] = "wayland"

        let watcher = try await DBusConnection.connect(to: .address(busAddress))
        defer { watcher.close() }
        let readyChanges = try await watcher.bus.nameOwnerChanges(of: GnomeShell.readyName)
        defer { readyChanges.cancel() }
        let shell = try spawn(
            "gnome-shell", "gnome-shell",
            ["--headless", "--wayland", "--no-x11", "--virtual-monitor", Self.resolution, "--mode=\(GnomeShell.mode)"],
            environment: env, noCoreDumps: true)
        record(shell)
        _ = try await Deadline.owner(
            of: GnomeShell.readyName, on: watcher, changes: readyChanges, within: kind.startLimit, processes: [shell])

        // The proxy owns org.freedesktop.Notifications first and exports its object only when it gets the bus for
        // org.gnome.Shell.Notifications: once that name is owned, Notify reaches it.
        var proxy = try spawn(
            // GNOME 45+'s is an ES module.
            "gnome-shell-notifications", "gjs",
            (modern == nil ? [] : ["-m"]) + [NotificationServerKind.gnomeNotificationsProxy], environment: env)
        proxy.ownsNotifications = true
        record(proxy)
        _ = try await startAwaitingName(
            "org.gnome.Shell.Notifications", proxy, excluding: excluded, alsoWatching: [shell])
    }

    /// Waits until `name` has an owner (other than `excluded`) after `process` was started; fails when it (or one of
    /// `alsoWatching`) exits first. The name's changes are subscribed before the check, so no change is missed.
    @discardableResult
    private func startAwaitingName(
        _ name: BusName, _ process: StartedProcess, excluding excluded: Set<String> = [],
        alsoWatching others: [StartedProcess] = []
    ) async throws -> StartedProcess {
        let watcher = try await DBusConnection.connect(to: .address(busAddress))
        defer { watcher.close() }
        let changes = try await watcher.bus.nameOwnerChanges(of: name)
        defer { changes.cancel() }
        do {
            _ = try await Deadline.owner(
                of: name, on: watcher, changes: changes, excluding: excluded, within: kind.startLimit,
                processes: others + [process])
        } catch {
            Tools.stopTree(process.pid)
            throw error
        }
        return process
    }
}

/// Stands in for KSplash (`org.kde.KSplash`, `/KSplash`): plasmashell calls `setStage("desktop")` on it once its
/// desktop is ready, which is the moment Plasma can be driven.
final class SplashStandIn: Sendable {
    private let connection: DBusConnection
    private let listener = Mutex<AsyncStream<String>.Continuation?>(nil)

    private init(connection: DBusConnection) { self.connection = connection }

    static func start(busAddress: String) async throws -> SplashStandIn {
        let splash = SplashStandIn(connection: try await DBusConnection.connect(to: .address(busAddress)))
        var object = DBusObject(interface: "org.kde.KSplash")
        object.method("setStage") { call in
            let stage = (try? call.message.arguments("s"))?.first?.stringValue ?? ""
            call.reply()
            splash.listener.withLock { _ = $0?.yield(stage) }
        }
        splash.connection.export(object, at: "/KSplash")
        guard try await splash.connection.bus.requestName("org.kde.KSplash", flags: .doNotQueue) == .primaryOwner else {
            splash.stop()
            throw TestEnvironmentError("cannot own org.kde.KSplash on the test bus")
        }
        return splash
    }

    /// The stages reported from now on (one listener at a time: the latest call wins).
    func stages() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .unbounded)
        listener.withLock {
            $0?.finish()
            $0 = continuation
        }
        return stream
    }

    func stop() {
        listener.withLock { $0?.finish() }
        connection.close()
    }
}

/// Names of the project's GNOME Shell test extension.
enum GnomeShell {
    /// The extension's uuid (`scripts/harness/gnome-shell-extension/metadata.json`).
    static let extensionUUID = "toastkit-test-shell@toastkit"
    /// The session mode that enables the extension (`<run folder>/gnome/system-data/gnome-shell/modes`).
    static let mode = "toastkit-test"
    /// The name the extension owns once the shell is ready to be driven.
    static let readyName: BusName = "org.toastkit.TestShell"
}
