import DBus
import Foundation
import Glibc

/// A notification on screen, as far as the server lets the tests see it.
public struct Popup: Sendable, CustomStringConvertible {
    /// The X window (click servers), or what the popup is (`banner`, `mako`, …).
    public var window: String
    /// Left edge on the screen (0 where the server does not tell).
    public var x: Int
    /// Top edge on the screen.
    public var y: Int
    /// Width.
    public var width: Int
    /// Height.
    public var height: Int
    /// The title it shows, where the server tells (GNOME Shell, mako).
    public var title: String?
    /// The body text it shows, where the server tells (GNOME Shell: the text as drawn, markup applied; mako: as
    /// received).
    public var body: String?
    /// The server's id for it, where the server tells.
    public var serverID: UInt32?

    /// Creates a popup record.
    public init(
        window: String, x: Int = 0, y: Int = 0, width: Int = 0, height: Int = 0, title: String? = nil,
        body: String? = nil, serverID: UInt32? = nil
    ) {
        self.window = window
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.title = title
        self.body = body
        self.serverID = serverID
    }

    /// `WxH+X+Y`, with the title when known.
    public var description: String {
        "\(width)x\(height)+\(x)+\(y)" + (title.map { " \"\($0)\"" } ?? "") + (serverID.map { " #\($0)" } ?? "")
    }
}

/// Something a server cannot be made to do from outside (the reason says why).
public struct NotSupportedOnServer: Error, CustomStringConvertible {
    /// Why.
    public let description: String
}

/// Acting on a desktop's notifications the way a person would (ported from the shared harness's `notify-ctl.sh`):
/// look at what is on screen, click the body or a button, close a popup, take a screenshot.
///
/// | | dunst | notification-daemon, xfce4-notifyd, mate | GNOME Shell | Plasma | mako | swaync | lxqt |
/// |---|---|---|---|---|---|---|---|
/// | popups | `dunstctl count displayed` | visible windows | the banner (`Eval`) | popup windows | `ListNotifications` | `NotificationCount` (held, not necessarily drawn) | blocks in its one window |
/// | action | `dunstctl action`/`context` | click | `clicked` on the banner or its button (`Eval`) | click | `InvokeAction` | not possible | click |
/// | dismiss | `dunstctl close` | "x" (xfce: body) | the banner's close (`Eval`) | "x" | `DismissNotification` | `cc.CloseNotification` | "x" |
/// | screenshot | `import` | `import` | `org.gnome.Shell.Screenshot` | `import` | `grim` | `grim` | `import` |
///
/// Click servers are clicked at offsets from the NEWEST popup's corners, measured at 1280x800 with DejaVu fonts for
/// short labels; keep one notification on screen when clicking. After a click the pointer is parked in the
/// bottom-left corner (a pointer resting on a GTK popup pauses its timeout).
extension NotificationEnvironment {
    // MARK: - What is on screen

    /// The notifications on screen now (see the table above for what each server lets the tests see).
    public func popups() async throws -> [Popup] {
        if let popups = try await popupsOnModernServer() { return popups }
        switch server {
        case .dunst:
            let count = Int(try await run("dunstctl", ["count", "displayed"]).trimmed) ?? 0
            return Array(repeating: Popup(window: "dunst"), count: max(count, 0))
        case .notificationDaemon, .xfce4Notifyd, .mateNotificationDaemon:
            return try await windows(matching: ["--name", ".*"])
        case .plasma:
            // Only notification windows (not the tooltips a resting pointer raises), newest (highest) last.
            var popups: [Popup] = []
            for window in try await windows(matching: ["--class", "plasmashell"]) {
                let type = try await onOwnThread {
                    try Tools.run(
                        "xprop", ["-id", window.window, "_NET_WM_WINDOW_TYPE"], environment: self.environment)
                }
                // Mapped is not drawn: right after start-up a popup is mapped a while before it is painted.
                if type.output.contains("_NET_WM_WINDOW_TYPE_NOTIFICATION"),
                    try await brightness(atX: window.x + window.width / 2, y: window.y + 8) > 40
                {
                    popups.append(window)
                }
            }
            return popups.sorted { $0.y > $1.y }
        case .lxqtNotificationd:
            return try await lxqtPopups()
        case .gnomeShell:
            return try await gnomeBanner()
        case .mako:
            return try await makoNotifications()
        case .swaync:
            // It tells how many notifications it holds (popups and its control center alike), not what it draws: a
            // popup counts once something is drawn where popups appear.
            let reply = try await control(
                "org.erikreider.swaync.cc", "/org/erikreider/swaync/cc", "org.erikreider.swaync.cc",
                "NotificationCount")
            let count = Int(try reply.arguments("u")[0].uint32Value ?? 0)
            guard count > 0, try await colours(in: popupRegion) > 16 else { return [] }
            return Array(repeating: Popup(window: "swaync"), count: count)
        }
    }

    /// How long the waits for what is on screen last by default: a popup comes within a second on an idle machine
    /// (Plasma's in about one), and the limit only matters when it never comes, so it is generous for a busy one.
    public static let popupLimit = Duration.seconds(10)

    /// Waits until exactly `count` notifications are on screen and returns them, or nil after `limit`
    /// (``popupLimit`` by default).
    ///
    /// A popup appearing or going away is not announced on the bus (servers answer `Notify` and emit
    /// `NotificationClosed` around their drawing, not after it), so this polls: every 25 ms, for at most `limit`.
    public func waitForPopups(_ count: Int, within limit: Duration? = nil) async throws -> [Popup]? {
        let deadline = ContinuousClock.now + (limit ?? Self.popupLimit)
        while true {
            let now = try await popups()
            if now.count == count { return now }
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: pollInterval)
        }
    }

    /// How often to look at the screen while waiting (Plasma and swaync: every 100 ms, a look costs processes).
    public var pollInterval: Duration {
        server == .plasma || server == .swaync ? .milliseconds(100) : .milliseconds(25)
    }

    /// The newest popup once its geometry has settled (two reads 100 ms apart agree: Plasma lays a new popup out
    /// again after mapping it), waiting up to the default limit for one to appear.
    public func newestPopup() async throws -> Popup {
        let deadline = ContinuousClock.now + Self.popupLimit
        var previous: Popup?
        while true {
            let newest = try await popups().last
            if let newest, let previous, newest.description == previous.description { return newest }
            if ContinuousClock.now >= deadline {
                guard let newest else { throw TestEnvironmentError("no \(server) popup on screen") }
                return newest
            }
            previous = newest
            try await Task.sleep(for: newest == nil ? pollInterval : .milliseconds(100))
        }
    }

    // MARK: - Acting like a person

    /// Invokes action `key` of notification `serverID` as a person would: `default` is a click on the body (a
    /// button on xfce4-notifyd and lxqt-notificationd, which draw it as one). `actionKeys` are the notification's
    /// action keys in `Notify` order; the click servers need them to find the button.
    ///
    /// - Throws: ``NotSupportedOnServer`` on swaync (no way to invoke an action from outside, and headless sway has
    ///   no pointer).
    public func invokeAction(_ key: String, serverID: UInt32, actionKeys: [String]) async throws {
        if try await invokeOnModernServer(key, serverID: serverID, actionKeys: actionKeys) { return }
        switch server {
        case .dunst:
            if key == "default" {
                try await run("dunstctl", ["action", "0"])
            } else {
                try chooseInContextMenu("\\[\(serverID),\(NSRegularExpression.escapedPattern(for: key))\\]$")
                try await run("dunstctl", ["context"])
            }
        case .gnomeShell:
            try await gnomeEval(
                """
                (() => { const b = \(GnomeShell.banner(of: serverID)), key = \(JSON.string(key));
                  if (key === 'default') { b.emit('clicked', 1); return 'body'; }
                  const actions = \(GnomeShell.daemon)._notifications[\(serverID)].actions;
                  const i = actions.findIndex((a, j) => j % 2 === 0 && a === key);
                  if (i < 0) throw new Error('notification \(serverID) has no action ' + key);
                  const button = b._buttonBox?.get_children().find(c => c.label === actions[i + 1]);
                  if (!button) throw new Error('no button ' + actions[i + 1] + ' on the banner');
                  button.emit('clicked', 1); return 'button'; })()
                """)
        case .mako:
            _ = try await control(
                "org.freedesktop.Notifications", "/fr/emersion/Mako", "fr.emersion.Mako", "InvokeAction",
                [.uint32(serverID), .string(key)])
        case .swaync:
            throw NotSupportedOnServer(
                description:
                    "swaync 0.7.3 has no D-Bus or command-line way to invoke an action, and headless sway has no pointer "
                    + "to click with")
        case .notificationDaemon, .xfce4Notifyd, .mateNotificationDaemon, .plasma, .lxqtNotificationd:
            try await clickAction(key, actionKeys: actionKeys)
        }
    }

    /// Waits (at most 10 s) for the dialog window titled `title` (a reply prompt: zenity, kdialog, yad) on this
    /// display, gives it the keyboard, types `text` in it and presses Return, as a person would.
    public func answerDialog(titled title: String, with text: String) async throws {
        let pattern = "^\(NSRegularExpression.escapedPattern(for: title))$"
        let found = try await run("timeout", ["10", "xdotool", "search", "--sync", "--name", pattern])
        guard let window = found.split(separator: "\n").first.map(String.init) else {
            throw TestEnvironmentError("no window titled \(title) on \(server)'s display")
        }
        try await run("xdotool", ["windowfocus", "--sync", window, "type", "--delay", "20", text])
        try await run("xdotool", ["key", "Return"])
    }

    /// Types `text` in the reply field of the newest popup and sends it with Return, as a person would: Plasma draws
    /// the field (the `inline-reply` action) below the text, and shows it at once when it is the only action.
    ///
    /// - Throws: ``NotSupportedOnServer`` on every other server (none draws a reply field).
    public func typeInlineReply(_ text: String) async throws {
        guard server == .plasma else {
            throw NotSupportedOnServer(description: "\(server) draws no reply field")
        }
        let popup = try await newestPopup()
        try await run(
            "xdotool",
            [
                "mousemove", "--sync", "\(popup.x + popup.width / 3)", "\(popup.y + popup.height - 20)", "click", "1",
                "type", "--delay", "20", text,
            ])
        try await run("xdotool", ["key", "Return", "mousemove", "0", "\(Self.screen.height - 1)"])
    }

    /// Closes notification `serverID` as a person would, with the server's own close control ("x"; xfce4-notifyd has
    /// none: a click on the body). The server should then send `NotificationClosed(id, 2)` (mate sends 1).
    public func dismiss(serverID: UInt32) async throws {
        if try await dismissOnModernServer(serverID: serverID) { return }
        switch server {
        case .dunst:
            let displayed = try await displayedCount()
            guard displayed == 1 else {
                throw NotSupportedOnServer(
                    description: "dunst 1.9 can only close the first displayed notification, and \(displayed) are shown"
                )
            }
            try await run("dunstctl", ["close"])
        case .gnomeShell:
            try await gnomeEval(
                """
                (() => { const b = \(GnomeShell.banner(of: serverID));
                  if (b._closeButton) { b._closeButton.emit('clicked', 1); return 'x'; }
                  b.notification.destroy(imports.ui.messageTray.NotificationDestroyedReason.DISMISSED); return 'd'; })()
                """)
        case .mako:
            _ = try await control(
                "org.freedesktop.Notifications", "/fr/emersion/Mako", "fr.emersion.Mako", "DismissNotification",
                [.uint32(serverID), .boolean(false)])
        case .swaync:
            // What the popup's close button does.
            _ = try await control(
                "org.erikreider.swaync.cc", "/org/erikreider/swaync/cc", "org.erikreider.swaync.cc",
                "CloseNotification", [.uint32(serverID)])
        case .notificationDaemon, .xfce4Notifyd, .mateNotificationDaemon, .plasma, .lxqtNotificationd:
            try await clickClose(try await newestPopup())
        }
    }

    /// Clicks the close control of `popup` ("x"; on xfce4-notifyd, which has none, the body).
    private func clickClose(_ popup: Popup) async throws {
        let point =
            switch server {
            case .notificationDaemon: (popup.x + popup.width - 24, popup.y + 32)
            case .xfce4Notifyd: (popup.x + 40, popup.y + popup.height / 2)
            case .mateNotificationDaemon: (popup.x + popup.width - 33, popup.y + 27)
            case .plasma: (popup.x + popup.width - 15, popup.y + 14)
            default: (popup.x + popup.width - 24, popup.y + 24)  // lxqt
            }
        try await click(point)
    }

    /// Closes everything on screen and returns once nothing is (between the steps of a test that needs an empty
    /// screen).
    public func clear() async throws {
        try await closeEverything()
        guard try await waitForPopups(0) != nil else {
            throw TestEnvironmentError("clear: \(try await popups().count) \(server) popups stayed on screen")
        }
    }

    private func closeEverything() async throws {
        if try await closeEverythingOnModernServer() { return }
        switch server {
        case .dunst:
            try await run("dunstctl", ["close-all"])
        case .gnomeShell:
            try await gnomeEval("Main.messageTray.getSources().forEach(s => s.destroy()); true")
        case .mako:
            _ = try await control(
                "org.freedesktop.Notifications", "/fr/emersion/Mako", "fr.emersion.Mako", "DismissAllNotifications")
        case .swaync:
            _ = try await control(
                "org.erikreider.swaync.cc", "/org/erikreider/swaync/cc", "org.erikreider.swaync.cc",
                "CloseAllNotifications")
        case .notificationDaemon, .xfce4Notifyd, .mateNotificationDaemon, .plasma, .lxqtNotificationd:
            // One popup after the other; one that goes away by itself meanwhile (Plasma fading out after an
            // action) is simply not there any more on the next turn.
            for _ in 0..<30 {
                let now = try await popups()
                guard let newest = now.last else { return }
                try await clickClose(newest)
                _ = try await waitForPopups(now.count - 1)
            }
        }
    }

    /// GNOME Shell: the (virtual) person touches the input devices. GNOME never times a banner out while the
    /// person is idle, and shows one banner at a time; after this the banner goes away on its own. Elsewhere a
    /// no-op.
    public func userActive() async throws {
        guard server == .gnomeShell else { return }
        try await gnomeEval("Main.messageTray._onIdleMonitorBecameActive(); true")
    }

    /// Saves a PNG of the screen, or of `region` (`x`, `y`, `width`, `height`) of it, at `path`.
    public func screenshot(to path: String, region: (x: Int, y: Int, width: Int, height: Int)? = nil) async throws {
        let crop = region.map { "\($0.width)x\($0.height)+\($0.x)+\($0.y)" }
        switch server {
        case .gnomeShell:
            let full = region == nil ? path : "\(directory)/screenshot-\(UUID().uuidString).png"
            let reply = try await control(
                "org.gnome.Shell.Screenshot", "/org/gnome/Shell/Screenshot", "org.gnome.Shell.Screenshot",
                "Screenshot", [.boolean(false), .boolean(false), .string(full)])
            guard try reply.arguments("bs")[0] == .boolean(true) else {
                throw TestEnvironmentError(
                    "org.gnome.Shell.Screenshot failed (is the test extension's unsafe mode on?)")
            }
            if let crop {
                try await run("convert", [full, "-crop", crop, "+repage", path])
                try? FileManager.default.removeItem(atPath: full)
            }
        case .mako, .swaync:
            // A Wayland popup may be announced before it is drawn: the picture is taken once the region shows more
            // than a plain background (at most 3 s).
            let geometry = region.map { ["-g", "\($0.x),\($0.y) \($0.width)x\($0.height)"] } ?? []
            let deadline = ContinuousClock.now + .seconds(3)
            repeat {
                try await run("grim", geometry + [path])
                if try await colours(ofImage: path) > 16 { return }
                try await Task.sleep(for: .milliseconds(100))
            } while ContinuousClock.now < deadline
        case .plasma:
            // Plasma repaints a replaced popup (its new icon) a while after the text: the picture is taken once two
            // captures 200 ms apart agree (at most 3 s).
            let deadline = ContinuousClock.now + .seconds(3)
            var previous: Data?
            while true {
                try await run(
                    "import", ["-window", "root"] + (crop.map { ["-crop", $0, "+repage"] } ?? []) + [path])
                let now = FileManager.default.contents(atPath: path)
                if now == previous || ContinuousClock.now >= deadline { return }
                previous = now
                try await Task.sleep(for: .milliseconds(200))
            }
        default:
            try await run(
                "import", ["-window", "root"] + (crop.map { ["-crop", $0, "+repage"] } ?? []) + [path])
        }
    }

    /// How many colours the screen shows in `region`: a plain background has one or two, an icon or text dozens.
    public func colours(in region: (x: Int, y: Int, width: Int, height: Int)) async throws -> Int {
        let file = "\(directory)/region-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: file) }
        switch server {
        case .mako, .swaync:
            try await run("grim", ["-g", "\(region.x),\(region.y) \(region.width)x\(region.height)", file])
        case .gnomeShell:
            try await screenshot(to: file, region: region)
        default:
            try await run(
                "import",
                [
                    "-window", "root", "-crop", "\(region.width)x\(region.height)+\(region.x)+\(region.y)", "+repage",
                    file,
                ])
        }
        return try await colours(ofImage: file)
    }

    /// Where the server draws a popup's icon, for the servers whose layout is known: Plasma (right of the text),
    /// lxqt-notificationd (left of it). nil elsewhere.
    public func iconRegion(of popup: Popup) -> (x: Int, y: Int, width: Int, height: Int)? {
        switch server {
        // Inside the popup either way: a popup without an icon is shorter (Plasma) or starts its text further left
        // (lxqt), so the area is plain background then.
        case .plasma: (popup.x + popup.width - 46, popup.y + 36, 32, 28)
        case .lxqtNotificationd: (popup.x + 8, popup.y + 16, 18, 24)
        default: nil
        }
    }

    /// How many colours the image at `path` has.
    func colours(ofImage path: String) async throws -> Int {
        Int(try await run("convert", [path, "-format", "%k", "info:"]).trimmed) ?? 0
    }

    /// The brightness (0…255) of the screen's pixel at `x`, `y` (X displays).
    func brightness(atX x: Int, y: Int) async throws -> UInt8 {
        let file = "\(directory)/pixel-\(UUID().uuidString).gray"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await run("import", ["-window", "root", "-crop", "1x1+\(x)+\(y)", "-depth", "8", "gray:\(file)"])
        return FileManager.default.contents(atPath: file)?.first ?? 0
    }

    /// Where this server draws its popups on the 1280x800 screen: a region worth a screenshot.
    public var popupRegion: (x: Int, y: Int, width: Int, height: Int) {
        switch server {
        case .gnomeShell: (320, 0, 640, 200)
        case .plasma: (860, 380, 420, 380)
        case .lxqtNotificationd: (900, 380, 380, 420)
        default: (760, 0, 520, 200)
        }
    }

    /// Runs JavaScript in GNOME Shell (`org.gnome.Shell.Eval`, unlocked by the test extension) and returns its
    /// result as JSON text.
    @discardableResult
    public func gnomeEval(_ script: String) async throws -> String {
        guard server == .gnomeShell else { throw NotSupportedOnServer(description: "\(server) is not GNOME Shell") }
        let reply = try await control(
            "org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell", "Eval", [.string(script)])
        let values = try reply.arguments("bs")
        guard values[0] == .boolean(true) else {
            throw TestEnvironmentError("org.gnome.Shell.Eval failed: \(values[1].stringValue ?? "")")
        }
        return values[1].stringValue ?? ""
    }

    /// GNOME Shell: the notifications the shell holds (banner or tray), by server id → title.
    public func gnomeNotifications() async throws -> [UInt32: String] {
        let json = try await gnomeEval(
            modern == .gnomeShell48
                ? "JSON.stringify([...\(GnomeShell.daemon)._notifications].map(([id, n]) => [id, n.title]))"
                : "JSON.stringify(Object.entries(\(GnomeShell.daemon)._notifications)"
                    + ".filter(([, d]) => d.notification).map(([id, d]) => [Number(id), d.notification.title]))")
        let pairs = try JSON.decode([[JSONValue]].self, fromEvalResult: json)
        var result: [UInt32: String] = [:]
        for pair in pairs where pair.count == 2 {
            if case .number(let id) = pair[0], case .string(let title) = pair[1] { result[UInt32(id)] = title }
        }
        return result
    }

    /// The unique name that owns `org.freedesktop.Notifications` now, or nil.
    public func notificationsOwner() async throws -> String? {
        let connection = try await bus.connect()
        defer { connection.close() }
        return try await connection.bus.nameOwner(of: "org.freedesktop.Notifications")
    }

    // MARK: - Per server

    private func gnomeBanner() async throws -> [Popup] {
        let json = try await gnomeEval(
            """
            (() => { const t = Main.messageTray, b = t._banner;
              if (!b || t._notificationState !== imports.ui.messageTray.State.SHOWN) return '[]';
              const a = t._bannerBin, n = b.notification, text = l => l ? (l.clutter_text ?? l.actor?.clutter_text)?.text : null;
              const e = Object.entries(\(GnomeShell.daemon)._notifications).find(([, d]) => d.notification === n);
              return JSON.stringify([{x: a.x, y: a.y, width: a.width, height: a.height, title: text(b.titleLabel),
                body: text(b.bodyLabel), id: e ? Number(e[0]) : null}]); })()
            """)
        let list = try JSON.decode([[String: JSONValue]].self, fromEvalResult: json)
        return list.map { banner in
            Popup(
                window: "banner", x: banner["x"]?.int ?? 0, y: banner["y"]?.int ?? 0, width: banner["width"]?.int ?? 0,
                height: banner["height"]?.int ?? 0, title: banner["title"]?.string, body: banner["body"]?.string,
                serverID: banner["id"]?.int.map(UInt32.init))
        }
    }

    private func makoNotifications() async throws -> [Popup] {
        let reply = try await control(
            "org.freedesktop.Notifications", "/fr/emersion/Mako", "fr.emersion.Mako", "ListNotifications")
        let list = try reply.arguments("aa{sv}")[0].arrayValue ?? []
        return list.compactMap { entry -> Popup? in
            guard let fields = entry.variantDictionaryValue else { return nil }
            return Popup(
                window: "mako", title: fields["summary"]?.stringValue, body: fields["body"]?.stringValue,
                serverID: fields["id"]?.uint32Value)
        }.sorted { ($0.serverID ?? 0) < ($1.serverID ?? 0) }
    }

    /// Visible top-level windows narrower than the screen and larger than GTK's 1x1 helpers.
    private func windows(matching search: [String]) async throws -> [Popup] {
        let environment = self.environment
        let result = try await onOwnThread {
            try Tools.run(
                "xdotool", ["search", "--onlyvisible"] + search + ["getwindowgeometry", "--shell", "%@"],
                environment: environment)
        }
        guard result.status == 0 else { return [] }  // exits 1 when nothing matches
        var popups: [Popup] = []
        var fields: [String: String] = [:]
        func flush() {
            if let window = fields["WINDOW"], let x = Int(fields["X"] ?? ""), let y = Int(fields["Y"] ?? ""),
                let width = Int(fields["WIDTH"] ?? ""), let height = Int(fields["HEIGHT"] ?? ""),
                width > 1, height > 1, width < Self.screen.width
            {
                popups.append(Popup(window: window, x: x, y: y, width: width, height: height))
            }
            fields = [:]
        }
        for line in result.output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if parts[0] == "WINDOW" { flush() }
            fields[parts[0]] = parts[1]
        }
        flush()
        return popups.sorted { $0.width * $0.height < $1.width * $1.height }
    }

    /// lxqt-notificationd draws every popup in ONE window (bottom right, newest at the bottom): the popups are the
    /// light blocks of a pixel column near its left edge, separated by dark gaps.
    private func lxqtPopups() async throws -> [Popup] {
        guard let window = try await windows(matching: ["--class", "lxqt-notificationd"]).last else { return [] }
        let file = "\(directory)/lxqt-column-\(UUID().uuidString).gray"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await run(
            "import",
            [
                "-window", "root", "-crop", "1x\(window.height)+\(window.x + 3)+\(window.y)", "-depth", "8",
                "gray:\(file)",
            ])
        let column = [UInt8](FileManager.default.contents(atPath: file) ?? Data())
        var popups: [Popup] = []
        var start: Int?
        for (row, value) in (column + [0]).enumerated() {
            if value > 128, start == nil { start = row }
            if value <= 128, let top = start {
                if row - top >= 20 {
                    popups.append(
                        Popup(
                            window: window.window, x: window.x, y: window.y + top, width: window.width,
                            height: row - top))
                }
                start = nil
            }
        }
        return popups
    }

    /// Clicks the button (or the body) for action `key` on the newest popup of a click server.
    private func clickAction(_ key: String, actionKeys: [String]) async throws {
        guard actionKeys.contains(key) else {
            throw TestEnvironmentError("the notification has no action \"\(key)\" (actions: \(actionKeys))")
        }
        let popup = try await newestPopup()
        let bodyIsDefault = server != .xfce4Notifyd && server != .lxqtNotificationd
        if key == "default", bodyIsDefault {
            try await click(
                server == .plasma
                    ? (popup.x + popup.width / 3, popup.y + 45) : (popup.x + 40, popup.y + popup.height / 2))
            return
        }
        let buttons = actionKeys.filter { !($0 == "default" && bodyIsDefault) }
        let index = buttons.firstIndex(of: key)!
        let fromRight = buttons.count - 1 - index
        let (right, bottom) = (popup.x + popup.width, popup.y + popup.height)
        let point: (Int, Int) =
            switch server {
            case .notificationDaemon: (right - 88 - fromRight * 90, bottom - 40)
            case .xfce4Notifyd: (right - 57 - fromRight * 92, bottom - 31)
            case .mateNotificationDaemon: (right - 72 - fromRight * 90, bottom - 28)
            case .plasma: (right - 32 - fromRight * 90, bottom - 20)
            // lxqt shares the row between the buttons (measured for two: 90 and 196 px from the left edge).
            default: (popup.x + 37 + (2 * index + 1) * 212 / (2 * buttons.count), bottom - 32)
            }
        try await click(point)
    }

    /// Clicks at `point` with the left button, then parks the pointer in the bottom-left corner.
    func click(_ point: (x: Int, y: Int)) async throws {
        try await run(
            "xdotool",
            [
                "mousemove", "--sync", "\(point.x)", "\(point.y)", "click", "1", "mousemove", "0",
                "\(Self.screen.height - 1)",
            ])
    }

    /// Calls a method of a server's control interface on this desktop's bus.
    func control(
        _ destination: BusName, _ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName,
        _ arguments: [DBusValue] = []
    ) async throws -> DBusMessage {
        let connection = try await bus.connect()
        defer { connection.close() }
        return try await connection.call(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments,
            timeout: .seconds(10))
    }
}

extension GnomeShell {
    /// The shell's `org.freedesktop.Notifications` implementation (its `_notifications` map: id → details).
    static let daemon = "Main.notificationDaemon._fdoNotificationDaemon"

    /// JavaScript for the banner showing notification `id`; throws (in the shell) when it is not on screen.
    static func banner(of id: UInt32) -> String {
        """
        ((d) => { const b = Main.messageTray._banner;
          if (!d || !d.notification) throw new Error('no notification \(id)');
          if (!b || b.notification !== d.notification) throw new Error('notification \(id) is not on the banner');
          return b; })(\(daemon)._notifications[\(id)])
        """
    }
}

/// The little JSON the tests exchange with GNOME Shell.
enum JSONValue: Decodable, Sendable {
    case number(Double)
    case string(String)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else {
            self = .other
        }
    }

    var int: Int? { if case .number(let value) = self { Int(value) } else { nil } }
    var string: String? { if case .string(let value) = self { value } else { nil } }
}

enum JSON {
    /// `text` as a JavaScript string literal.
    static func string(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }

    /// Decodes what `Eval` returned for `JSON.stringify(…)`: Eval returns its result JSON-encoded, i.e. a JSON
    /// string whose content is the JSON.
    static func decode<T: Decodable>(_ type: T.Type, fromEvalResult result: String) throws -> T {
        let inner = try JSONDecoder().decode(String.self, from: Data(result.utf8))
        return try JSONDecoder().decode(type, from: Data(inner.utf8))
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
