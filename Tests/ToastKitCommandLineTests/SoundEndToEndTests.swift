import DBus
import Foundation
import Glibc
import TestSupport
import Testing

@testable import ToastKitCommandLine

/// Sound (issue 21 §2) end to end on dunst, which plays none: `toastkit send --sound` plays the sound itself, once, when
/// the toast first appears — really, through libcanberra into a sound card (ALSA's file plugin, set up in the tool's
/// `XDG_CONFIG_HOME`), and through a player the test points at (`TOASTKIT_SOUND_PLAYER`, a script that writes what it
/// was given to a FIFO). Never again for an update with the same sound, never while Do Not Disturb is on.
@Suite(.timeLimit(.minutes(2))) struct SoundEndToEndTests {
    /// The environment's ALSA default device as a file of raw samples (`alsa.conf` reads
    /// `$XDG_CONFIG_HOME/alsa/asoundrc` last); returns the file's path.
    static func soundCardFile(in environment: [String: String]) throws -> String {
        let config = try #require(environment["XDG_CONFIG_HOME"])
        try FileManager.default.createDirectory(atPath: "\(config)/alsa", withIntermediateDirectories: true)
        let samples = "\(config)/alsa/played.raw"
        try #"pcm.!default { type file; slave.pcm "null"; file "\#(samples)"; format "raw" }"#.write(
            toFile: "\(config)/alsa/asoundrc", atomically: true, encoding: .utf8)
        return samples
    }

    /// A player script that writes its arguments to a FIFO, one line each run; returns the FIFO's path.
    static func fifoPlayer(in folder: String, into environment: inout [String: String]) throws -> String {
        let fifo = "\(folder)/played"
        #expect(mkfifo(fifo, 0o600) == 0)
        let player = "\(folder)/player"
        try "#!/bin/sh\necho \"$@\" > \(fifo)\n".write(toFile: player, atomically: true, encoding: .utf8)
        chmod(player, 0o755)
        // Run by /bin/sh, not executed itself: a child another test thread forks meanwhile may still hold the script
        // open for writing, and executing it would fail (ETXTBSY).
        environment["TOASTKIT_SOUND_PLAYER"] = "/bin/sh \(player)"
        return fifo
    }

    static let stereo = "/usr/share/sounds/freedesktop/stereo"

    /// A player script with `body` as its text, run by /bin/sh (see ``fifoPlayer(in:into:)``): the command for
    /// `TOASTKIT_SOUND_PLAYER`.
    static func player(_ name: String, in folder: String, _ body: String) throws -> String {
        let script = "\(folder)/\(name)"
        try "#!/bin/sh\n\(body)\n".write(toFile: script, atomically: true, encoding: .utf8)
        return "/bin/sh \(script)"
    }

    /// A player that cannot reach the sound server: it says so on standard error and exits 1, as `paplay` does.
    static func failingPlayer(in folder: String) throws -> String {
        try player("failing-player", in: folder, "echo 'Connection failure: Connection refused' >&2\nexit 1")
    }

    /// The warning `send` prints for a sound ``failingPlayer(in:)`` could not play.
    static let failingPlayerWarning = "/bin/sh: exit 1: Connection failure: Connection refused"

    /// Starts the agent in `environment` (a `send` that starts it, as a script's first toast does) and returns once
    /// it owns its name: the sends after it go through this agent, whatever their own environment.
    static func startAgent(on desktop: NotificationEnvironment, environment: [String: String]) async throws {
        let first = try await toastkit(["send", "-d", "0.2", "Arranca"], environment: environment)
        #expect(first.status == 0, "\(first.error)")
        let bus = try await desktop.bus.connect()
        defer { bus.close() }
        try await bus.awaitAgent()
    }

    /// `send` without `--wait`: the sound is played by the process itself, through libcanberra, before it exits — the
    /// samples are in the sound card's file once `send` has returned. dunst is sent no sound hint. The fully static
    /// `toastkit` loads no library: it plays through `pw-play` or `paplay`, and here, where no sound server runs,
    /// says that it could not.
    @Test func theDirectSendPlaysTheSoundIntoTheSoundCardBeforeItExits() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let env = desktop.toolEnvironment
            let samples = try Self.soundCardFile(in: env)
            let sent = try await toastkit(["send", "--sound", "bell", "Listo"], environment: env)
            let (notify, _) = try await watcher.nextNotifyAndReply()
            #expect(notify.hints["sound-name"] == nil && notify.hints["sound-file"] == nil, "dunst plays none")
            if ToolProcess.isStatic {
                #expect(sent.status == 0, "\(sent.error)")
                #expect(sent.error.hasPrefix("toastkit: warning: no sound player"), "\(sent.error)")
                #expect(!FileManager.default.fileExists(atPath: samples))
                return
            }
            #expect(sent.status == 0 && sent.error.isEmpty, "\(sent.error)")
            let played = try Data(contentsOf: URL(fileURLWithPath: samples))
            #expect(played.count > 10_000, "\(played.count) bytes of samples")
            #expect(played.contains { $0 != 0 }, "the samples are not silence")
            // silent: the hint servers honour, nothing played.
            try FileManager.default.removeItem(atPath: samples)
            let silent = try await toastkit(["send", "--sound", "silent", "Callado"], environment: env)
            #expect(silent.status == 0, "\(silent.error)")
            #expect(try await watcher.nextNotifyAndReply().0.hints["suppress-sound"] == .boolean(true))
            #expect(!FileManager.default.fileExists(atPath: samples), "nothing reached the sound card")
        }
    }

    /// A sound that cannot be played costs the sound, never the toast, and says why.
    @Test func aMissingSoundIsAWarningAndTheToastIsShown() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let sent = try await toastkit(
                ["send", "--sound", "no-such-sound", "Listo"], environment: desktop.toolEnvironment)
            #expect(sent.status == 0, "\(sent.error)")
            #expect(
                sent.error == "toastkit: warning: the sound \"no-such-sound\" is not in the sound theme: none played\n")
            #expect(try await watcher.nextNotifyAndReply().0.summary == "Listo")
            let relative = try await toastkit(
                ["send", "--sound", "sounds/ding.oga", "Otro"], environment: desktop.toolEnvironment)
            #expect(relative.error.contains("the sound file /"), "made absolute: \(relative.error)")
            #expect(
                relative.error.contains("/sounds/ding.oga cannot be read (or is not a regular file): none played"),
                "\(relative.error)")
            #expect(try await watcher.nextNotifyAndReply().0.summary == "Otro")
        }
    }

    /// Through the agent, which plays it after the script has gone: once for a toast, not for an update of it with
    /// the same sound, again for an update that asks for another; none while Do Not Disturb is on (`--dnd show`).
    /// `toastkit progress --sound` plays it when the task ends, not for each step. The FIFO gives one line per run of
    /// the player, in order: a sound played that should not have been shows up as an unexpected line.
    @Test func theAgentPlaysEachSoundOnceAndNoneWhileDoNotDisturbIsOn() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            var env = desktop.agentEnvironment
            let fifo = try Self.fifoPlayer(in: desktop.directory, into: &env)
            func played() async throws -> String { try await firstLine(ofFIFO: fifo, within: 30) }
            // The agent may send a toast again in place (its timer starting): the next Notify with this summary.
            func shown(_ summary: String) async throws -> Bool {
                for _ in 0..<10 where try await watcher.nextNotifyAndReply().0.summary == summary { return true }
                return false
            }

            // Do Not Disturb is on when the agent starts (it reads it before it shows anything): a toast sent anyway
            // comes quietly.
            _ = try await desktop.dunstctl("set-paused", "true")
            let quiet = try await toastkit(
                ["send", "--dnd", "show", "--sound", "dialog-warning", "Urgente"], environment: env)
            #expect(quiet.status == 0, "\(quiet.error)\n\(desktop.agentFiles)")
            #expect(quiet.error.contains("sent to the server anyway"), "\(quiet.error)")
            #expect(try await shown("Urgente"))
            _ = try await desktop.dunstctl("set-paused", "false")

            // Long enough that the updates find the toast still on screen.
            let first = try await toastkit(
                ["send", "--id", "copy", "-d", "120", "--sound", "bell", "Copiando"], environment: env)
            #expect(first.status == 0, "\(first.error)")
            #expect(try await shown("Copiando"))
            let firstSound = try await played()
            #expect(
                firstSound == "\(Self.stereo)/bell.oga",
                "the first sound, not the quiet toast's\n\(first.error)\n\(quiet.error)\n\(desktop.agentFiles)")
            let update = try await toastkit(
                ["send", "--id", "copy", "-d", "120", "--sound", "bell", "Copiado"], environment: env)
            #expect(update.status == 0, "\(update.error)")
            #expect(try await shown("Copiado"))
            let other = try await toastkit(
                ["send", "--id", "copy", "-d", "120", "--sound", "complete", "Hecho"], environment: env)
            #expect(other.status == 0, "\(other.error)")
            #expect(try await shown("Hecho"))
            let second = try await played()
            #expect(second == "\(Self.stereo)/complete.oga", "the update's bell did not play")

            let steps = Array("30\n60\n90\n".utf8)
            let progress = try await toastkit(
                ["progress", "--id", "task", "--sound", "message", "Tarea"], environment: env, stdin: steps)
            #expect(progress.status == 0, "\(progress.error)")
            let last = try await played()
            #expect(last == "\(Self.stereo)/message.oga", "only the end's, once")
        }
    }

    /// A toast that `send` showed itself while no agent ran played its sound there; the agent that takes it over
    /// (the hand-over) plays it no more — not when it takes it, not for an update with the same sound — and plays an
    /// update that asks for another. Each run of the player is a line of the FIFO, in order: a sound played again
    /// would come before the update's.
    @Test func aToastTakenOverByTheAgentIsNotPlayedAgain() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            var env = desktop.agentEnvironment
            let fifo = try Self.fifoPlayer(in: desktop.directory, into: &env)
            func send(_ arguments: [String]) async throws {
                let run = try await toastkit(["send", "--id", "copy", "-d", "120"] + arguments, environment: env)
                #expect(run.status == 0, "\(arguments): \(run.error)")
            }
            try await send(["--sound", "bell", "Copiando"])
            // On dunst the agent sends it once more, in place, to hear of it (the hand-over).
            _ = try await watcher.nextNotifyTakenOver()
            #expect(try await firstLine(ofFIFO: fifo, within: 30) == "\(Self.stereo)/bell.oga", "played by send")
            try await send(["--sound", "bell", "Copiado"])
            try await send(["--sound", "complete", "Hecho"])
            let next = try await firstLine(ofFIFO: fifo, within: 30)
            #expect(
                next == "\(Self.stereo)/complete.oga",
                "neither the take-over nor the update with the same sound played it again\n\(desktop.agentFiles)")
        }
    }
    /// The agent plays a toast's sound with its sender's player (`TOASTKIT_SOUND_PLAYER` as the sender has it), not
    /// with the one of the environment the agent happened to start in (issue 39 §4): the sender's player writes the
    /// sound's file to a FIFO, and the starter's player, which would note it in a file, never runs.
    @Test func theAgentPlaysASoundWithItsSendersPlayer() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, _ in
            var starter = desktop.agentEnvironment
            let startersLog = "\(desktop.directory)/starters-player.log"
            starter["TOASTKIT_SOUND_PLAYER"] = try Self.player(
                "starters-player", in: desktop.directory, "echo \"$@\" >> \(startersLog)")
            try await Self.startAgent(on: desktop, environment: starter)
            var sender = desktop.agentEnvironment
            let fifo = try Self.fifoPlayer(in: desktop.directory, into: &sender)
            let sent = try await toastkit(["send", "-d", "120", "--sound", "bell", "Listo"], environment: sender)
            #expect(sent.status == 0 && sent.error.isEmpty, "\(sent.error)")
            let played = try await firstLine(ofFIFO: fifo, within: 20)
            #expect(played == "\(Self.stereo)/bell.oga", "the sender's player\n\(desktop.agentFiles)")
            #expect(!FileManager.default.fileExists(atPath: startersLog), "the agent's own player did not run")
        }
    }

    /// A sound that cannot be played reaches its sender through the agent exactly as on the direct path (issue 39
    /// §4): the same `warning:` line on standard error, the same `warning` event with `--json`, the toast shown and
    /// its exit code unchanged — with and without `--wait`. The sender's player cannot reach the sound server; the
    /// agent started with one that works.
    @Test func aSoundTheAgentCannotPlayIsItsSendersWarningAsOnTheDirectPath() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let failing = try Self.failingPlayer(in: desktop.directory)
            var direct = desktop.toolEnvironment
            direct["TOASTKIT_SOUND_PLAYER"] = failing
            var starter = desktop.agentEnvironment
            starter["TOASTKIT_SOUND_PLAYER"] = try Self.player("working-player", in: desktop.directory, "exit 0")
            var sender = desktop.agentEnvironment
            sender["TOASTKIT_SOUND_PLAYER"] = failing
            let warning = "toastkit: warning: \(Self.failingPlayerWarning)\n"
            func check(_ run: ToolProcess.Result, _ what: String, id: String, status: Int32) {
                #expect(run.status == status, "\(what): \(run.error)")
                #expect(run.error == warning, "\(what)\n\(desktop.agentFiles)")
                let said = events(run.output).filter { $0["event"] as? String == "warning" }
                #expect(said.count == 1, "\(what): \(run.output)")
                #expect(said.first?["reason"] as? String == Self.failingPlayerWarning, "\(what): \(run.output)")
                #expect(said.first?["id"] as? String == id, "\(what): \(run.output)")
            }
            // Each toast is shown all the same (the agent may send one again in place: the next with its title).
            func shown(_ summary: String) async throws -> Bool {
                for _ in 0..<10 where try await watcher.nextNotifyAndReply().0.summary == summary { return true }
                return false
            }
            // Each with an id of its own: an update of a toast with the same sound plays nothing.
            func send(_ id: String, _ title: String, waiting: Bool = false, in environment: [String: String])
                async throws -> ToolProcess.Result
            {
                let wait = waiting ? ["--wait", "-d", "1"] : []
                return try await toastkit(
                    ["send", "--json", "--id", id, "--sound", "bell"] + wait + [title], environment: environment)
            }
            check(try await send("directo", "Directo", in: direct), "direct", id: "directo", status: 0)
            #expect(try await shown("Directo"))
            check(
                try await send("espera", "Directo y espera", waiting: true, in: direct), "direct --wait",
                id: "espera", status: 3)
            #expect(try await shown("Directo y espera"))
            try await Self.startAgent(on: desktop, environment: starter)
            check(try await send("agente", "Agente", in: sender), "agent", id: "agente", status: 0)
            #expect(try await shown("Agente"))
            check(
                try await send("agente-espera", "Agente y espera", waiting: true, in: sender), "agent --wait",
                id: "agente-espera", status: 3)
            #expect(try await shown("Agente y espera"))
        }
    }
}
