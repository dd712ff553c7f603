import DBus
import Glibc

/// A real notification server the tests can run on a private bus, headless.
///
/// Every server runs in a private desktop that ``NotificationEnvironment`` starts: the X servers on their own Xvfb,
/// GNOME Shell as a headless Wayland compositor, mako and swaync on a headless sway. What each needs and how it is
/// driven is in `docs/conformance.md`.
public enum NotificationServerKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// dunst, with the project's `scripts/harness/dunstrc` (driven with `dunstctl`).
    case dunst
    /// GNOME's notification-daemon (driven with xdotool clicks; never expires anything under Xvfb).
    case notificationDaemon = "notification-daemon"
    /// xfce4-notifyd (driven with xdotool clicks).
    case xfce4Notifyd = "xfce4-notifyd"
    /// mate-notification-daemon (driven with xdotool clicks; its "x" reports reason 1).
    case mateNotificationDaemon = "mate-notification-daemon"
    /// GNOME Shell 43, headless, with its `org.gnome.Shell.Notifications` proxy owning the name (driven through
    /// `org.gnome.Shell.Eval`, which the project's test extension unlocks).
    case gnomeShell = "gnome-shell"
    /// KDE Plasma 5.27's plasmashell under Xvfb, with kactivitymanagerd (driven with xdotool clicks).
    case plasma
    /// mako on a headless sway (driven through its `fr.emersion.Mako` D-Bus interface).
    case mako
    /// SwayNotificationCenter on a headless sway (dismissed through `org.erikreider.swaync.cc`; it has no way to
    /// invoke an action from outside).
    case swaync
    /// lxqt-notificationd under Xvfb (driven with xdotool clicks).
    case lxqtNotificationd = "lxqt-notificationd"

    /// The server's name.
    public var description: String { rawValue }

    /// The Debian packages it needs, besides the bus and Xvfb (`scripts/install-deps.sh test` installs them all).
    public var packages: [String] {
        switch self {
        case .dunst: ["dunst"]
        case .notificationDaemon: ["notification-daemon", "xdotool"]
        case .xfce4Notifyd: ["xfce4-notifyd", "xdotool"]
        case .mateNotificationDaemon: ["mate-notification-daemon", "xdotool"]
        case .gnomeShell: ["gnome-shell", "gjs"]
        case .plasma: ["plasma-workspace", "plasma-desktop", "kactivitymanagerd", "xdotool", "x11-utils"]
        case .mako: ["sway", "mako-notifier", "grim"]
        case .swaync: ["sway", "sway-notification-center", "grim"]
        case .lxqtNotificationd: ["lxqt-notificationd", "lxqt-qtplugin", "xdotool"]
        }
    }

    /// The Debian package of the server itself.
    public var package: String { packages[0] }

    /// Whether it draws on an X display (Xvfb); the others are Wayland clients or compositors.
    public var usesX11: Bool {
        switch self {
        case .gnomeShell, .mako, .swaync: false
        default: true
        }
    }

    /// Whether it is a whole desktop shell (GNOME Shell, Plasma): about a second of CPU to start, more to wait for.
    public var isDesktopShell: Bool { self == .gnomeShell || self == .plasma }

    /// The well-known names the server's processes own on the session bus (a restart waits until they are free).
    var busNames: [BusName] {
        switch self {
        case .gnomeShell:
            [
                "org.freedesktop.Notifications", "org.gnome.Shell.Notifications", "org.gnome.Shell",
                "org.gtk.Notifications", GnomeShell.readyName,
            ]
        case .swaync: ["org.freedesktop.Notifications", "org.erikreider.swaync.cc"]
        default: ["org.freedesktop.Notifications"]
        }
    }

    /// How long start-up may take before the environment gives up (generous: the machine may be busy).
    var startLimit: Duration { isDesktopShell ? .seconds(60) : .seconds(20) }

    /// The files it needs (a command on PATH or an absolute path), each with the package that provides it.
    var requirements: [(path: String, package: String)] {
        var needs: [(path: String, package: String)]
        switch self {
        case .dunst:
            needs = [("dunst", "dunst"), ("dunstctl", "dunst")]
        case .notificationDaemon:
            needs = [
                (Self.firstExecutable(Self.notificationDaemonPaths) ?? "notification-daemon", "notification-daemon")
            ]
        case .xfce4Notifyd:
            needs = [(Self.firstExecutable(Self.xfce4NotifydPaths) ?? "xfce4-notifyd", "xfce4-notifyd")]
        case .mateNotificationDaemon:
            needs = [
                (
                    Self.firstExecutable(Self.mateNotificationDaemonPaths) ?? "mate-notification-daemon",
                    "mate-notification-daemon"
                )
            ]
        case .gnomeShell:
            needs = [("gnome-shell", "gnome-shell"), (Self.gnomeNotificationsProxy, "gnome-shell"), ("gjs", "gjs")]
        case .plasma:
            needs = [
                ("plasmashell", "plasma-workspace"), (Self.plasmaShellPackage, "plasma-desktop"),
                (Self.firstExecutable(Self.kactivitymanagerdPaths) ?? "kactivitymanagerd", "kactivitymanagerd"),
            ]
        case .mako:
            needs = [("sway", "sway"), ("mako", "mako-notifier"), ("grim", "grim")]
        case .swaync:
            needs = [("sway", "sway"), ("swaync", "sway-notification-center"), ("grim", "grim")]
        case .lxqtNotificationd:
            needs = [
                ("lxqt-notificationd", "lxqt-notificationd"),
                (
                    Self.firstExisting(
                        ["x86_64", "aarch64"].map { "/usr/lib/\($0)-linux-gnu/qt5/plugins/platformthemes/libqtlxqt.so" }
                    )
                        ?? "/usr/lib/x86_64-linux-gnu/qt5/plugins/platformthemes/libqtlxqt.so", "lxqt-qtplugin"
                ),
            ]
        }
        if usesX11 {
            needs.append(("Xvfb", "xvfb"))
            needs.append(("import", "imagemagick"))  // screenshots of the display
        }
        if packages.contains("xdotool") { needs.append(("xdotool", "xdotool")) }
        if self == .plasma { needs.append(("xprop", "x11-utils")) }
        if self == .lxqtNotificationd || self == .gnomeShell || self == .mako || self == .swaync {
            needs.append(("convert", "imagemagick"))  // pixel reads (lxqt) and crops of full-screen shots
        }
        return needs
    }

    /// Fails, naming every Debian package to install, when something the server needs is missing.
    public func checkInstalled() throws {
        var missing: [String] = []
        for (path, package) in requirements {
            let found = path.hasPrefix("/") ? access(path, F_OK) == 0 : (try? Tools.require(path, package: "")) != nil
            if !found, !missing.contains(package) { missing.append(package) }
        }
        if !missing.isEmpty {
            throw TestEnvironmentError(
                "\(self) needs packages that are not installed: run `apt-get install --no-install-recommends "
                    + "\(missing.joined(separator: " "))` (or scripts/install-deps.sh test)")
        }
    }

    // MARK: - Where Debian puts things

    static let notificationDaemonPaths = [
        "/usr/lib/notification-daemon/notification-daemon", "/usr/libexec/notification-daemon",
    ]
    static let xfce4NotifydPaths = [
        "/usr/lib/x86_64-linux-gnu/xfce4/notifyd/xfce4-notifyd",
        "/usr/lib/aarch64-linux-gnu/xfce4/notifyd/xfce4-notifyd",
        "/usr/lib/xfce4/notifyd/xfce4-notifyd",
    ]
    static let mateNotificationDaemonPaths = [
        "/usr/lib/mate-notification-daemon/mate-notification-daemon", "/usr/libexec/mate-notification-daemon",
    ]
    static let kactivitymanagerdPaths = [
        "/usr/lib/x86_64-linux-gnu/libexec/kactivitymanagerd", "/usr/lib/aarch64-linux-gnu/libexec/kactivitymanagerd",
        "/usr/libexec/kactivitymanagerd",
    ]
    /// In GNOME 43 this gjs service owns `org.freedesktop.Notifications` and forwards to the shell.
    static let gnomeNotificationsProxy = "/usr/share/gnome-shell/org.gnome.Shell.Notifications"
    /// plasmashell has no desktop shell without this package.
    static let plasmaShellPackage = "/usr/share/plasma/shells/org.kde.plasma.desktop"

    static func firstExisting(_ candidates: [String]) -> String? {
        candidates.first { access($0, F_OK) == 0 }
    }

    static func firstExecutable(_ candidates: [String]) -> String? {
        candidates.first { access($0, X_OK) == 0 }
    }
}
