/// What each notification server does differently from the specification, in plain words, with what ToastKit does
/// about it: the one list `toastkit doctor` prints and an app can show in its own diagnostics. Each entry comes from
/// the conformance suite on the server's Debian 12 version, or from the server's source
/// (`../shared/research/rich-features.md`, `docs/conformance.md`).
public struct ServerQuirk: Sendable, Hashable, Codable {
    /// A short stable name (`ignores-expire-timeout`), for scripts.
    public var key: String
    /// What the server does, and what ToastKit does about it.
    public var text: String

    /// Creates the value.
    public init(key: String, text: String) {
        self.key = key
        self.text = text
    }
}

extension ServerCapabilities {
    /// Whether the server sends its signals only to the connection that called `Notify` (dunst): a presenter that
    /// takes over another process's notification must send it again to hear what becomes of it.
    package var signalsOnlyToSender: Bool {
        quirks.contains { $0.key == "signals-to-sender" }
    }

    /// The server's known quirks (empty for a server ToastKit knows nothing odd about).
    public var quirks: [ServerQuirk] {
        guard let information else { return [] }
        var quirks: [ServerQuirk] = []
        func add(_ key: String, _ text: String) { quirks.append(ServerQuirk(key: key, text: text)) }
        switch (information.name, information.vendor) {
        case ("gnome-shell", _):
            add(
                "ignores-expire-timeout",
                "GNOME Shell ignores expire_timeout and keeps a banner until the person acts: a toast with a duration "
                    + "is closed on time by its sender, so a script's durations need the toastkit agent")
            add(
                "keeps-first-click-handler",
                "GNOME Shell keeps the click handler of a notification's first Notify: a tap added by an update "
                    + "takes effect only on a new notification, which ToastKit sends instead")
            add(
                "closes-from-sender-only",
                "GNOME Shell takes CloseNotification only from the connection that sent the notification")
            if let major = information.majorVersion, major >= 46 {
                add(
                    "closes-when-sender-leaves",
                    "GNOME \(major) closes a notification when the connection that sent it leaves the bus: toasts "
                        + "sent through the toastkit agent stay, a plain `notify-send` may vanish at once")
                add(
                    "app-from-desktop-entry",
                    "GNOME \(major) finds the app by the sender's process, then the desktop-entry hint, then "
                        + "`<app name>.desktop`: that app's settings (banners, sound) and grouping apply; send "
                        + "`-h string:desktop-entry:NAME` (the .desktop file's name) to choose it")
            }
        case ("Plasma", _):
            add(
                "refuses-repeat",
                "Plasma refuses a notification identical to one it showed less than a second before: ToastKit "
                    + "keeps the one on screen for an unchanged update")
            add(
                "progress-through-jobs",
                "Plasma draws progress only through its JobView service, not the `value` hint: a process that stays "
                    + "(the agent, an app) draws it there; one that exits (send without the agent) as text")
        case ("mako", _):
            add("int32-value", "mako refuses a whole Notify whose `value` hint is not an int32: ToastKit sends int32")
        case ("Xfce Notify Daemon", _):
            add(
                "gauge-hides-text",
                "xfce4-notifyd hides the body when it draws a `value` gauge")
            add(
                "drops-in-dnd",
                "xfce4-notifyd drops notifications while Do Not Disturb is on and never says so: a waited toast "
                    + "ends at its duration")
        case ("Notification Daemon", "MATE"):
            add("claims-sound", "MATE's daemon lists the `sound` capability but plays only sound files")
            add(
                "closes-when-busy",
                "MATE's daemon closes a timed notification (reason 4) while the screen saver is on or an app is "
                    + "fullscreen")
        case ("Notification Daemon", _):
            add("claims-sound", "notification-daemon lists the `sound` capability and plays nothing")
            add("never-expires-offscreen", "notification-daemon expires nothing while no pointer moves (Xvfb)")
        case ("lxqt-notificationd", _):
            add(
                "timeout-zero-crash",
                "lxqt-notificationd crashes when an update sets expire_timeout to 0: ToastKit sends 24.8 days for "
                    + "\"never\"")
            add("early-timers", "lxqt-notificationd's timers fire up to 5 % early: ToastKit asks for 5 % more")
        case ("dunst", _):
            add(
                "signals-to-sender",
                "dunst sends its signals only to the connection that called Notify: ToastKit listens on that one")
        case ("SwayNotificationCenter", _):
            add(
                "no-popups-while-open",
                "SwayNotificationCenter shows no popup while its control centre is open")
        default:
            break
        }
        return quirks
    }
}

extension ServerInformation {
    /// The leading number of the version (`46` for "46.2"), if it has one.
    public var majorVersion: Int? {
        Int(version.prefix { $0.isNumber })
    }
}
