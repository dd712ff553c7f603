import DBus
import Foundation
import FreedesktopNotifications
import Glibc
import TestSupport
import Testing

/// `toastkit doctor` (issue 20 §4): what it says on a real dunst and a real GNOME Shell, with Do Not Disturb on and
/// off, how it names the bus, and where no toast can be shown (no bus, no server, a server that does not answer).
/// The service files are DoctorServiceFileTests'.
@Suite(.timeLimit(.minutes(2))) struct DoctorTests {
    @Test func onDunstItNamesTheServerItsQuirksAndDoNotDisturb() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, _ in
            let env = desktop.toolEnvironment
            let text = try await toastkit(["doctor"], environment: env)
            #expect(text.status == 0, "\(text.output)\(text.error)")
            #expect(text.output.hasSuffix("\nA toast can be shown.\n"))
            #expect(
                text.lines.contains {
                    $0.hasPrefix("[ok] bus: unix:path=") && $0.hasSuffix("(from DBUS_SESSION_BUS_ADDRESS)")
                })
            #expect(text.lines.contains { $0.hasPrefix("[ok] server: dunst 1.9.0") && $0.contains("(dunst)") })
            #expect(text.lines.contains("[ok] do not disturb: off (dunst: org.dunstproject.cmd0.paused)"))
            // No reply field on dunst: zenity (installed by scripts/install-deps.sh) asks, or the command given.
            #expect(text.lines.contains("[ok] reply: dunst draws no reply field: --reply asks with zenity"))
            var withPrompt = env
            withPrompt["TOASTKIT_REPLY_PROMPT"] = "rofi -dmenu"
            let prompted = try await toastkit(["doctor"], environment: withPrompt)
            #expect(prompted.lines.contains("[ok] reply: dunst draws no reply field: --reply asks with rofi -dmenu"))
            var bare = env
            bare["PATH"] = "/nonexistent"
            let none = try await toastkit(["doctor"], environment: bare)
            #expect(
                none.lines.contains(
                    "[warning] reply: dunst draws no reply field, and no prompt program was found"), "\(none.output)")
            #expect(text.error.isEmpty, "\(text.error)")

            _ = try await desktop.dunstctl("set-paused", "true")
            let paused = try await toastkit(["doctor", "--json"], environment: env)
            #expect(paused.status == 0, "Do Not Disturb holds toasts back, but they can be shown: \(paused.error)")
            let json = try doctorReport(paused.output)
            #expect(json["can_show"] as? Bool == true)
            let server = try #require(json["server"] as? [String: Any])
            #expect(server["name"] as? String == "dunst")
            #expect((server["capabilities"] as? [String])?.contains("actions") == true)
            #expect((server["quirks"] as? [[String: Any]])?.map { $0["key"] as? String } == ["signals-to-sender"])
            let dnd = try #require(server["do_not_disturb"] as? [String: Any])
            #expect(dnd["state"] as? String == "on")
            #expect(dnd["critical_bypasses"] as? Bool == false)
            let warning = try #require(doctorFindings(json, topic: "do not disturb").first)
            #expect(warning["level"] as? String == "warning")
            #expect((warning["text"] as? String)?.contains("dunstctl set-paused false") == true, "\(warning)")
            #expect((json["agent"] as? [String: Any])?["running"] as? Bool == false)
        }
    }

    /// doctor says toastkit plays a toast's sound through a player only once that player has played — a moment of
    /// silence — never because the program is there (issue 39 §4). A player that cannot reach the sound server is a
    /// warning that says why (a toast can still be shown); the sender's `TOASTKIT_SOUND_PLAYER` is tried first, then
    /// libcanberra, which is fine once it played into the sound card (ALSA's file device), then pw-play and paplay,
    /// which reach no sound server here.
    @Test func aSoundPlayerIsFineOnlyOnceItHasPlayed() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, _ in
            var env = desktop.toolEnvironment
            env["TOASTKIT_SOUND_PLAYER"] = try SoundEndToEndTests.failingPlayer(in: desktop.directory)
            let failing = try await toastkit(["doctor"], environment: env)
            #expect(failing.status == 0, "a toast can be shown without its sound: \(failing.output)")
            let cannot = "[warning] sound: dunst plays no sound, and no sound player could play one: "
            #expect(
                failing.lines.contains(cannot + SoundEndToEndTests.failingPlayerWarning), "\(failing.output)")
            #expect(
                failing.lines.contains(
                    "    → start the sound server, install libcanberra0, pipewire-bin or pulseaudio-utils, or set "
                        + "TOASTKIT_SOUND_PLAYER to a player that can"), "\(failing.output)")
            let json = try doctorReport(try await toastkit(["doctor", "--json"], environment: env).output)
            let sound = try #require((json["server"] as? [String: Any])?["sound"] as? [String: Any], "\(json)")
            #expect(sound["player"] is NSNull, "\(sound)")
            #expect(sound["error"] as? String == SoundEndToEndTests.failingPlayerWarning, "\(sound)")

            // A player that plays: it is given a WAV file of silence (it keeps a copy).
            let kept = "\(desktop.directory)/silence.wav"
            let copying = try SoundEndToEndTests.player("copying-player", in: desktop.directory, "cp \"$1\" \(kept)")
            env["TOASTKIT_SOUND_PLAYER"] = copying
            let working = try await toastkit(["doctor"], environment: env)
            #expect(
                working.lines.contains("[ok] sound: toastkit plays a toast's sound through \(copying)"),
                "\(working.output)")
            let wave = try Data(contentsOf: URL(fileURLWithPath: kept))
            #expect(wave.prefix(4) == Data("RIFF".utf8) && wave.count > 44, "a WAV file")
            #expect(wave.dropFirst(44).allSatisfy { $0 == 0 }, "of silence")

            // No sound card and no sound server: neither libcanberra nor pw-play plays.
            env["TOASTKIT_SOUND_PLAYER"] = nil
            let bare = try await toastkit(["doctor"], environment: env)
            #expect(bare.status == 0)
            #expect(bare.lines.contains { $0.hasPrefix(cannot) && $0.contains("pw-play: ") }, "\(bare.output)")
            // A sound card (ALSA's file device): libcanberra plays into it (the static build loads no library).
            let samples = try SoundEndToEndTests.soundCardFile(in: env)
            let card = try await toastkit(["doctor"], environment: env)
            if ToolProcess.isStatic {
                #expect(card.lines.contains { $0.hasPrefix(cannot) }, "\(card.output)")
            } else {
                #expect(
                    card.lines.contains("[ok] sound: toastkit plays a toast's sound through libcanberra"),
                    "\(card.output)")
                #expect(FileManager.default.fileExists(atPath: samples), "the silence reached the sound card")
            }
        }
    }

    @Test func withoutASessionBusItSaysWhereItLookedAndExits69() async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-doctor")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // cron's environment: no bus address, no runtime folder, nobody logged in at the place logind uses.
        let cron = ["HOME": directory, "PATH": "/usr/bin:/bin", "TOASTKIT_USER_RUNTIME_ROOT": "\(directory)/run-user"]
        let run = try await toastkit(["doctor"], environment: cron)
        #expect(run.status == 69)
        #expect(
            run.lines.first
                == "[problem] bus: no session bus: DBUS_SESSION_BUS_ADDRESS is not set, and there is no bus at "
                + "$XDG_RUNTIME_DIR/bus (unset) or \(directory)/run-user/\(geteuid())/bus; is this user logged in to "
                + "a desktop? From another user's job, run as that user (as root: toastkit --user NAME)")
        // The fix is not the path it just said is missing, but what can reach a bus: root (as the tests run) reaches
        // a person's desktop with --user.
        #expect(
            run.lines.dropFirst().first
                == "    → reach a logged-in user's desktop with `toastkit --user NAME doctor` (`ls "
                + "\(directory)/run-user/*/bus` lists the users' buses), or set DBUS_SESSION_BUS_ADDRESS to a bus that "
                + "exists", "\(run.output)")
        #expect(!run.output.contains("DBUS_SESSION_BUS_ADDRESS=unix:path="), "\(run.output)")
        #expect(run.output.hasSuffix("\nNo toast can be shown.\n"))
    }

    /// A user other than root (nobody, from its own cron job) can use no one else's bus: the fix is their own session,
    /// not `--user` or a list of other users' buses.
    @Test func withoutASessionBusAUsersFixIsTheirOwnSession() async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-doctor")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chmod(directory, 0o755) == 0)
        let cron = ["HOME": directory, "PATH": "/usr/bin:/bin", "TOASTKIT_USER_RUNTIME_ROOT": "\(directory)/run-user"]
        let output = try PipePair()
        let child = try ChildProcess.spawn(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", ToolProcess.binary, "doctor"],
            environment: cron, fileDescriptors: [1: output.writeEnd])
        output.closeWriteEnd()
        let (text, status) = try await onOwnThread { (String(decoding: output.readAll(), as: UTF8.self), child.wait()) }
        #expect(status == 69, "\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("[problem] bus: no session bus: ") == true, "\(text)")
        #expect(
            lines.dropFirst().first
                == "    → log in to a desktop as this user (the login starts the session bus), or run this in that "
                + "session, or set DBUS_SESSION_BUS_ADDRESS to your session's bus", "\(text)")
    }

    @Test func aBusWithoutAServerOrOneThatDoesNotAnswerCannotShowAToast() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let none = try await toastkit(["doctor", "--json"], environment: environment.environment)
        #expect(none.status == 69)
        let json = try doctorReport(none.output)
        #expect(json["can_show"] as? Bool == false)
        let problem = try #require(doctorFindings(json, topic: "server").first)
        #expect(problem["level"] as? String == "problem")
        #expect(problem["text"] as? String == "no notification server runs on this bus, and the bus cannot start one")

        let hung = try await FakeNotificationServer.start(on: environment.bus, options: .init(misbehavior: .silent))
        defer { hung.stop() }
        let silent = try await toastkit(["doctor"], environment: environment.environment)
        #expect(silent.status == 69, "\(silent.output)")
        #expect(
            silent.lines.contains("[problem] server: the notification server did not answer within 3.0 seconds"),
            "\(silent.output)")
    }

    /// Under root's `toastkit --user NAME`, the child's bus address is the user's bus at /run/user/UID/bus (as AsUser
    /// sets it, with XDG_RUNTIME_DIR): doctor names it so, not as a DBUS_SESSION_BUS_ADDRESS someone set.
    @Test func theUsersOwnBusIsNamedAsSuch() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let root = "\(environment.directory)/run-user"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let runtime = "\(root)/\(geteuid())"
        try FileManager.default.createSymbolicLink(atPath: runtime, withDestinationPath: environment.bus.directory)
        var env = environment.environment
        env["TOASTKIT_USER_RUNTIME_ROOT"] = root
        env["XDG_RUNTIME_DIR"] = runtime
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(runtime)/bus"
        env["USER"] = "ana"
        let run = try await toastkit(["doctor"], environment: env)
        #expect(
            run.lines.first == "[ok] bus: unix:path=\(runtime)/bus (from ana's own bus at \(runtime)/bus)",
            "\(run.output)")
        env["USER"] = nil
        let unnamed = try await toastkit(["doctor"], environment: env)
        #expect(unnamed.lines.first == "[ok] bus: unix:path=\(runtime)/bus (from the user's own bus at \(runtime)/bus)")
        #expect(!run.output.contains("DBUS_SESSION_BUS_ADDRESS"), "\(run.output)")
    }
}

extension OneAtATime {
    /// `toastkit doctor` on GNOME Shell 43: its quirks, and Do Not Disturb read from GSettings.
    @Suite(.timeLimit(.minutes(3))) struct DoctorGNOMETests {
        @Test func onGNOMEItReadsShowBannersAndNamesTheTimeoutQuirk() async throws {
            try await NotificationEnvironment.withWatched(.gnomeShell) { desktop, _ in
                var env = desktop.toolEnvironment
                // GSettings in a keyfile of the test's own, so `gsettings set` needs no dconf service.
                env["GSETTINGS_BACKEND"] = "keyfile"
                env["XDG_CONFIG_HOME"] = "\(desktop.directory)/config"
                let before = try await toastkit(["doctor"], environment: env)
                #expect(before.status == 0, "\(before.output)\(before.error)")
                #expect(before.lines.contains { $0.hasPrefix("[ok] server: gnome-shell 43.9 by GNOME") })
                #expect(before.lines.contains { $0.hasPrefix("[note] quirk: GNOME Shell ignores expire_timeout") })
                #expect(
                    before.lines.contains(
                        "[ok] sound: gnome-shell plays a toast's sound itself (the sound-name and sound-file hints)"),
                    "\(before.output)")
                #expect(
                    before.lines.contains(
                        "[ok] do not disturb: off (GNOME Shell: gsettings org.gnome.desktop.notifications show-banners "
                            + "= true)"), "\(before.output)")

                _ = try Tools.run(
                    "gsettings", ["set", "org.gnome.desktop.notifications", "show-banners", "false"], environment: env)
                let quiet = try await toastkit(["doctor"], environment: env)
                #expect(quiet.status == 0)
                #expect(
                    quiet.lines.contains(
                        "[warning] do not disturb: on: GNOME Shell puts toasts in its message tray without a banner or "
                            + "sound; critical toasts (`-u critical`) still pop up"), "\(quiet.output)")
            }
        }
    }
}
