// The notification servers of 2025-2026 (issue 41) that the tests run from the Debian 13 "trixie" chroot that
// scripts/modern-chroot.sh makes: which ones there are, what each is named in the matrix, and which of Debian 12's
// servers it is driven like (``kind``).
import Foundation
import Glibc

/// A notification server of 2025-2026, run from the Debian 13 chroot (`scripts/modern-chroot.sh`) on a test's private
/// bus and display (``NotificationEnvironment/start(modern:)``).
///
/// Each is driven like the Debian 12 server of its ``kind`` (the same control interfaces and popup layout), so every
/// check written for that server holds for it too unless the suite records otherwise.
public enum ModernServer: String, Sendable, CaseIterable, CustomStringConvertible {
    /// dunst 1.12 (`dunstctl` over the bus), with the project's `scripts/harness/dunstrc`.
    case dunst112 = "dunst-1.12"
    /// KDE Plasma 6.3's plasmashell under Xvfb, with kactivitymanagerd (xdotool clicks: its popups keep 5.27's
    /// layout).
    case plasma63 = "plasma-6.3"
    /// xfce4-notifyd 0.9.7 under Xvfb (xdotool clicks).
    case xfce4Notifyd097 = "xfce4-notifyd-0.9.7"
    /// lxqt-notificationd 2.1 under Xvfb (xdotool clicks).
    case lxqtNotificationd21 = "lxqt-notificationd-2.1"
    /// mako 1.10 on a headless sway (its `fr.emersion.Mako` interface).
    case mako110 = "mako-1.10"
    /// SwayNotificationCenter 0.11 on a headless sway (its `org.erikreider.swaync.cc` interface).
    case swaync011 = "swaync-0.11"
    /// GNOME Shell 48, headless, with its `org.gnome.Shell.Notifications` proxy owning the name (driven through
    /// `org.gnome.Shell.Eval`, which the project's ES-module test extension unlocks).
    case gnomeShell48 = "gnome-shell-48"

    /// The server's name in the matrix (with its version).
    public var description: String { rawValue }

    /// The Debian 12 server it is driven like.
    public var kind: NotificationServerKind {
        switch self {
        case .dunst112: .dunst
        case .plasma63: .plasma
        case .xfce4Notifyd097: .xfce4Notifyd
        case .lxqtNotificationd21: .lxqtNotificationd
        case .mako110: .mako
        case .swaync011: .swaync
        case .gnomeShell48: .gnomeShell
        }
    }

    /// The tools the host needs to drive it (each with its Debian package): the display and the clicks stay on the
    /// host, only the server runs in the chroot.
    var hostRequirements: [(path: String, package: String)] {
        var needs: [(path: String, package: String)] = [("unshare", "util-linux"), ("convert", "imagemagick")]
        if kind.usesX11 { needs += [("Xvfb", "xvfb"), ("import", "imagemagick")] }
        switch self {
        case .dunst112: needs.append(("dunstctl", "dunst"))
        case .plasma63: needs += [("xdotool", "xdotool"), ("xprop", "x11-utils")]
        case .xfce4Notifyd097, .lxqtNotificationd21: needs.append(("xdotool", "xdotool"))
        case .mako110, .swaync011: needs += [("grim", "grim"), ("setpriv", "util-linux")]
        case .gnomeShell48: break
        }
        return needs
    }

    /// The project's dunstrc for dunst 1.12 in the chroot: Debian 13's Adwaita (48) has no full-colour status icons
    /// any more (only `-symbolic` ones), so the plain folder lookup reads the same names from the `gnome` theme
    /// (gnome-icon-theme, there too), as a desktop that has it finds them.
    static func dunstConfig(_ config: String) -> String {
        let folders = ["status", "emblems", "apps", "mimetypes", "places"].map { "/usr/share/icons/gnome/48x48/\($0)/" }
        return config.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.trimmingCharacters(in: .whitespaces).hasPrefix("icon_path =")
                ? "    icon_path = \(folders.joined(separator: ":"))" : String(line)
        }.joined(separator: "\n")
    }

    /// Fails, saying what to do, when the chroot is not made or the host lacks a tool.
    public func checkInstalled() throws {
        guard getuid() == 0 else {
            throw TestEnvironmentError(
                "\(self) runs in a chroot with mount namespaces of its own: run the tests as root (scripts/test.sh does)"
            )
        }
        _ = try ModernChroot.root()
        var missing: [String] = []
        for (tool, package) in hostRequirements where (try? Tools.require(tool, package: package)) == nil {
            if !missing.contains(package) { missing.append(package) }
        }
        if !missing.isEmpty {
            throw TestEnvironmentError(
                "\(self) needs packages that are not installed: run `apt-get install --no-install-recommends "
                    + "\(missing.joined(separator: " "))` (or scripts/install-deps.sh test)")
        }
    }
}
