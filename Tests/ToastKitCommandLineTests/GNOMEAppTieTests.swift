// A toast GNOME 46+ would close as `send` exits (issue 41): GNOME ties a notification to an app by its
// `desktop-entry` hint or an installed `<app name>.desktop`, and closes every notification of that app when its sender
// leaves the bus. Such a toast goes through the agent, which stays, even when the server times it; with
// `--no-agent` it is shown with one warning; on GNOME 43 and other servers nothing changes. A fake server that answers
// as GNOME Shell 48 and 43 do (`GetServerInformation`); the vanishing itself is measured on the real GNOME 48 in
// ../shared/harness/NOTES-modern.md.
import DBus
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(2))) struct GNOMEAppTieTests {
    private static func gnome(_ version: String) -> FakeNotificationServer.Options {
        var options = FakeNotificationServer.Options(
            capabilities: ["actions", "body", "body-markup", "icon-static", "persistence", "sound"], name: "gnome-shell"
        )
        options.version = version
        return options
    }

    /// Whether the agent runs.
    private func agentRuns(on environment: BusOnlyEnvironment) async throws -> Bool {
        let bus = try await environment.bus.connect()
        defer { bus.close() }
        return try await bus.bus.nameOwner(of: "org.toastkit.Agent1") != nil
    }

    /// Whether `sender` (a unique name) is a connection of the running agent's process.
    private func isTheAgents(_ sender: String, on environment: BusOnlyEnvironment) async throws -> Bool {
        let bus = try await environment.bus.connect()
        defer { bus.close() }
        return try await bus.isAgentsConnection(sender)
    }

    @Test func onGNOME48AToastTiedToAnAppByItsDesktopEntryIsKeptByTheAgent() async throws {
        try await withFakeServer(Self.gnome("48.7")) { environment, server in
            let sent = try await toastkit(
                ["send", "-h", "string:desktop-entry:org.gnome.Settings", "Ajustes"],
                environment: environment.agentEnvironment)
            #expect(sent.status == 0 && sent.error.isEmpty, "\(sent.error)")
            let shown = try await server.nextNotification(summary: "Ajustes")
            #expect(try await isTheAgents(shown.sender, on: environment), "sent by the agent, which stays")
        }
    }

    @Test func onGNOME48AToastOfAnAppWithADesktopFileIsKeptByTheAgent() async throws {
        try await withFakeServer(Self.gnome("48.7")) { environment, server in
            var env = environment.agentEnvironment
            let data = "\(environment.directory)/data"
            try FileManager.default.createDirectory(atPath: "\(data)/applications", withIntermediateDirectories: true)
            try "[Desktop Entry]\nName=Copias\nExec=copias\nType=Application\n".write(
                toFile: "\(data)/applications/copias.desktop", atomically: true, encoding: .utf8)
            env["XDG_DATA_HOME"] = data
            let sent = try await toastkit(["send", "-a", "Copias", "Copia lista"], environment: env)
            #expect(sent.status == 0 && sent.error.isEmpty, "\(sent.error)")
            let shown = try await server.nextNotification(summary: "Copia lista")
            #expect(try await isTheAgents(shown.sender, on: environment), "sent by the agent, which stays")
        }
    }

    @Test func withoutTheAgentItIsShownWithOneWarning() async throws {
        try await withFakeServer(Self.gnome("50.5")) { environment, server in
            let sent = try await toastkit(
                ["send", "--no-agent", "-h", "string:desktop-entry:org.gnome.Settings", "Ajustes"],
                environment: environment.agentEnvironment)
            #expect(sent.status == 0, "\(sent.error)")
            #expect(
                sent.error
                    == "toastkit: warning: GNOME 50 ties this toast to the app \"org.gnome.Settings\" and closes it as "
                    + "soon as toastkit exits (the toast agent, which would keep it, is not used: --no-agent)\n",
                "\(sent.error)")
            _ = try await server.nextNotification(summary: "Ajustes")
            #expect(try await !agentRuns(on: environment))
        }
    }

    @Test func onGNOME43AndForAToastTiedToNoAppNothingChanges() async throws {
        for (version, arguments) in [
            ("43.9", ["-h", "string:desktop-entry:org.gnome.Settings", "Ajustes"]), ("48.7", ["Suelta"]),
        ] {
            try await withFakeServer(Self.gnome(version)) { environment, server in
                let sent = try await toastkit(["send"] + arguments, environment: environment.agentEnvironment)
                #expect(sent.status == 0 && sent.error.isEmpty, "\(sent.error)")
                let shown = try await server.nextNotification(summary: arguments.last ?? "")
                #expect(try await !agentRuns(on: environment), "GNOME \(version): shown by send itself")
                #expect(!shown.sender.isEmpty)
            }
        }
    }
}
