// Acting like a person on the modern servers (issue 41) where they differ from the Debian 12 server they are driven
// like: mako 1.10's control interface (DismissNotifications with options, no DismissAllNotifications) and swaync 0.11's
// LatestInvokeAction (a button of the newest notification). ServerControl asks here first.
import DBus
import Foundation

extension NotificationEnvironment {
    /// Invokes action `key` where a modern server needs its own way; false when the Debian 12 way applies.
    func invokeOnModernServer(_ key: String, serverID: UInt32, actionKeys: [String]) async throws -> Bool {
        guard modern == .swaync011 else { return false }
        // swaync keeps `default` apart from its buttons; LatestInvokeAction takes a button's index.
        let buttons = actionKeys.filter { $0 != "default" }
        guard key != "default", let index = buttons.firstIndex(of: key) else {
            throw NotSupportedOnServer(
                description:
                    "swaync 0.11 invokes only a button of the newest notification from outside (LatestInvokeAction), "
                    + "not its default action, and headless sway has no pointer to click the body with")
        }
        _ = try await control(
            "org.erikreider.swaync.cc", "/org/erikreider/swaync/cc", "org.erikreider.swaync.cc",
            "LatestInvokeAction", [.uint32(UInt32(index))])
        return true
    }

    /// Dismisses notification `serverID` where a modern server needs its own way; false when the Debian 12 way applies.
    func dismissOnModernServer(serverID: UInt32) async throws -> Bool {
        guard modern == .mako110 else { return false }
        try await makoDismiss(["id": .uint32(serverID), "history": .boolean(false)])
        return true
    }

    /// Dismisses everything where a modern server needs its own way; false when the Debian 12 way applies.
    func closeEverythingOnModernServer() async throws -> Bool {
        guard modern == .mako110 else { return false }
        try await makoDismiss(["all": .boolean(true), "history": .boolean(false)])
        return true
    }

    /// mako 1.10's `DismissNotifications(a{sv})` (what `makoctl dismiss` calls).
    private func makoDismiss(_ options: KeyValuePairs<String, DBusValue>) async throws {
        _ = try await control(
            "org.freedesktop.Notifications", "/fr/emersion/Mako", "fr.emersion.Mako", "DismissNotifications",
            [.variantDictionary(options)])
    }
}

extension NotSupportedOnServer {
    /// Says why a scenario cannot be carried out on a server from outside.
    public init(_ reason: String) {
        self.init(description: reason)
    }
}
