public import DBus
public import ToastModel

/// Whether the desktop holds back or hides toasts now ("do not disturb"), as far as the server lets it be read.
public enum DoNotDisturbState: String, Sendable, Hashable, Codable {
    /// Toasts pop up.
    case off
    /// Toasts do not pop up (held, hidden or dropped: ``DoNotDisturbReading/effect`` says which).
    case on
    /// The server has no such state, or it cannot be read from here.
    case unknown
}

/// One reading of the Do Not Disturb state: the state, where it was read, and what the server does with a toast
/// meanwhile.
public struct DoNotDisturbReading: Sendable, Hashable, Codable {
    /// The state.
    public var state: DoNotDisturbState
    /// Where it was read (`dunst: org.dunstproject.cmd0.paused`), or why it could not be.
    public var source: String
    /// What happens to a toast while it is on (nil when off or unknown).
    public var effect: String?
    /// Whether critical toasts still pop up while it is on.
    public var criticalBypasses: Bool

    /// Creates the value.
    public init(state: DoNotDisturbState, source: String, effect: String? = nil, criticalBypasses: Bool = false) {
        self.state = state
        self.source = source
        self.effect = effect
        self.criticalBypasses = criticalBypasses
    }
}

/// How to read a server's Do Not Disturb state over D-Bus: one method call and what its answer means. Servers that
/// keep the state elsewhere (GNOME and MATE in GSettings, LXQt in a file) have none; their readers live with the
/// tools that can run `gsettings` or read the user's files.
public struct DoNotDisturbQuery: Sendable {
    /// The call to make on the session bus.
    public let call: DBusMethodCall
    /// Where the state is read, for the reading's ``DoNotDisturbReading/source``.
    public let source: String
    private let decode: @Sendable (DBusMessage) -> DoNotDisturbReading?
    /// The error that means "never set", which is off (xfconf's `PropertyNotFound`).
    private var unsetError: String?

    /// What the answer to ``call`` says (an error, or an answer of the wrong shape, is `unknown`).
    public func reading(from reply: Result<DBusMessage, DBusError>) -> DoNotDisturbReading {
        switch reply {
        case .success(let message):
            decode(message) ?? DoNotDisturbReading(state: .unknown, source: "\(source): an answer of another shape")
        case .failure(let error) where error.name.rawValue == unsetError:
            DoNotDisturbReading(state: .off, source: "\(source) (never set)")
        case .failure(let error):
            DoNotDisturbReading(state: .unknown, source: "\(source): \(error.reason)")
        }
    }

    /// The query for the server `information` describes, or nil when it has none on D-Bus.
    public static func forServer(_ information: ServerInformation) -> DoNotDisturbQuery? {
        switch information.name {
        case "dunst":
            return property(
                "dunst", destination: NotificationsClient.busName, path: NotificationsClient.path,
                interface: "org.dunstproject.cmd0", name: "paused",
                effect: "dunst holds toasts and shows them when it resumes (`dunstctl set-paused false`)",
                criticalBypasses: false)
        case "Plasma":
            return property(
                "Plasma", destination: NotificationsClient.busName, path: NotificationsClient.path,
                interface: "org.freedesktop.Notifications", name: "Inhibited",
                effect: "Plasma keeps toasts in its history without a popup", criticalBypasses: true)
        case "SwayNotificationCenter":
            let call = DBusMethodCall(
                destination: "org.erikreider.swaync.cc", path: "/org/erikreider/swaync/cc",
                interface: "org.erikreider.swaync.cc", member: "GetDnd")
            let source = "SwayNotificationCenter: org.erikreider.swaync.cc.GetDnd"
            return DoNotDisturbQuery(call: call, source: source) { reply in
                guard let on = (try? reply.arguments("b"))?.first?.boolValue else { return nil }
                return reading(
                    on, source: source,
                    effect: "SwayNotificationCenter puts toasts in its control centre without a popup",
                    criticalBypasses: true)
            }
        case "Budgie Notification Server":
            let call = DBusMethodCall(
                destination: budgieDispatcher, path: "/org/budgie_desktop/Notifications",
                interface: "org.buddiesofbudgie.budgie.Dispatcher", member: "GetDoNotDisturb")
            let source = "Budgie: org.buddiesofbudgie.budgie.Dispatcher.GetDoNotDisturb"
            return DoNotDisturbQuery(call: call, source: source) { reply in
                guard let on = (try? reply.arguments("b"))?.first?.boolValue else { return nil }
                return reading(
                    on, source: source, effect: "Budgie shows no popup; the toast goes to Raven's list",
                    criticalBypasses: true)
            }
        case "mako":
            let call = DBusMethodCall(
                destination: NotificationsClient.busName, path: "/fr/emersion/Mako", interface: "fr.emersion.Mako",
                member: "ListModes")
            let source = "mako: fr.emersion.Mako.ListModes"
            return DoNotDisturbQuery(call: call, source: source) { reply in
                guard let modes = (try? reply.arguments("as"))?.first?.stringsValue else { return nil }
                // mako's modes mean what its configuration says; "do-not-disturb" is its manual's convention.
                let quiet = modes.first { ["do-not-disturb", "dnd", "silent", "away"].contains($0) }
                return reading(
                    quiet != nil, source: "\(source) (modes: \(modes.joined(separator: ", ")))",
                    effect: quiet.map { "mako is in mode \"\($0)\": toasts do what its configuration says for it" },
                    criticalBypasses: false)
            }
        case "Xfce Notify Daemon":
            let call = DBusMethodCall(
                destination: "org.xfce.Xfconf", path: "/org/xfce/Xfconf", interface: "org.xfce.Xfconf",
                member: "GetProperty", arguments: [.string("xfce4-notifyd"), .string("/do-not-disturb")])
            let source = "xfce4-notifyd: xfconf /do-not-disturb"
            var query = DoNotDisturbQuery(call: call, source: source) { reply in
                guard let on = (try? reply.arguments("v"))?.first?.variantValue?.boolValue else { return nil }
                return reading(
                    on, source: source, effect: "xfce4-notifyd drops toasts and never says so",
                    criticalBypasses: true)
            }
            query.unsetError = "org.xfce.Xfconf.Error.PropertyNotFound"
            return query
        default:
            return nil
        }
    }

    /// Budgie's notification dispatcher, beside its server (budgie-daemon owns both names).
    static let budgieDispatcher: BusName = "org.budgie_desktop.Notifications"

    private static func property(
        _ server: String, destination: BusName, path: ObjectPath, interface: String, name: String, effect: String,
        criticalBypasses: Bool
    ) -> DoNotDisturbQuery {
        let call = DBusMethodCall(
            destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
            arguments: [.string(interface), .string(name)])
        let source = "\(server): \(interface).\(name)"
        return DoNotDisturbQuery(call: call, source: source) { reply in
            guard let on = (try? reply.arguments("v"))?.first?.variantValue?.boolValue else { return nil }
            return reading(on, source: source, effect: effect, criticalBypasses: criticalBypasses)
        }
    }

    private static func reading(_ on: Bool, source: String, effect: String?, criticalBypasses: Bool)
        -> DoNotDisturbReading
    {
        DoNotDisturbReading(
            state: on ? .on : .off, source: source, effect: on ? effect : nil, criticalBypasses: criticalBypasses)
    }

    private init(
        call: DBusMethodCall, source: String, decode: @escaping @Sendable (DBusMessage) -> DoNotDisturbReading?
    ) {
        self.call = call
        self.source = source
        self.decode = decode
    }
}

extension DoNotDisturbReading {
    /// The reading as the model takes it: on, or off (unknown counts as off: nothing is held back on a guess).
    public var toastDoNotDisturb: ToastDoNotDisturb {
        var effect = self.effect
        if state == .on, let said = effect {
            effect = said + (criticalBypasses ? "; critical toasts still pop up" : "; critical toasts too")
        }
        return ToastDoNotDisturb(isOn: state == .on, source: source, serverEffect: effect)
    }
}

extension DoNotDisturbQuery {
    /// The signals that say a server's Do Not Disturb may have changed, each naming its sender: dunst's and Plasma's
    /// `PropertiesChanged` (dunst sends it only when the pause is set over D-Bus, as `dunstctl` does; not for
    /// SIGUSR1), SwayNotificationCenter's `Subscribe`, Budgie's `DoNotDisturbChanged`, xfconf's `PropertyChanged` for
    /// xfce4-notifyd, dconf's `Notify`
    /// for GNOME Shell's and MATE's keys (GSettings' usual backend). mako, LXQt and GSettings in a keyfile say
    /// nothing (``announcesChanges(of:gsettingsBackend:)``): read when the presenter links to the server, every two
    /// seconds while it is on, and while it is off before a new toast once the last reading is two seconds old.
    static let changeRules: [MatchRule] = [
        MatchRule(
            sender: NotificationsClient.busName, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged", path: NotificationsClient.path),
        MatchRule(sender: "org.erikreider.swaync.cc", interface: "org.erikreider.swaync.cc", member: "Subscribe"),
        MatchRule(
            sender: budgieDispatcher, interface: "org.buddiesofbudgie.budgie.Dispatcher", member: "DoNotDisturbChanged"),
        MatchRule(
            sender: "org.xfce.Xfconf", interface: "org.xfce.Xfconf", member: "PropertyChanged",
            arguments: [0: "xfce4-notifyd"]),
        MatchRule(sender: "ca.desrt.dconf", interface: "ca.desrt.dconf.Writer", member: "Notify"),
    ]

    /// Whether the server `information` names says when its Do Not Disturb changes, by a signal in ``changeRules``:
    /// mako and lxqt-notificationd never do, nor GNOME Shell's and MATE's settings in a keyfile
    /// (`GSETTINGS_BACKEND=keyfile`: no dconf to send `Notify`). A server with no Do Not Disturb to read counts as
    /// saying it (there is nothing to read again).
    package static func announcesChanges(of information: ServerInformation, gsettingsBackend: String?) -> Bool {
        switch (information.name, information.vendor) {
        case ("mako", _), ("lxqt-notificationd", _): false
        case ("gnome-shell", _), ("Notification Daemon", "MATE"): gsettingsBackend != "keyfile"
        default: true
        }
    }

    /// The dconf folders of the GSettings keys GNOME Shell and MATE keep Do Not Disturb in
    /// (``DoNotDisturbSettings``): a dconf `Notify` under one of them is a change.
    static let dconfFolders = ["/org/gnome/desktop/notifications/", "/org/mate/notification-daemon/"]

    /// Whether `message` is one of the ``changeRules`` signals.
    static func isChange(_ message: DBusMessage) -> Bool {
        switch (message.interface, message.member) {
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"), ("org.erikreider.swaync.cc", "Subscribe"),
            ("org.buddiesofbudgie.budgie.Dispatcher", "DoNotDisturbChanged"), ("org.xfce.Xfconf", "PropertyChanged"):
            true
        case ("ca.desrt.dconf.Writer", "Notify"):
            // (prefix, changes, tag): a change to a key under the prefix, or to the folder itself.
            if let prefix = (try? message.arguments("sass"))?.first?.stringValue {
                dconfFolders.contains { prefix.hasPrefix($0) || $0.hasPrefix(prefix) }
            } else {
                false
            }
        default: false
        }
    }
}
