// Acting like a person on the modern servers (issue 41) where they differ from the Debian 12 server they are driven
// like: mako 1.10's control interface (DismissNotifications with options, no DismissAllNotifications), swaync 0.11's
// LatestInvokeAction (a button of the newest notification), and GNOME Shell 48's insides as Eval sees them (its
// notifications in a Map by id, the banner's body label and buttons, no `_closeButton`). ServerControl asks here
// first.
import DBus
import Foundation

extension NotificationEnvironment {
    /// What is on screen where a modern server needs its own way to tell; nil when the Debian 12 way applies.
    func popupsOnModernServer() async throws -> [Popup]? {
        guard modern == .gnomeShell48 else { return nil }
        // The banner, while the tray's state is SHOWN (2).
        let json = try await gnomeEval(
            """
            (() => { const t = Main.messageTray, b = t._banner;
              if (!b || t._notificationState !== 2) return '[]';
              const a = t._bannerBin, n = b.notification, text = l => l?.clutter_text?.text ?? null;
              const e = [...\(GnomeShell.daemon)._notifications].find(([, m]) => m === n);
              return JSON.stringify([{x: a.x, y: a.y, width: a.width, height: a.height, title: text(b.titleLabel),
                body: text(b._bodyLabel), id: e ? e[0] : null}]); })()
            """)
        return try JSON.decode([[String: JSONValue]].self, fromEvalResult: json).map { banner in
            Popup(
                window: "banner", x: banner["x"]?.int ?? 0, y: banner["y"]?.int ?? 0, width: banner["width"]?.int ?? 0,
                height: banner["height"]?.int ?? 0, title: banner["title"]?.string, body: banner["body"]?.string,
                serverID: banner["id"]?.int.map(UInt32.init))
        }
    }

    /// JavaScript for GNOME Shell 48's banner showing notification `id`; throws (in the shell) when it is not on
    /// screen.
    private func gnome48Banner(of id: UInt32) -> String {
        """
        ((n) => { const b = Main.messageTray._banner;
          if (!n) throw new Error('no notification \(id)');
          if (!b || b.notification !== n) throw new Error('notification \(id) is not on the banner');
          return b; })(\(GnomeShell.daemon)._notifications.get(\(id)))
        """
    }

    /// Invokes action `key` where a modern server needs its own way; false when the Debian 12 way applies.
    func invokeOnModernServer(_ key: String, serverID: UInt32, actionKeys: [String]) async throws -> Bool {
        switch modern {
        case .gnomeShell48:
            // The body is the default action; the buttons come in Notify's order (the keys stay in the shell's
            // closures, so a button is found by its place).
            let buttons = actionKeys.filter { $0 != "default" }
            guard key == "default" || buttons.contains(key) else {
                throw TestEnvironmentError("the notification has no action \"\(key)\" (actions: \(actionKeys))")
            }
            let index = buttons.firstIndex(of: key) ?? -1
            try await gnomeEval(
                """
                (() => { const b = \(gnome48Banner(of: serverID));
                  if (\(index) < 0) { b.emit('clicked', 1); return 'body'; }
                  const button = b._buttonBox?.get_children()[\(index)];
                  if (!button) throw new Error('no button \(index) on the banner');
                  button.emit('clicked', 1); return 'button'; })()
                """)
            return true
        case .swaync011:
            // swaync keeps `default` apart from its buttons; LatestInvokeAction takes a button's index.
            let buttons = actionKeys.filter { $0 != "default" }
            guard key != "default", let index = buttons.firstIndex(of: key) else {
                throw NotSupportedOnServer(
                    "swaync 0.11 invokes only a button of the newest notification from outside (LatestInvokeAction), "
                        + "not its default action, and headless sway has no pointer to click the body with")
            }
            _ = try await control(
                "org.erikreider.swaync.cc", "/org/erikreider/swaync/cc", "org.erikreider.swaync.cc",
                "LatestInvokeAction", [.uint32(UInt32(index))])
            return true
        default:
            return false
        }
    }

    /// Dismisses notification `serverID` where a modern server needs its own way; false when the Debian 12 way applies.
    func dismissOnModernServer(serverID: UInt32) async throws -> Bool {
        switch modern {
        case .gnomeShell48:
            // GNOME 48's banner has no `_closeButton` any more: what its close button does, reason DISMISSED (2).
            try await gnomeEval("\(gnome48Banner(of: serverID)).notification.destroy(2); true")
            return true
        case .mako110:
            try await makoDismiss(["id": .uint32(serverID), "history": .boolean(false)])
            return true
        default:
            return false
        }
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
