import ToastModel

/// Where an `--on-action` command's output goes, and the environment it runs with: its sender's, never the agent's.
package enum ActionEnvironment {
    /// The log of the commands' output: `$XDG_STATE_HOME/toastkit/actions.log` (`~/.local/state/toastkit/`),
    /// or the private runtime folder when neither is set.
    package static func logPath(environment: [String: String]) -> String {
        (PrivateFiles.stateFolder(environment: environment) ?? RuntimeFolder.path(environment: environment))
            + "/actions.log"
    }

    /// The variables an `--on-action` command needs from its sender, and nothing more is ever taken from the agent:
    /// `send` captures its whole environment (and working folder) for a toast with commands; a caller of `Present`
    /// that gives none gets these from the agent, so the command can still reach the desktop.
    package static let sessionVariables = [
        "HOME", "PATH", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "LANG",
    ]

    /// What a command needs to open a window, taken from the session as a whole when its sender had none of them.
    package static let displayVariables = ["DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY"]

    /// What a command needs to reach the session bus, each taken from the session when its sender had none.
    package static let busVariables = ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"]

    /// The environment of a command of `request`: the sender's own, captured when it sent the toast (with the
    /// session's ``displayVariables`` from `fallback` when it had no display, and each of ``busVariables`` it lacked);
    /// for a caller that sent none, `fallback`'s ``sessionVariables`` only; then `TOASTKIT_ACTION`, `TOASTKIT_ID` and
    /// `TOASTKIT_ACTIVATION_TOKEN` (empty when the server sent none), and `TOASTKIT_REPLY`, the text sent with a reply
    /// action (`--reply`).
    package static func environment(
        of request: AgentRequest, action: String, toastID: String, activationToken: String?, reply: String? = nil,
        fallback: [String: String]
    ) -> [String: String] {
        var environment =
            request.environment
            ?? fallback.filter { sessionVariables.contains($0.key) }
        // A sender without the session's display and bus (a cron job, a service, `env -i`) gets the session's, as
        // the agent has them: a click's command opens its window and reaches the bus as one run from the desktop.
        func missing(_ name: String) -> Bool { environment[name]?.isEmpty ?? true }
        if missing("DISPLAY"), missing("WAYLAND_DISPLAY") {
            for name in displayVariables { environment[name] = fallback[name] ?? environment[name] }
        }
        for name in busVariables where missing(name) { environment[name] = fallback[name] ?? environment[name] }
        environment["TOASTKIT_ACTION"] = action
        environment["TOASTKIT_ID"] = toastID
        environment["TOASTKIT_ACTIVATION_TOKEN"] = activationToken ?? ""
        // Set or removed: a sender's own TOASTKIT_REPLY (a send run by an earlier reply's command) is never passed on.
        environment["TOASTKIT_REPLY"] = reply
        return environment
    }
}
