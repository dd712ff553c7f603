public import DBus
import FoundationEssentials

/// How the presenters talk to the notification server or the notification portal.
///
/// ``backend`` chooses between them (``NotificationBackend/automatic`` by default: the portal in a Flatpak or Snap
/// sandbox). The app's identity (``appName``, ``appIcon``, ``desktopEntry``) is for the notification server; the portal
/// names the app itself (its Flatpak or Snap id) and ignores them.
public struct PresenterConfiguration: Sendable {
    /// What to do with markup in a toast's message.
    public enum Markup: Sendable, Hashable {
        /// The message is plain text: escaped for servers that parse body markup (the default).
        case plainText
        /// The message may use `<b> <i> <u> <a href> <img>`: other markup is escaped; for servers without
        /// `body-markup` all tags are stripped.
        case basic
    }

    /// `app_name`: the application's name as the server shows it.
    public var appName: String
    /// `app_icon`: the application's icon name or path; the toast's own icon goes in the `image-path` hint.
    public var appIcon: String?
    /// The `desktop-entry` hint: the application's `.desktop` file name without the extension.
    public var desktopEntry: String?
    /// Which bus to use (the session bus by default).
    public var bus: BusAddress
    /// How long a call to the server may take before the toast is reported as failed.
    public var callTimeout: Duration
    /// Markup in messages.
    public var markup: Markup
    /// Messages longer than this many UTF-8 bytes are cut (with an ellipsis, and a `degraded` report).
    public var maximumMessageLength: Int
    /// Pause the center's timers while the screen saver is active (`org.freedesktop.ScreenSaver`).
    public var pausesWhileScreenLocked: Bool
    /// Listen to the server: its signals (actions, closes) and its restarts. A tool that shows a toast and exits
    /// at once can turn this off and save the bus round trips of subscribing.
    public var listensForSignals: Bool
    /// The shortest time between two `Notify` calls that update one toast on the notification server. Updates that
    /// come faster (a progress counter in a loop) merge: the newest goes out when the time is up, and the last one
    /// always does. A server spends 10–22 ms of CPU drawing each notification (docs/benchmarks.md, P6), so the
    /// default, 25 ms, is about what it can draw; a toast's first `Notify`, and its close, never wait. Zero (or less)
    /// turns the bound off (updates are then bounded only by round trips: one `Notify` on its way per toast).
    public var minimumUpdateInterval: Duration
    /// Which service shows the toasts: the notification server, the notification portal, or the one that fits the
    /// process (``NotificationBackend/automatic``, the default). `ToastCenter()` and `toastkit send` follow it; the
    /// presenter classes themselves always use their own service.
    public var backend: NotificationBackend
    /// Follow the desktop's Do Not Disturb where the server lets it be read (dunst, Plasma, SwayNotificationCenter,
    /// mako and xfce4-notifyd over D-Bus; GNOME Shell and MATE in GSettings, LXQt in its settings file): the presenter
    /// reads it when it links to a server, follows its changes, and reports it
    /// to the center, which then holds, drops or sends toasts by their ``ToastModel/ToastMessage/doNotDisturb``
    /// policy. The center hands the presenter nothing until the first reading (one more round trip to the server on
    /// the first toast). True by default.
    public var followsDoNotDisturb = true
    /// Draw a toast's progress with Plasma's job service where it runs (`org.kde.JobViewServer`): a popup with a
    /// real bar, for a toast with progress and no actions; elsewhere, and for other toasts, a notification (the
    /// `value` hint, or a bar in text). A job view lasts only as long as this process's connection — Plasma shows
    /// a failed job when it leaves the bus — so a process that shows a toast and exits turns this off (the `toastkit`
    /// commands do; their agent keeps it on). True by default.
    public var drawsProgressAsJobs = true
    /// The environment GSettings and settings files are read in for Do Not Disturb (``DoNotDisturbSettings``): nil,
    /// this process's.
    package var settingsEnvironment: [String: String]? = nil
    /// How old a Do Not Disturb reading of a server that announces no change (mako, LXQt, GSettings in a keyfile) may
    /// be when a new toast comes before it is read again (``DesktopPresenterMachine``); two seconds, as the recheck
    /// while it is on.
    package var doNotDisturbStaleAfter: Duration = DesktopPresenterMachine.doNotDisturbRecheckInterval
    /// How a toast's sound is played where the server plays none (``SoundPlayer/automatic``: libcanberra or a player
    /// program). Sounds are played once, when a toast first appears with them, never while Do Not Disturb is on.
    public var soundPlayer = SoundPlayer.automatic
    /// How the text of a reply action is asked for where the service draws no reply field of its own
    /// (``ReplyPrompter/automatic``: `TOASTKIT_REPLY_PROMPT`, else kdialog, zenity or yad).
    public var replyPrompter = ReplyPrompter.automatic

    /// Creates a configuration; the app name defaults to the program's name.
    public init(
        appName: String = PresenterConfiguration.programName,
        appIcon: String? = nil,
        desktopEntry: String? = nil,
        bus: BusAddress = .session,
        callTimeout: Duration = .seconds(10),
        markup: Markup = .plainText,
        maximumMessageLength: Int = 64 * 1024,
        pausesWhileScreenLocked: Bool = true,
        listensForSignals: Bool = true,
        backend: NotificationBackend = .automatic,
        minimumUpdateInterval: Duration = .milliseconds(25)
    ) {
        self.minimumUpdateInterval = minimumUpdateInterval
        self.listensForSignals = listensForSignals
        self.backend = backend
        self.appName = appName
        self.appIcon = appIcon
        self.desktopEntry = desktopEntry
        self.bus = bus
        self.callTimeout = callTimeout
        self.markup = markup
        self.maximumMessageLength = maximumMessageLength
        self.pausesWhileScreenLocked = pausesWhileScreenLocked
    }

    /// The running program's file name.
    public static var programName: String {
        let name = (CommandLine.arguments.first ?? "").split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? "ToastKit" : name
    }
}

/// The name ``PresenterConfiguration`` had while only the notification server's presenter used it.
@available(*, deprecated, renamed: "PresenterConfiguration")
public typealias DesktopPresenterConfiguration = PresenterConfiguration
