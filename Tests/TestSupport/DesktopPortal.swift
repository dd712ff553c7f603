import DBus
import Foundation
import Glibc

/// The real desktop portal on a test desktop's private bus, the way Flatpak and Snap apps reach notifications:
/// `xdg-permission-store`, the `xdg-desktop-portal-gtk` backend and `xdg-desktop-portal` itself, in front of the
/// desktop's notification server (ported from the shared harness's `portal/start-portal.sh`, NOTES §11).
///
/// ```swift
/// let desktop = try await NotificationEnvironment.start(server: .dunst)
/// defer { desktop.stop() }
/// let portal = try await desktop.startPortal()
/// // org.freedesktop.portal.Desktop now answers on desktop.bus; portal.setPermission(…) plays the settings app.
/// ```
///
/// Debian 12 has the notification backend only in xdg-desktop-portal-gtk (xdg-desktop-portal-gnome 43 does not
/// implement it), for GNOME Shell as well as for every other server; it is a GTK program and needs an X display, so
/// next to GNOME Shell (which has none here) an Xvfb of its own is started. Nothing is D-Bus-activated on the test bus:
/// the three are started in order, each once the one before owns its name. The portal reads only a private portals
/// folder holding `gtk.portal`, with `XDG_CURRENT_DESKTOP=GNOME` (1.16 has no portals.conf). Everything it starts is
/// stopped with the desktop (``NotificationEnvironment/stop()``).
public struct DesktopPortal: Sendable {
    /// The folder with the three processes' logs (`xdg-permission-store.log`, `xdg-desktop-portal-gtk.log`,
    /// `xdg-desktop-portal.log`).
    public let logDirectory: String
    /// The pids of the permission store, the backend and the portal (and the backend's own Xvfb, if any).
    public let pids: [Int32]
    /// The unique bus name of the process that owns `org.freedesktop.portal.Desktop`.
    public let owner: String
    /// The address of the bus it is on.
    public let busAddress: String

    /// The executables and the Debian package of each.
    static let requirements: [(path: String, package: String)] = [
        ("/usr/libexec/xdg-desktop-portal", "xdg-desktop-portal"),
        ("/usr/libexec/xdg-permission-store", "xdg-desktop-portal"),
        ("/usr/libexec/xdg-desktop-portal-gtk", "xdg-desktop-portal-gtk"),
        ("/usr/share/xdg-desktop-portal/portals/gtk.portal", "xdg-desktop-portal-gtk"),
    ]

    /// Fails, naming the Debian packages to install, when part of the portal is missing.
    public static func checkInstalled() throws {
        let missing = requirements.filter { access($0.path, F_OK) != 0 }.map(\.package)
        guard missing.isEmpty else {
            throw TestEnvironmentError(
                "the desktop portal needs packages that are not installed: run `apt-get install "
                    + "--no-install-recommends \(Array(Set(missing)).sorted().joined(separator: " "))` (or "
                    + "scripts/install-deps.sh test)")
        }
    }

    /// Sets the portal's permission for `appID` to show notifications (`notifications`/`notification` in the
    /// permission store, as GNOME Settings does): `yes` or `no`.
    public func setNotificationPermission(appID: String, allowed: Bool) async throws {
        let connection = try await DBusConnection.connect(to: .address(busAddress))
        defer { connection.close() }
        _ = try await connection.call(
            destination: "org.freedesktop.impl.portal.PermissionStore",
            path: "/org/freedesktop/impl/portal/PermissionStore",
            interface: "org.freedesktop.impl.portal.PermissionStore", member: "SetPermission",
            arguments: [
                .string("notifications"), .boolean(true), .string("notification"), .string(appID),
                .strings([allowed ? "yes" : "no"]),
            ], timeout: .seconds(10))
    }

    /// The end of the portal's and the backend's logs, for a failure message.
    public var logTail: String {
        ["xdg-desktop-portal.log", "xdg-desktop-portal-gtk.log"].map {
            Deadline.tail(of: "\(logDirectory)/\($0)", lines: 12)
        }
        .joined()
    }
}

extension NotificationEnvironment {
    /// Starts the real notification portal in front of this desktop's server and returns once
    /// `org.freedesktop.portal.Desktop` is owned and its notification interface answers.
    ///
    /// - Throws: ``TestEnvironmentError`` naming the packages to install when the portal is missing, or the part that
    ///   did not start (with the end of its log).
    public func startPortal() async throws -> DesktopPortal {
        try DesktopPortal.checkInstalled()
        let launcher = ServerLauncher(kind: server, directory: directory, busAddress: bus.address)
        let root = try launcher.folder("portal")
        for folder in ["runtime", "config", "cache", "data", "portals"] { _ = try launcher.folder("portal/\(folder)") }
        try? FileManager.default.removeItem(atPath: "\(root)/portals/gtk.portal")
        try FileManager.default.copyItem(
            atPath: "/usr/share/xdg-desktop-portal/portals/gtk.portal", toPath: "\(root)/portals/gtk.portal")

        var started: [StartedProcess] = []
        let record: (StartedProcess) -> Void = { process in
            started.append(process)
            self.recordHelper(process)
        }
        var display = self.display
        if display == nil {
            // GNOME Shell runs headless on Wayland here; the GTK backend wants X.
            let xvfb = try await launcher.startXvfb()
            record(xvfb.process)
            display = xvfb.display
        }
        // Private folders, no dconf, no accessibility bus, no real system bus: nothing of the machine's user leaks in.
        var environment = launcher.baseEnvironment
        environment["XDG_RUNTIME_DIR"] = "\(root)/runtime"
        environment["XDG_CONFIG_HOME"] = "\(root)/config"
        environment["XDG_CACHE_HOME"] = "\(root)/cache"
        environment["XDG_DATA_HOME"] = "\(root)/data"
        environment["GTK_USE_PORTAL"] = "0"
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(root)/no-system-bus"
        environment["XDG_CURRENT_DESKTOP"] = "GNOME"
        // G_MESSAGES_DEBUG leaks into the icon validator, whose output the portal parses: every bytes icon would be
        // dropped (NOTES P29).
        environment.removeValue(forKey: "G_MESSAGES_DEBUG")

        let watcher = try await bus.connect()
        defer { watcher.close() }
        func startAwaiting(_ name: BusName, _ process: () throws -> StartedProcess) async throws -> String {
            let changes = try await watcher.bus.nameOwnerChanges(of: name)
            defer { changes.cancel() }
            let started = try process()
            record(started)
            return try await Deadline.owner(
                of: name, on: watcher, changes: changes, within: .seconds(20), processes: [started])
        }
        _ = try await startAwaiting("org.freedesktop.impl.portal.PermissionStore") {
            try launcher.spawn(
                "xdg-permission-store", "/usr/libexec/xdg-permission-store", ["--replace"], environment: environment)
        }
        var backend = environment
        backend["DISPLAY"] = display
        backend["GDK_BACKEND"] = "x11"
        _ = try await startAwaiting("org.freedesktop.impl.portal.desktop.gtk") {
            try launcher.spawn(
                "xdg-desktop-portal-gtk", "/usr/libexec/xdg-desktop-portal-gtk", [], environment: backend)
        }
        var portal = environment
        portal["XDG_DESKTOP_PORTAL_DIR"] = "\(root)/portals"
        let owner = try await startAwaiting("org.freedesktop.portal.Desktop") {
            try launcher.spawn(
                "xdg-desktop-portal", "/usr/libexec/xdg-desktop-portal", ["--verbose"], environment: portal)
        }
        let result = DesktopPortal(
            logDirectory: directory, pids: started.map(\.pid), owner: owner, busAddress: bus.address)
        do {
            _ = try await watcher.call(
                destination: "org.freedesktop.portal.Desktop", path: "/org/freedesktop/portal/desktop",
                interface: "org.freedesktop.DBus.Properties", member: "Get",
                arguments: [.string("org.freedesktop.portal.Notification"), .string("version")], timeout: .seconds(10))
        } catch {
            throw TestEnvironmentError(
                "the desktop portal does not export org.freedesktop.portal.Notification: \(error)\(result.logTail)")
        }
        return result
    }
}
