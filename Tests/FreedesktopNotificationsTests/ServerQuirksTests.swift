// The quirk table `toastkit doctor` prints: each entry follows the server and the version that changed it (issue 41:
// the 2025–2026 servers measured headless from Debian 13 and testing), in process.
import FreedesktopNotifications
import Testing

@Suite struct ServerQuirksTests {
    private func keys(_ name: String, _ version: String, vendor: String = "GNOME") -> [String] {
        ServerCapabilities(
            [],
            information: ServerInformation(name: name, vendor: vendor, version: version, specificationVersion: "1.2")
        ).quirks.map(\.key)
    }

    private func text(_ key: String, _ name: String, _ version: String) -> String? {
        ServerCapabilities(
            [], information: ServerInformation(name: name, vendor: "", version: version, specificationVersion: "1.2")
        ).quirks.first { $0.key == key }?.text
    }

    @Test func gnomeShellByVersion() {
        #expect(
            keys("gnome-shell", "43.9") == [
                "ignores-expire-timeout", "keeps-first-click-handler", "closes-from-sender-only", "signals-twice",
            ])
        #expect(
            keys("gnome-shell", "48.7") == [
                "ignores-expire-timeout", "keeps-first-click-handler", "closes-from-sender-only",
                "closes-when-sender-leaves", "app-from-desktop-entry", "signals-twice",
            ])
        #expect(keys("gnome-shell", "50.5").last == "activation-token")
        #expect(!keys("gnome-shell", "50.5").contains("signals-twice"))
        // GNOME 46+ closes every notification of an app when its first sender leaves, and only when it tied the
        // sender to an app; a CloseNotification from another connection works once the sender left (43 too).
        let leaves = text("closes-when-sender-leaves", "gnome-shell", "46.0")
        #expect(leaves?.contains("every notification of that app") == true)
        #expect(leaves?.contains("desktop-entry") == true)
        #expect(text("closes-from-sender-only", "gnome-shell", "47.1")?.contains("once it left") == true)
        #expect(text("closes-from-sender-only", "gnome-shell", "43.9")?.contains("once it left") == true)
    }

    @Test func plasmaByVersion() {
        #expect(keys("Plasma", "5.27.5", vendor: "KDE") == ["refuses-repeat", "progress-through-jobs"])
        #expect(
            keys("Plasma", "6.3.6", vendor: "KDE") == [
                "refuses-repeat", "progress-through-jobs", "closes-timed-out-popup",
            ])
        #expect(keys("Plasma", "6.7.4", vendor: "KDE").last == "plays-sound")
    }

    @Test func theOtherServers() {
        #expect(keys("Notification Daemon", "1.26.0", vendor: "MATE").first == "claims-sound")
        #expect(keys("Notification Daemon", "3.20.0").last == "never-expires-offscreen")
        #expect(
            keys("cinnamon", "6.4.10") == [
                "ignores-expire-timeout", "one-popup-at-a-time", "closes-when-window-leaves",
            ])
        #expect(keys("Budgie Notification Server", "10.9.2") == ["clamps-expire-timeout"])
        #expect(keys("mako", "1.7.1") == ["int32-value"])
        #expect(keys("mako", "0.0.0") == ["int32-value", "no-version"])
        #expect(keys("SwayNotificationCenter", "0.11.0") == ["no-popups-while-open", "closes-twice"])
        #expect(keys("someone-else", "1").isEmpty)
    }

    @Test func versionsCompareByTheirNumbers() {
        func information(_ version: String) -> ServerInformation {
            ServerInformation(name: "x", vendor: "", version: version, specificationVersion: "1.2")
        }
        #expect(information("6.7.4").versionAtLeast(6, 7))
        #expect(information("6.10").versionAtLeast(6, 7))
        #expect(information("7").versionAtLeast(6, 7))
        #expect(!information("6.3.6").versionAtLeast(6, 7))
        #expect(!information("unknown").versionAtLeast(0, 0))
        #expect(information("50.beta").versionAtLeast(50, 0))
    }
}
