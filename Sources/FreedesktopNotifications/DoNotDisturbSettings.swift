// The Do Not Disturb state of the servers that keep it in the user's settings rather than on D-Bus: GNOME Shell and
// MATE in GSettings (read with `gsettings`), lxqt-notificationd in its configuration file. One reader for the
// presenters and for `toastkit doctor`.

/// Reads Do Not Disturb where a server keeps it in settings. Blocking (a `gsettings` run, at most two seconds): call it
/// off the I/O thread.
package enum DoNotDisturbSettings {
    /// The reading for the server `information` describes, in `environment` (the user's `HOME`, `XDG_CONFIG_HOME`,
    /// `GSETTINGS_BACKEND`, `PATH`); nil when that server keeps no such setting.
    package static func reading(
        for information: ServerInformation, environment: [String: String]
    ) -> DoNotDisturbReading? {
        switch (information.name, information.vendor) {
        case ("gnome-shell", _):
            return gsettings(
                "org.gnome.desktop.notifications", "show-banners", onWhen: "false", server: "GNOME Shell",
                effect: "GNOME Shell puts toasts in its message tray without a banner or sound",
                criticalBypasses: true, environment: environment)
        case ("Notification Daemon", "MATE"):
            return gsettings(
                "org.mate.NotificationDaemon", "do-not-disturb", onWhen: "true", server: "MATE",
                effect: "MATE's daemon shows nothing and says nothing", criticalBypasses: false,
                environment: environment)
        case ("lxqt-notificationd", _):
            let config =
                environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? "\(environment["HOME"] ?? "")/.config"
            let path = "\(config)/lxqt/notifications.conf"
            let source = "lxqt-notificationd: doNotDisturb in \(path)"
            guard let text = LocalFiles.text(of: path, limit: 65536) else {
                return DoNotDisturbReading(state: .off, source: "\(source) (no such file: the default)")
            }
            let on = text.split(separator: "\n").contains {
                $0.filter { $0 != " " && $0 != "\t" && $0 != "\r" }.lowercased() == "donotdisturb=true"
            }
            return DoNotDisturbReading(
                state: on ? .on : .off, source: source,
                effect: on ? "lxqt-notificationd hides toasts, and reports them expired when their time runs" : nil)
        default:
            return nil
        }
    }

    /// Reads a boolean GSettings key with `gsettings get` (bounded; a missing `gsettings` makes it unknown).
    private static func gsettings(
        _ schema: String, _ key: String, onWhen value: String, server: String, effect: String,
        criticalBypasses: Bool, environment: [String: String]
    ) -> DoNotDisturbReading {
        let source = "\(server): gsettings \(schema) \(key)"
        guard let output = Subprocess.output(of: ["gsettings", "get", schema, key], environment: environment) else {
            return DoNotDisturbReading(state: .unknown, source: "\(source): `gsettings` did not answer")
        }
        var answer = Substring(output)
        while answer.last == "\n" { answer = answer.dropLast() }
        guard answer == "true" || answer == "false" else {
            return DoNotDisturbReading(state: .unknown, source: "\(source): \(answer)")
        }
        let on = answer == value
        return DoNotDisturbReading(
            state: on ? .on : .off, source: "\(source) = \(answer)", effect: on ? effect : nil,
            criticalBypasses: criticalBypasses)
    }
}
