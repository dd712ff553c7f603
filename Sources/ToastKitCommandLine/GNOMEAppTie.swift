// Which toasts GNOME 46 and later closes when the process that sent them leaves the bus (issue 41): GNOME ties a
// notification to an app by its sender's window, its `desktop-entry` hint, or an installed `<app name>.desktop`, and
// closes every notification of that app (reason 2) when the sender goes. A `send` that would show such a toast itself
// and exit gives it to the agent instead, which stays; `--no-agent` shows it and says it will vanish.
import FoundationEssentials
import FreedesktopNotifications
import ToastKitAgent

enum GNOMEAppTie {
    /// The app GNOME would tie a toast of `options` to by what `send` says (a script has no window): its
    /// `desktop-entry` hint, else its app name when `<name>.desktop` is installed (as GNOME looks it up, in
    /// `$XDG_DATA_HOME/applications` and each `$XDG_DATA_DIRS/applications`); nil when neither. Only for toastkit's
    /// own command line: the notify-send and dunstify lines send what those tools send.
    static func app(of options: SendOptions, environment: CommandEnvironment) -> String? {
        guard options.dialect == .toastkit else { return nil }
        if let entry = options.hints.last(where: { $0.name == "desktop-entry" }), case .string(let name) = entry.value,
            !name.isEmpty
        {
            return name
        }
        guard let name = options.appName, !name.isEmpty, !name.contains("/") else { return nil }
        let home = environment.variable("HOME").flatMap { $0.isEmpty ? nil : $0 }
        let dataHome =
            environment.variable("XDG_DATA_HOME").flatMap { $0.isEmpty ? nil : $0 } ?? home.map { "\($0)/.local/share" }
        let dataDirs =
            (environment.variable("XDG_DATA_DIRS").flatMap { $0.isEmpty ? nil : $0 }
            ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        for folder in ([dataHome].compactMap { $0 } + dataDirs) where folder.hasPrefix("/") {
            for candidate in Set([name, name.lowercased()])
            where FileManager.default.fileExists(atPath: "\(folder)/applications/\(candidate).desktop") {
                return candidate
            }
        }
        return nil
    }

    /// Whether the server `information` names closes an app's notifications when their sender leaves the bus
    /// (GNOME Shell 46 and later: ``ServerQuirk`` `closes-when-sender-leaves`).
    static func closesOnExit(_ capabilities: ServerCapabilities) -> Bool {
        capabilities.quirks.contains { $0.key == "closes-when-sender-leaves" }
    }

    /// The warning for a toast shown without the agent that GNOME will close as `send` exits, with why the agent was
    /// not used: `reason` (`--no-agent`, `TOASTKIT_NO_AGENT is set`, or that it could not be reached).
    static func warning(app: String, _ capabilities: ServerCapabilities, reason: String) -> String {
        let server =
            capabilities.information.map { "GNOME \($0.majorVersion.map(String.init) ?? $0.version)" } ?? "GNOME"
        return "\(server) ties this toast to the app \"\(app)\" and closes it as soon as toastkit exits (the toast "
            + "agent, which would keep it, is not used: \(reason))"
    }
}
