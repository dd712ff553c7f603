// `toastkit doctor`: whether a toast can be shown from here, and if not, what to do — the bus, the server and what it
// can do, Do Not Disturb, who plays a toast's sound (a player counts once it has played), the reply prompt, the agent,
// the sandbox and the portal.
import DBus
import FreedesktopNotifications
import Glibc
import ToastKit
import ToastKitAgent

/// `toastkit doctor [--json]`: says in plain words whether a toast can be shown from here, and if not, what to do —
/// which bus and how it was found, which server and what it can do, the service file the bus would start when none
/// runs (``ServiceFiles``), the server's quirks, Do Not Disturb, the agent, the sandbox and the portal. Exit 0 when
/// a toast can be shown, 69 when not. Every question is bounded (a bus that does not answer costs at most
/// ``callTimeout``); nothing is shown.
struct DoctorCommand {
    let json: Bool
    let environment: CommandEnvironment

    /// How long any one exchange with the bus or a server may take.
    static let callTimeout: Duration = .seconds(3)

    /// How serious a finding is.
    enum Level: String {
        case ok, note, warning, problem
    }

    /// One line of the report: a topic (`bus`, `server`, …), how serious, what was found, and what to do.
    struct Finding {
        var topic: String
        var level: Level
        var text: String
        var fix: String?

        var json: JSONValue {
            var object: JSONObject = ["topic": .string(topic), "level": .string(level.rawValue), "text": .string(text)]
            if let fix { object["fix"] = .string(fix) }
            return .object(object)
        }
    }

    /// What the report found, for the verdict and `--json`.
    struct Report {
        var findings: [Finding] = []
        var details: JSONObject = [:]
        /// Why no toast can be shown, when none can.
        var blocker: String?

        mutating func add(_ topic: String, _ level: Level, _ text: String, fix: String? = nil) {
            findings.append(Finding(topic: topic, level: level, text: text, fix: fix))
            if level == .problem, blocker == nil { blocker = text }
        }
    }

    func run() -> ExitCode {
        var report = Report()
        let choice = environment.backendChoice
        checkBus(&report, backend: choice)
        report.details["can_show"] = .bool(report.blocker == nil)
        if json {
            var object = report.details
            object["findings"] = .array(report.findings.map(\.json))
            Output.json(object)
        } else {
            for finding in report.findings {
                Output.line(TerminalText.escape("[\(finding.level.rawValue)] \(finding.topic): \(finding.text)"))
                if let fix = finding.fix { Output.line(TerminalText.escape("    → \(fix)")) }
            }
            Output.line(report.blocker == nil ? "A toast can be shown." : "No toast can be shown.")
        }
        return report.blocker == nil ? .success : .unavailable
    }

    // MARK: - The bus

    private func checkBus(_ report: inout Report, backend choice: BackendChoice) {
        var resolved: (address: String, source: String)
        do {
            resolved = try BusAddress.session.resolveExplained(environment: environment.variable)
            if let userBus = userBus(resolved.address) { resolved.source = userBus }
        } catch {
            report.details["bus"] = .object(["error": .string(error.message)])
            // Not the path it just said is missing: what makes a bus there, or reaches someone else's.
            let root =
                environment.variable("TOASTKIT_USER_RUNTIME_ROOT").flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user"
            // Root (a service, cron, sudo) reaches a person's desktop with --user; anyone else can only use a bus of
            // their own, so other users' buses are no advice for them.
            report.add(
                "bus", .problem, error.message,
                fix: geteuid() == 0
                    ? "reach a logged-in user's desktop with `toastkit --user NAME doctor` (`ls \(root)/*/bus` lists "
                        + "the users' buses), or set DBUS_SESSION_BUS_ADDRESS to a bus that exists"
                    : "log in to a desktop as this user (the login starts the session bus), or run this in that "
                        + "session, or set DBUS_SESSION_BUS_ADDRESS to your session's bus")
            checkSandbox(&report, choice)
            return
        }
        report.details["bus"] = .object(["address": .string(resolved.address), "source": .string(resolved.source)])
        let names: [BusName] = [NotificationsClient.busName, AgentInterface.busName]
        let calls =
            names.map { DBusMethodCall.bus("GetNameOwner", [.string($0.rawValue)]) } + [
                DBusMethodCall.bus("ListActivatableNames")
            ]
        let connection: BlockingDBusConnection
        let replies: [Result<DBusMessage, DBusError>]
        do {
            (connection, replies) = try BlockingDBusConnection.connect(
                to: .address(resolved.address), timeout: Self.callTimeout, calling: calls)
        } catch {
            report.details["bus"] = .object([
                "address": .string(resolved.address), "source": .string(resolved.source),
                "error": .string(error.reason),
            ])
            report.add(
                "bus", .problem, "cannot reach \(resolved.address) (from \(resolved.source)): \(error.reason)",
                fix: "the session may have ended; log in to the desktop again, or point DBUS_SESSION_BUS_ADDRESS at "
                    + "a live bus")
            checkSandbox(&report, choice)
            return
        }
        defer { connection.close() }
        report.add("bus", .ok, "\(resolved.address) (from \(resolved.source))")
        let owners = replies.prefix(2).map { try? $0.get().arguments("s").first?.stringValue }
        let activatable = Set(((try? replies[2].get().arguments("as"))?.first?.stringsValue) ?? [])
        let serverOwner = owners[0] ?? nil
        let serverActivatable = activatable.contains(NotificationsClient.busName.rawValue)
        let serviceFiles = ServiceFiles(environment: environment)

        checkSandbox(&report, choice)
        if choice.backend == .portal {
            checkPortal(&report, choice)
        } else {
            checkServer(
                &report, connection: connection, owner: serverOwner, activatable: serverActivatable,
                serviceFiles: serviceFiles)
        }
        serviceFiles.check(&report, serverRuns: serverOwner != nil, activatable: serverActivatable)
        checkAgent(
            &report, connection: connection, owner: owners[1] ?? nil,
            activatable: activatable.contains(AgentInterface.busName.rawValue))
    }

    /// Where the bus came from, said plainly when it is the user's own bus at `/run/user/UID/bus`
    /// (`$XDG_RUNTIME_DIR/bus`, which is what root's `toastkit --user NAME` gives the user's command, and what the
    /// login sets): nobody set DBUS_SESSION_BUS_ADDRESS by hand there. The user is named (`USER`, which `--user`
    /// sets too), so that root reading the report sees whose bus it is. Nil for any other address.
    private func userBus(_ address: String) -> String? {
        let root = environment.variable("TOASTKIT_USER_RUNTIME_ROOT").flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user"
        let runtime = "\(root)/\(geteuid())"
        guard environment.variable("XDG_RUNTIME_DIR") == runtime, address == "unix:path=\(runtime)/bus" else {
            return nil
        }
        let owner = environment.variable("USER").flatMap { $0.isEmpty ? nil : "\($0)'s" } ?? "the user's"
        return "\(owner) own bus at \(runtime)/bus"
    }

    // MARK: - The server

    private func checkServer(
        _ report: inout Report, connection: BlockingDBusConnection, owner: String?, activatable: Bool,
        serviceFiles: ServiceFiles
    ) {
        if owner == nil {
            guard activatable else {
                report.details["server"] = .null
                // A server whose service file is installed, but that this bus does not read: started by hand.
                let fix =
                    serviceFiles.found.first.map {
                        "start it yourself (`\($0.exec) &`, installed: \($0.path)); this bus does not read the "
                            + "service files, so it starts no server on demand"
                    } ?? "start your desktop's notification server, or install one (dunst, mako, xfce4-notifyd, …)"
                report.add(
                    "server", .problem, "no notification server runs on this bus, and the bus cannot start one",
                    fix: fix)
                return
            }
            report.add("server", .note, "no notification server runs yet; the bus starts one on demand")
        }
        let replies = connection.call(
            [NotificationsClient.call("GetServerInformation"), NotificationsClient.call("GetCapabilities")],
            timeout: Self.callTimeout)
        let information = try? NotificationsClient.serverInformation(from: replies[0].get())
        let names: [String]
        switch replies[1] {
        case .success(let reply):
            names = (try? NotificationsClient.capabilities(from: reply)) ?? []
        case .failure(let error):
            let failure = BusAccess.failure(PresentationError(error, timeout: Self.callTimeout))
            report.details["server"] = .object(["error": .string(failure.message)])
            // No server ran: the bus tried to start one from its service file, which is what failed (doctor sent
            // no toast, so nothing was "refused"). The bus's own errors for that are org.freedesktop.DBus.Error.Spawn.*.
            let spawn = owner == nil && error.name.rawValue.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
            report.add(
                "server", .problem,
                spawn ? "the bus could not start a notification server: \(error.reason)" : failure.message,
                fix: owner == nil
                    ? "the bus could not start the server its service file names (see `service files`); install "
                        + "it, or start your desktop's notification server yourself"
                    : "restart the notification server; `toastkit doctor` again then says whether it answers")
            return
        }
        let capabilities = ServerCapabilities(names, information: information)
        let serverOwner =
            owner
            ?? (try? connection.call(
                .bus("GetNameOwner", [.string(NotificationsClient.busName.rawValue)]), timeout: Self.callTimeout
            ).arguments("s").first?.stringValue) ?? nil
        let process = serverOwner.flatMap { processDescription(of: $0, on: connection) }
        var details: JSONObject = [
            "name": .optional(information?.name), "vendor": .optional(information?.vendor),
            "version": .optional(information?.version), "spec_version": .optional(information?.specificationVersion),
            "bus_name": .optional(serverOwner), "capabilities": .array(capabilities.ordered.map(JSONValue.string)),
        ]
        if let process { details["process"] = .string(process) }
        details["quirks"] = .array(
            capabilities.quirks.map { .object(["key": .string($0.key), "text": .string($0.text)]) })
        let identity =
            information.map { "\($0.name) \($0.version) by \($0.vendor), specification \($0.specificationVersion)" }
            ?? "a server that does not say who it is (GetServerInformation failed)"
        let location = [serverOwner, process].compactMap { $0 }.joined(separator: ", ")
        report.add("server", .ok, location.isEmpty ? identity : "\(identity); \(location)")
        report.add("capabilities", .note, capabilities.ordered.joined(separator: ", "))
        for quirk in capabilities.quirks { report.add("quirk", .note, quirk.text) }
        if let information {
            let reading = doNotDisturb(information, connection: connection)
            details["do_not_disturb"] = .object([
                "state": .string(reading.state.rawValue), "source": .string(reading.source),
                "effect": .optional(reading.effect), "critical_bypasses": .bool(reading.criticalBypasses),
            ])
            switch reading.state {
            case .off:
                report.add("do not disturb", .ok, "off (\(reading.source))")
            case .on:
                let critical = reading.criticalBypasses ? "; critical toasts (`-u critical`) still pop up" : ""
                report.add(
                    "do not disturb", .warning, "on: \(reading.effect ?? "toasts do not pop up")\(critical)",
                    fix: "read from \(reading.source); turn Do Not Disturb off to see toasts")
            case .unknown:
                report.add("do not disturb", .note, "unknown (\(reading.source))")
            }
        }
        checkSound(&report, capabilities, into: &details)
        checkReply(&report, capabilities, into: &details)
        report.details["server"] = .object(details)
    }

    /// How the text of a reply action (`--reply`) is asked for: the server's own field, else a prompt program.
    private func checkReply(_ report: inout Report, _ capabilities: ServerCapabilities, into details: inout JSONObject)
    {
        let name = capabilities.information?.name ?? "the server"
        let prompt = ReplyPrompter.automatic.firstChoice(environment: environment.variables)
        let field = capabilities.has("inline-reply")
        details["reply"] = .object([
            "asked_by": .string(field ? "server" : "prompt"), "prompt": field ? .null : .optional(prompt),
        ])
        if field {
            report.add("reply", .ok, "\(name) draws the reply field in the toast (inline-reply)")
        } else if let prompt {
            report.add("reply", .ok, "\(name) draws no reply field: --reply asks with \(prompt)")
        } else {
            report.add(
                "reply", .warning, "\(name) draws no reply field, and no prompt program was found",
                fix: "install zenity, kdialog or yad, or set TOASTKIT_REPLY_PROMPT")
        }
    }

    /// Who plays a toast's sound (`--sound`): the server, where it really does, else toastkit — through the player that
    /// has just played a moment of silence as a toast's sound would be played (``SoundPlayer/probe(appName:environment:limit:)``):
    /// a player that is installed but cannot reach the sound card or the sound server is a warning that says why.
    private func checkSound(_ report: inout Report, _ capabilities: ServerCapabilities, into details: inout JSONObject)
    {
        let name = capabilities.information?.name ?? "the server"
        let serverPlays = capabilities.playsSound(.named("message-new-instant"))
        let filesOnly = !serverPlays && capabilities.playsSound(.file("/"))
        let tried =
            serverPlays
            ? nil
            : SoundPlayer.automatic.probe(
                appName: "toastkit", environment: environment.variables, limit: Self.callTimeout)
        var sound: JSONObject = [
            "played_by": .string(serverPlays ? "server" : filesOnly ? "server for files, else toastkit" : "toastkit"),
            "player": .optional(tried?.player),
        ]
        let failures = tried?.failures.joined(separator: "; ") ?? ""
        if !failures.isEmpty { sound["error"] = .string(failures) }
        details["sound"] = .object(sound)
        let none = "\(name) plays no sound\(filesOnly ? " from the sound theme" : "")"
        if serverPlays {
            report.add("sound", .ok, "\(name) plays a toast's sound itself (the sound-name and sound-file hints)")
        } else if let player = tried?.player {
            let files = filesOnly ? "\(name) plays sound files itself; " : ""
            report.add("sound", .ok, "\(files)toastkit plays a toast's sound through \(player)")
        } else if !failures.isEmpty {
            report.add(
                "sound", .warning, "\(none), and no sound player could play one: \(failures)",
                fix: "start the sound server, install libcanberra0, pipewire-bin or pulseaudio-utils, or set "
                    + "TOASTKIT_SOUND_PLAYER to a player that can")
        } else {
            report.add(
                "sound", .warning, "\(none), and no sound player was found",
                fix: "install libcanberra0, pipewire-bin or pulseaudio-utils, or set TOASTKIT_SOUND_PLAYER")
        }
    }

    /// "pid 1234 (dunst)" for the connection `name`, when the bus says and `/proc` shows it.
    private func processDescription(of name: String, on connection: BlockingDBusConnection) -> String? {
        guard
            let pid = try? connection.call(
                .bus("GetConnectionUnixProcessID", [.string(name)]), timeout: Self.callTimeout
            ).arguments("u").first?.uint32Value
        else { return nil }
        guard let comm = LocalFiles.text(of: "/proc/\(pid)/comm", limit: 64) else { return "pid \(pid)" }
        return "pid \(pid) (\(comm.trimmingTrailingNewlines))"
    }

    // MARK: - Do Not Disturb

    private func doNotDisturb(_ information: ServerInformation, connection: BlockingDBusConnection)
        -> DoNotDisturbReading
    {
        if let query = DoNotDisturbQuery.forServer(information) {
            return query.reading(from: connection.call([query.call], timeout: Self.callTimeout)[0])
        }
        return DoNotDisturbSettings.reading(for: information, environment: environment.variables)
            ?? DoNotDisturbReading(state: .unknown, source: "\(information.name) has no Do Not Disturb to read")
    }

    // MARK: - The agent

    private func checkAgent(
        _ report: inout Report, connection: BlockingDBusConnection, owner: String?, activatable: Bool
    ) {
        if let owner {
            let process = processDescription(of: owner, on: connection)
            report.details["agent"] = .object([
                "running": .bool(true), "bus_name": .string(owner), "process": .optional(process),
            ])
            report.add("agent", .ok, "running: \([owner, process].compactMap { $0 }.joined(separator: ", "))")
            return
        }
        report.details["agent"] = .object(["running": .bool(false), "activatable": .bool(activatable)])
        let starts = activatable ? "the bus starts it on demand" : "`toastkit send` starts it when a toast needs it"
        report.add(
            "agent", .ok,
            "not running; \(starts) (durations on GNOME, `--on-action`, replacing across runs)")
    }

    // MARK: - Sandbox and portal

    private func checkSandbox(_ report: inout Report, _ choice: BackendChoice) {
        let sandbox = Sandbox.detect()
        report.details["backend"] = .object([
            "backend": .string(choice.backend.rawValue), "reason": .string(choice.reason),
            "sandbox": .optional(sandbox.map { "\($0)" }),
        ])
        let target =
            choice.backend == .portal
            ? "toasts go through the notification portal" : "toasts go to org.freedesktop.Notifications"
        report.add("backend", .ok, "\(target) (\(choice.reason))")
    }

    private func checkPortal(_ report: inout Report, _ choice: BackendChoice) {
        do throws(CommandFailure) {
            let (version, owner) = try ServerCommands.portalInfo(choice)
            report.details["portal"] = .object(["version": .integer(Int64(version)), "bus_name": .string(owner)])
            let v1 =
                version < 2 ? "; version 1 takes no markup, sound or category, and hides the server's failures" : ""
            report.add("portal", .ok, "org.freedesktop.portal.Notification version \(version), \(owner)\(v1)")
        } catch {
            report.details["portal"] = .object(["error": .string(error.message)])
            report.add(
                "portal", .problem, error.message,
                fix: "install xdg-desktop-portal and your desktop's portal backend (xdg-desktop-portal-gtk, -kde, "
                    + "-gnome), or use `--backend notifications` outside a sandbox")
        }
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = Substring(self)
        while text.last == "\n" || text.last == "\r" { text = text.dropLast() }
        return String(text)
    }
}
