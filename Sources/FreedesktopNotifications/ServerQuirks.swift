/// What each notification server does differently from the specification, in plain words, with what ToastKit does
/// about it: the one list `toastkit doctor` prints and an app can show in its own diagnostics. Each entry comes from
/// the conformance suite on the server's Debian 12 version, from the 2025–2026 servers run headless from Debian 13
/// and testing (GNOME 48 and 50, Plasma 6.3 and 6.7, Cinnamon 6.4, Budgie 10.9, swaync 0.11, mako 1.10; issue 41),
/// or from the server's source (`../shared/research/rich-features.md`, `docs/conformance.md`). An entry that a
/// version changed names that version, and applies from it on.
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
            let major = information.majorVersion ?? 0
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
                "GNOME Shell takes CloseNotification only from the connection that sent the notification while that "
                    + "connection is on the bus (from any connection once it left)")
            if major >= 46 {
                add(
                    "closes-when-sender-leaves",
                    "GNOME \(major) ties a notification to an app by its sender's window, its desktop-entry hint or an "
                        + "existing `<app name>.desktop`, and when the first sender of that app leaves the bus it "
                        + "closes every notification of that app (reason 2, as if dismissed): toasts sent through the "
                        + "toastkit agent stay while it runs; a plain `notify-send` GNOME ties to no app stays")
                add(
                    "app-from-desktop-entry",
                    "GNOME \(major) finds the app by the sender's process, then the desktop-entry hint, then "
                        + "`<app name>.desktop`: that app's settings (banners, sound) and grouping apply; send "
                        + "`-h string:desktop-entry:NAME` (the .desktop file's name) to choose it")
            }
            if major >= 50 {
                add(
                    "activation-token",
                    "GNOME \(major) sends each ActionInvoked and NotificationClosed once, with an ActivationToken "
                        + "before a click's ActionInvoked: ToastKit passes the token to the click's handler")
            } else {
                add(
                    "signals-twice",
                    "GNOME Shell before 50 sends each ActionInvoked and NotificationClosed twice: ToastKit counts "
                        + "one click and one end")
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
            if let major = information.majorVersion, major >= 6 {
                add(
                    "closes-timed-out-popup",
                    "Plasma \(major) closes a notification whose popup timed out (NotificationClosed reason 1; 5.27 "
                        + "kept it in its history without a signal): a toast's end is its expiry, as ToastKit reports")
            }
            if information.versionAtLeast(6, 7) {
                add(
                    "plays-sound",
                    "Plasma 6.7 plays the sound-name hint itself (it lists the `sound` capability): ToastKit plays "
                        + "none of its own there")
            }
        case ("cinnamon", _):
            add(
                "ignores-expire-timeout",
                "Cinnamon ignores expire_timeout (unless its remove-old setting is on): a popup moves to the panel's "
                    + "list after 4 s without a signal, so a toast's duration is kept by its sender closing it on "
                    + "time (the toastkit agent for a script)")
            add("one-popup-at-a-time", "Cinnamon shows one popup at a time; the others wait their turn on screen")
            add(
                "closes-when-window-leaves",
                "Cinnamon ties a notification to an app only by its sender's window or tray icon, and removes it "
                    + "when that sender leaves the bus")
        case ("Budgie Notification Server", _):
            add(
                "clamps-expire-timeout",
                "Budgie keeps each popup between 6 and 12 s whatever expire_timeout asks (an indefinite one too), "
                    + "then closes it (reason 1): a shorter toast is closed on time by its sender (the toastkit agent "
                    + "for a script); a longer or indefinite one ends there, expired, and stays in Raven's list")
        case ("mako", _):
            add("int32-value", "mako refuses a whole Notify whose `value` hint is not an int32: ToastKit sends int32")
            if information.version == "0.0.0" {
                add("no-version", "mako (1.10 and later) reports its version as 0.0.0: its real version is unknown")
            }
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
            add(
                "closes-twice",
                "SwayNotificationCenter sends NotificationClosed two or more times for one notification: ToastKit "
                    + "counts one end")
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

    /// Whether the version is `major.minor` or later ("6.7.4" is 6.7 or later; "6.3.6" is not); false when the
    /// version does not start with a number.
    public func versionAtLeast(_ major: Int, _ minor: Int) -> Bool {
        let numbers = version.split(separator: ".").map { Int($0.prefix { $0.isNumber }) }
        guard let first = numbers.first ?? nil else { return false }
        let second = numbers.count > 1 ? numbers[1] ?? 0 : 0
        return (first, second) >= (major, minor)
    }
}
