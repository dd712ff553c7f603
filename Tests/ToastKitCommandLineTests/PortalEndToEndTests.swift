import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

extension OneAtATime {
    /// The `toastkit` binary through the REAL notification portal (xdg-desktop-portal 1.16 + xdg-desktop-portal-gtk,
    /// in front of dunst on a private bus): as an unsandboxed caller with `--backend portal`, as a fake sandboxed app
    /// (bwrap with a fake `/.flatpak-info`), and as a real Flatpak app built by `scripts/make-mini-flatpak.sh` (issue 14).
    @Suite(.timeLimit(.minutes(5))) struct PortalEndToEndTests {
        /// A desktop with dunst, the portal, and a monitor of the notification and portal traffic.
        private func withPortal(
            _ body: (NotificationEnvironment, DesktopPortal, BusWatcher) async throws -> Void
        ) async throws {
            let desktop = try await NotificationEnvironment.start(server: .dunst)
            defer { desktop.stop() }
            let portal = try await desktop.startPortal()
            let watcher = try await BusWatcher(bus: desktop.bus.address, rules: BusWatcher.portalTraffic)
            defer { watcher.stop() }
            try await body(desktop, portal, watcher)
        }

        /// Sound through Debian 12's version 1 portal, which takes no `sound` key and plays none: the process plays it
        /// itself once the portal took the notification (through the player the test points at), and waits for it
        /// before it exits.
        @Test func aSoundThroughTheVersionOnePortalIsPlayedByTheProcess() async throws {
            try await withPortal { desktop, _, watcher in
                var env = desktop.toolEnvironment
                let fifo = try SoundEndToEndTests.fifoPlayer(in: desktop.directory, into: &env)
                let sent = try await toastkit(
                    ["--backend", "portal", "send", "--sound", "complete", "Listo"], environment: env)
                #expect(sent.status == 0 && sent.error == "", "[\(sent.error)]")
                let add = try await watcher.next("AddNotification") {
                    $0.member == "AddNotification" && $0.interface == "org.freedesktop.portal.Notification"
                }
                let fields = try #require(add.body.last?.variantDictionaryValue)
                #expect(fields["title"] == .string("Listo") && fields["sound"] == nil, "version 1 refuses the key")
                #expect(
                    try await firstLine(ofFIFO: fifo, within: 30)
                        == "\(SoundEndToEndTests.stereo)/complete.oga")
            }
        }

        @Test func theToolThroughThePortalSaysSoAndGetsItsActionBack() async throws {
            try await withPortal { desktop, portal, watcher in
                let env = desktop.toolEnvironment
                let info = try await toastkit(["--backend", "portal", "server-info"], environment: env)
                #expect(info.status == 0, "\(info.error)")
                #expect(
                    info.output
                        == [
                            "name: org.freedesktop.portal.Desktop", "interface: org.freedesktop.portal.Notification",
                            "version: 1", "bus_name: \(portal.owner)", "backend: portal (chosen explicitly)", "",
                        ].joined(separator: "\n"))
                let capabilities = try await toastkit(["--backend=portal", "capabilities", "--json"], environment: env)
                #expect(
                    capabilities.output
                        == #"{"capabilities":["actions","body","icon-static"],"backend":"portal","backend_reason":"chosen explicitly"}"#
                        + "\n")
                let server = try await toastkit(["server-info"], environment: env)
                #expect(
                    server.lines.dropLast().last
                        == "backend: notifications (chosen automatically: not in a Flatpak or Snap sandbox)")
                let doctor = try await toastkit(["--backend", "portal", "doctor"], environment: env)
                #expect(doctor.status == 0, "\(doctor.output)")
                #expect(
                    doctor.lines.contains("[ok] backend: toasts go through the notification portal (chosen explicitly)")
                )
                #expect(
                    doctor.lines.contains {
                        $0.hasPrefix("[ok] portal: org.freedesktop.portal.Notification version 1, \(portal.owner); ")
                    }, "\(doctor.output)")

                let waiting = try ToolProcess.start(
                    ["--backend", "portal", "send", "--wait", "-A", "ok=OK", "Hola", "por el portal"].map {
                        Array($0.utf8)
                    }, environment: env)
                let add = try await watcher.next("AddNotification") {
                    $0.member == "AddNotification" && $0.interface == "org.freedesktop.portal.Notification"
                }
                let fields = try add.arguments("sa{sv}")[1].variantDictionaryValue ?? [:]
                #expect(fields["title"] == .string("Hola"))
                let (notify, serverID) = try await watcher.nextNotifyAndReply()
                #expect(notify.actionList == ["ok", "OK"])
                try await desktop.waitUntilDisplayed(1)
                try await desktop.invokeAction("ok", serverID: serverID, actionKeys: ["ok"])
                let result = await waiting.finish()
                #expect(result.status == 0, "\(result.error)")
                #expect(result.output == "ok\n")
            }
        }

        /// `send --reply` through the portal (version 1 knows no reply purpose): a plain button; choosing it opens the
        /// prompt in the sending process (here TOASTKIT_REPLY_PROMPT's command) and its text is the output.
        @Test func aReplyThroughThePortalIsAskedFor() async throws {
            try await withPortal { desktop, _, watcher in
                var env = desktop.toolEnvironment
                env["TOASTKIT_REPLY_PROMPT"] = "echo \"Voy ($TOASTKIT_REPLY_ACTION)\""
                let waiting = try ToolProcess.start(
                    ["--backend", "portal", "send", "--reply", "Responder", "Ana", "por el portal"].map {
                        Array($0.utf8)
                    }, environment: env)
                let (notify, serverID) = try await watcher.nextNotifyAndReply()
                #expect(notify.actionList == ["reply", "Responder"])
                try await desktop.waitUntilDisplayed(1)
                try await desktop.invokeAction("reply", serverID: serverID, actionKeys: ["reply"])
                let result = await waiting.finish()
                #expect(result.status == 0, "\(result.error)")
                #expect(result.output == "Voy (Responder)\n")
            }
        }

        /// `toastkit progress` through the portal: each step under a fresh id that replaces (removes) the one before,
        /// the bar as text in the body (the portal draws none), then the final toast without it.
        @Test func theProgressCommandThroughThePortal() async throws {
            try await withPortal { desktop, _, watcher in
                let process = try ToolProcess.start(
                    ["--backend", "portal", "progress", "--id", "copia", "Copiando", "12 fotos"].map { Array($0.utf8) },
                    environment: desktop.toolEnvironment)
                func nextAdd() async throws -> (id: String, body: String?) {
                    let add = try await watcher.next("AddNotification") {
                        $0.member == "AddNotification" && $0.interface == "org.freedesktop.portal.Notification"
                    }
                    let arguments = try add.arguments("sa{sv}")
                    let fields = arguments[1].variantDictionaryValue ?? [:]
                    return (arguments[0].stringValue ?? "", fields["body"]?.stringValue)
                }
                process.writeInput(Array("50 Copiando 6 de 12\n".utf8))
                let step = try await nextAdd()
                #expect(step.body == "Copiando 6 de 12\n▰▰▰▰▰▱▱▱▱▱ 50 %")
                process.feed(Array("100 Copiadas\n".utf8))
                let final = try await nextAdd()
                #expect(final.body == "Copiadas", "a normal toast at the end")
                #expect(final.id != step.id, "a portal id is never added twice")
                let removed = try await watcher.next("RemoveNotification") {
                    $0.member == "RemoveNotification" && $0.interface == "org.freedesktop.portal.Notification"
                }
                #expect(try removed.arguments("s")[0].stringValue == step.id, "the step is replaced")
                let run = await process.finish()
                #expect(run.status == 0, "\(run.error)")
                #expect(!run.error.contains("--id"), "no warning that --id does not replace: it does, here")
                let refused = try await toastkit(
                    ["--backend", "portal", "progress", "-A", "ok=OK", "--on-action", "ok=true", "Copiando"],
                    environment: desktop.toolEnvironment, stdin: Array("50\n".utf8))
                #expect(refused.status == 69, "an action nobody would carry out is refused, as send refuses it")
                #expect(
                    refused.error
                        == "toastkit: --on-action needs the toast agent, which is not used with the notification portal\n"
                )
            }
        }

        /// `toastkit run` through the portal: its toast goes to the portal like send's (it went to the notification
        /// server's path), without the output action, which only the agent carries out.
        @Test func theRunCommandsToastThroughThePortal() async throws {
            try await withPortal { desktop, _, watcher in
                let run = try await toastkit(
                    ["--backend", "portal", "run", "--", "true"], environment: desktop.toolEnvironment)
                #expect(run.status == 0, "\(run.error)")
                let add = try await watcher.next("AddNotification") {
                    $0.member == "AddNotification" && $0.interface == "org.freedesktop.portal.Notification"
                }
                let fields = try add.arguments("sa{sv}")[1].variantDictionaryValue ?? [:]
                #expect(fields["title"] == .string("true"))
                #expect(fields["body"]?.stringValue?.hasPrefix("exit 0 after ") == true, "\(fields)")
                #expect(fields["buttons"] == nil, "no Show output: nobody would carry it out")
            }
        }

        @Test func noPortalIsExit69NamingWhatWasTried() async throws {
            let desktop = try await NotificationEnvironment.start(server: .dunst)
            defer { desktop.stop() }
            let run = try await toastkit(["--backend", "portal", "send", "Hola"], environment: desktop.toolEnvironment)
            #expect(run.status == 69)
            #expect(
                run.error
                    == "toastkit: no desktop portal is running (org.freedesktop.portal.Desktop has no owner); the "
                    + "notification portal was chosen explicitly\n")
            let bad = try await toastkit(["--backend", "fax", "send", "Hola"], environment: desktop.toolEnvironment)
            #expect(bad.status == 65)
            #expect(bad.error == "toastkit: --backend fax: expected auto, notifications or portal\n")
        }

        /// A sandboxed caller, faked cheaply: bwrap with a fake `/.flatpak-info` (the portal reads
        /// `/proc/PID/root/.flatpak-info`). `toastkit` sees the sandbox and uses the portal by itself. With the app's
        /// permission "no", the portal (version 1) answers success and drops the toast (P28); the tool asks the
        /// permission store and fails clearly instead.
        @Test func aSandboxedToolWhoseNotificationsAreTurnedOffFailsClearly() async throws {
            try await withPortal { desktop, portal, watcher in
                let appID = "org.example.FakeApp"
                let info = "\(desktop.directory)/flatpak-info"
                try "[Application]\nname=\(appID)\n".write(toFile: info, atomically: true, encoding: .utf8)
                let sandbox = try Sandboxed(info: info, binary: ToolProcess.binary)

                let allowed = try await sandbox.run(
                    ["send", "-p", "Desde el sandbox"], environment: desktop.toolEnvironment)
                #expect(allowed.status == 0, "\(allowed.error)")
                #expect(allowed.output.hasPrefix("toastkit-"), "the portal id: \(allowed.output)")
                let (notify, _) = try await watcher.nextNotifyAndReply()
                #expect(notify.hints["desktop-entry"] == .string(appID), "the portal named the sandboxed app")
                try await desktop.waitUntilDisplayed(1)
                try await desktop.clear()

                try await portal.setNotificationPermission(appID: appID, allowed: false)
                let denied = try await sandbox.run(["send", "Prohibido"], environment: desktop.toolEnvironment)
                #expect(denied.status == 69)
                #expect(
                    denied.error
                        == "toastkit: notifications are turned off for \(appID): the desktop portal's permission store "
                        + "says \"no\" (turn them on in the desktop's settings, or run `flatpak permission-set "
                        + "notifications notification \(appID) yes`)\n")
                #expect(try await desktop.displayedCount() == 0)
            }
        }

        /// A REAL Flatpak app (flatpak 1.14, its bus proxy: only the portals are reachable) running the static
        /// `toastkit`: the toast reaches dunst through the portal, and the action comes back into the sandbox.
        @Test func aRealFlatpakAppGetsItsActionBack() async throws {
            let binary = try Self.staticBinary()
            let folder = "\(NotificationEnvironment.repositoryRoot)/.build/flatpak"
            let started = ContinuousClock.now
            let build = try await onOwnThread {
                try Tools.run(
                    "\(NotificationEnvironment.repositoryRoot)/scripts/make-mini-flatpak.sh", [folder, binary])
            }
            #expect(build.status == 0, "make-mini-flatpak.sh: \(build.error)")
            let buildTime = ContinuousClock.now - started
            try await withPortal { desktop, _, watcher in
                var env = desktop.toolEnvironment
                for line in try String(contentsOfFile: "\(folder)/env", encoding: .utf8).split(separator: "\n") {
                    for assignment in line.dropFirst("export ".count).split(separator: " ") {
                        let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
                        // The desktop's short runtime folder stays: flatpak's bus proxy puts its socket there.
                        if parts.count == 2, parts[0] != "XDG_RUNTIME_DIR" { env[parts[0]] = parts[1] }
                    }
                }
                let flatpak = try Tools.require("flatpak", package: "flatpak")
                let app = try ToolProcess.start(
                    ["--user", "run", "org.toastkit.PortalTest", "send", "--wait", "-A", "ok=OK", "Hola desde Flatpak"]
                        .map { Array($0.utf8) }, environment: env, executable: flatpak)
                let add = try await watcher.next("AddNotification from the sandbox") {
                    $0.member == "AddNotification" && $0.interface == "org.freedesktop.impl.portal.Notification"
                }
                #expect(add.body.first == .string("org.toastkit.PortalTest"), "the portal knows the app's id")
                let (notify, serverID) = try await watcher.nextNotifyAndReply()
                #expect(notify.summary == "Hola desde Flatpak")
                #expect(notify.hints["desktop-entry"] == .string("org.toastkit.PortalTest"))
                try await desktop.waitUntilDisplayed(1)
                try await desktop.invokeAction("ok", serverID: serverID, actionKeys: ["ok"])
                let result = await app.finish()
                #expect(result.status == 0, "flatpak run: \(result.error)")
                #expect(result.output == "ok\n")
            }
            #expect(buildTime < .seconds(60), "make-mini-flatpak.sh took \(buildTime)")
        }

        /// The fully static `toastkit`: `TOASTKIT_STATIC_BINARY` or a static `TOASTKIT_BINARY` (scripts/test.sh sets
        /// them), else built now with scripts/build-cli.sh.
        static func staticBinary() throws -> String {
            let environment = ProcessInfo.processInfo.environment
            if let path = environment["TOASTKIT_STATIC_BINARY"], !path.isEmpty { return path }
            if let ldd = try? Tools.run("ldd", [ToolProcess.binary]),
                ldd.output.contains("not a dynamic executable")
                    || ldd.error.contains("not a dynamic executable")
            {
                return ToolProcess.binary
            }
            let build = try Tools.run("\(NotificationEnvironment.repositoryRoot)/scripts/build-cli.sh", [])
            guard build.status == 0 else { throw TestEnvironmentError("scripts/build-cli.sh failed: \(build.error)") }
            return build.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

/// Runs `toastkit` under bwrap in a sandbox that looks like a Flatpak to the portal: a fresh root with the system's
/// folders read-only, `/tmp` (where the test bus lives) writable, the binary's libraries, and the given file as
/// `/.flatpak-info`.
struct Sandboxed {
    let bwrap: String
    let arguments: [String]

    init(info: String, binary: String) throws {
        bwrap = try Tools.require("bwrap", package: "bubblewrap")
        var binds = [
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc", "/etc",
            "--proc", "/proc", "--dev", "/dev", "--bind", "/tmp", "/tmp",
        ]
        // The binary's own folder and those of its libraries outside /usr (the Swift toolchain for a debug build).
        var folders = [URL(fileURLWithPath: binary).deletingLastPathComponent().path]
        let ldd = try Tools.run("ldd", [binary])
        for line in ldd.output.split(separator: "\n") {
            guard let path = line.split(separator: " ").first(where: { $0.hasPrefix("/") }) else { continue }
            folders.append(URL(fileURLWithPath: String(path)).deletingLastPathComponent().path)
        }
        for folder in Set(folders).sorted()
        where !folder.hasPrefix("/usr") && !folder.hasPrefix("/lib") && !folder.hasPrefix("/tmp") {
            binds += ["--ro-bind", folder, folder]
        }
        arguments = binds + ["--ro-bind", info, "/.flatpak-info", "--die-with-parent", binary]
    }

    func run(_ toolArguments: [String], environment: [String: String]) async throws -> ToolProcess.Result {
        let process = try ToolProcess.start(
            (arguments + toolArguments).map { Array($0.utf8) }, environment: environment, executable: bwrap)
        return await process.finish()
    }
}
