import DBus
import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 40: an `--on-action` command runs exactly what its sender would have run — its program found on the
/// sender's PATH, never on the PATH of whichever script started the agent. Issue 43: a cron job's click reaches the
/// desktop (the session's display and bus, where its sender had none).
@Suite(.timeLimit(.minutes(2))) struct ActionProgramTests {
    @Test func theProgramIsFoundOnTheSendersPathNotTheAgents() async throws {
        try await withFakeServer { environment, server in
            let directory = environment.directory
            for owner in ["a", "b"] {
                let folder = "\(directory)/bin-\(owner)"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                // Close-on-exec (``AgentSafetyTests/writeExecutable(_:_:)``): Foundation's write left a descriptor that
                // a process another test started held, and running the program failed "Text file busy".
                try AgentSafetyTests.writeExecutable("\(folder)/hello", "#!/bin/sh\necho \(owner) >> \"$OUT\"\n")
            }
            let out = "\(directory)/out.txt"
            // Script A starts the agent: its PATH finds A's `hello`.
            var scriptA = environment.agentEnvironment
            scriptA["PATH"] = "\(directory)/bin-a:/usr/bin:/bin"
            scriptA["OUT"] = out
            let first = try await toastkit(
                ["send", "--id", "a", "-d", "indefinite", "-A", "x=X", "--on-action", "x=hello", "De A"],
                environment: scriptA)
            #expect(first.status == 0, "\(first.error)")
            let shownA = try await server.nextNotification()
            // Script B's click must run B's `hello`.
            var scriptB = scriptA
            scriptB["PATH"] = "\(directory)/bin-b:/usr/bin:/bin"
            let second = try await toastkit(
                ["send", "--id", "b", "-d", "indefinite", "-A", "go=Ir", "--on-action", "go=hello", "De B"],
                environment: scriptB)
            #expect(second.status == 0, "\(second.error)")
            // A person dismisses A's toast (B's, a question, is on screen beside it in a lane of its own).
            try server.emitClosed(id: shownA.id, reason: 2)
            var shown = try await server.nextNotification()
            while shown.summary != "De B" { shown = try await server.nextNotification() }
            try server.emitActionInvoked(id: shown.id, key: "go")
            let text: String
            do {
                text = try await writtenLine(of: out, within: 10, "the action's command")
            } catch {
                let logs = ["actions.log", "agent.log"].map { name in
                    let path = "\(directory)/state/toastkit/\(name)"
                    return "\(name):\n" + ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "(none)")
                }
                Issue.record("\(error)\n\(logs.joined(separator: "\n"))")
                return
            }
            #expect(text == "b\n", "the program on the sender's PATH")
        }
    }

    @Test func aCronJobsClickCommandGetsTheSessionsDisplayAndBus() async throws {
        try await withFakeServer { environment, server in
            let directory = environment.directory
            // The agent runs in the desktop session, with its display.
            var desktop = environment.agentEnvironment
            desktop["DISPLAY"] = ":42"
            desktop["WAYLAND_DISPLAY"] = nil
            let started = try await toastkit(["send", "--id", "ping", "-d", "600", "Hola"], environment: desktop)
            #expect(started.status == 0, "\(started.error)")
            let ping = try await server.nextNotification()
            // That `send` handed its toast over and returned before the agent it started had its name: the cron job's
            // `send` below would start an agent of its own (without the display) if none had it yet.
            let bus = try await environment.bus.connect()
            defer { bus.close() }
            try await bus.awaitAgent()
            let cron = try Self.cronJob(in: directory, busSocket: try environment.bus.socketPath)
            let out = "\(directory)/click.txt"
            let sent = try await toastkit(
                [
                    "send", "--id", "backup", "-d", "indefinite", "-A", "open=Abrir", "--shell", "--on-action",
                    "open=echo \"[$DISPLAY] [$DBUS_SESSION_BUS_ADDRESS]\" > \(out)", "Copia lista",
                ], environment: cron)
            #expect(sent.status == 0, "\(sent.error)")
            try server.emitClosed(id: ping.id, reason: 2)
            var shown = try await server.nextNotification()
            while shown.summary != "Copia lista" { shown = try await server.nextNotification() }
            try server.emitActionInvoked(id: shown.id, key: "open")
            let text = try await writtenLine(of: out, within: 10, "the click's command")
            // The session's bus as the agent reaches it (the same bus the cron job found at /run/user/UID/bus).
            #expect(text == "[:42] [\(environment.bus.address)]\n", "\(text)")
        }
    }

    /// No agent runs in the session: a cron job's `send` starts one, with cron's environment (no display). A click's
    /// command still opens on the desktop: it gets the display the notification server draws on (a real dunst on its
    /// X display).
    @Test func aClickCommandOfAnAgentACronJobStartedGetsTheSessionsDisplay() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let display = try #require(desktop.environment["DISPLAY"], "dunst draws on an X display")
            #expect(try await clickFromCron(desktop, watcher) == "[\(display)] []\n")
        }
    }

    /// On a systemd desktop the user manager's environment (what the desktop imported at login,
    /// `systemctl --user show-environment`) comes first.
    @Test func aClickCommandOfAnAgentACronJobStartedGetsTheUserManagersDisplay() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let manager = try await desktop.bus.connect()
            defer { manager.close() }
            var properties = DBusObject(interface: "org.freedesktop.DBus.Properties")
            properties.method("Get") { call in
                let environment = ["HOME=/root", "DISPLAY=:77", "WAYLAND_DISPLAY=wayland-7", "XAUTHORITY=/x/auth"]
                call.reply([.variant(.array("s", environment.map { .string($0) }))])
            }
            manager.export(properties, at: "/org/freedesktop/systemd1")
            #expect(try await manager.bus.requestName("org.freedesktop.systemd1", flags: .doNotQueue) == .primaryOwner)
            #expect(try await clickFromCron(desktop, watcher) == "[:77] [wayland-7]\n")
        }
    }

    /// What the command of a click on a toast a cron job sent saw of `DISPLAY` and `WAYLAND_DISPLAY`, no agent
    /// running before the job (the job's `send` starts one, with the job's environment).
    private func clickFromCron(_ desktop: NotificationEnvironment, _ watcher: BusWatcher) async throws -> String {
        let cron = try Self.cronJob(in: desktop.directory, busSocket: try desktop.bus.socketPath)
        let out = "\(desktop.directory)/click.txt"
        let sent = try await toastkit(
            [
                "send", "--id", "backup", "-d", "indefinite", "-A", "default=Abrir", "--shell", "--on-action",
                "default=echo \"[$DISPLAY] [$WAYLAND_DISPLAY]\" > \(out)", "Copia lista",
            ], environment: cron)
        #expect(sent.status == 0, "\(sent.error)")
        // A toast with a command goes through the agent that `send` started (no hand-over): its `Notify`.
        let (_, id) = try await watcher.nextNotifyAndReply()
        try await desktop.invokeAction("default", serverID: id, actionKeys: ["default"])
        return try await writtenLine(of: out, within: 10, "the click's command")
    }

    /// A cron job's environment in `directory`: HOME, PATH, a shell, no display and no bus address; its bus found at
    /// the user's /run/user/UID/bus (a link to `busSocket` under a runtime root of the test's own).
    private static func cronJob(in directory: String, busSocket: String) throws -> [String: String] {
        let root = "\(directory)/run-user"
        try FileManager.default.createDirectory(
            atPath: "\(root)/\(geteuid())", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(link(busSocket, "\(root)/\(geteuid())/bus") == 0)
        return [
            "HOME": directory, "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "TOASTKIT_USER_RUNTIME_ROOT": root,
            "XDG_STATE_HOME": "\(directory)/state", "LANGUAGE": "en",
        ]
    }
}
