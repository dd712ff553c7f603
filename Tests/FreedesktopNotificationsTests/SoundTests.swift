import DBus
import Foundation
import Synchronization
import TestSupport
import Testing
import ToastModel

@testable import FreedesktopNotifications

/// Sound (issue 21 §2), without a bus: which servers are sent the sound as a hint and for which the presenter plays it
/// itself, that it plays once (a toast's first appearance, or an update that asks for another sound) and never while Do
/// Not Disturb is on, and how a name is found in the freedesktop sound theme.
@Suite struct SoundTests {
    typealias Machine = DesktopPresenterMachine

    /// A server as its `GetCapabilities` and `GetServerInformation` describe it in the suite's Debian 12 versions.
    static func server(_ name: String, _ vendor: String, sound: Bool) -> ServerCapabilities {
        ServerCapabilities(
            ["actions", "body"] + (sound ? ["sound"] : []),
            information: ServerInformation(name: name, vendor: vendor, version: "1", specificationVersion: "1.2"))
    }

    static let gnome = server("gnome-shell", "GNOME", sound: true)
    static let mate = server("Notification Daemon", "MATE", sound: true)
    static let notificationDaemon = server("Notification Daemon", "GNOME", sound: true)
    static let dunst = server("dunst", "knopwob", sound: false)
    static let plasma = server("Plasma", "KDE", sound: false)

    static func mapped(
        _ sound: ToastSound?, on capabilities: ServerCapabilities, new: Bool = true
    ) throws -> MappedNotification {
        try NotificationMapping.notify(
            ToastRequest(summary: "Listo", sound: sound), expireTimeout: nil, capabilities: capabilities,
            configuration: PresenterMachineTests.configuration, soundIsNew: new)
    }

    @Test func aServerThatPlaysSoundsGetsTheHintAndTheOthersLeaveItToThePresenter() throws {
        let name = ToastSound.named("message-new-instant")
        let file = ToastSound.file("/usr/share/sounds/freedesktop/stereo/bell.oga")
        // GNOME Shell plays both.
        #expect(try Self.mapped(name, on: Self.gnome).call.hints["sound-name"] == .string("message-new-instant"))
        #expect(try Self.mapped(name, on: Self.gnome).localSound == nil)
        #expect(try Self.mapped(file, on: Self.gnome).call.hints["sound-file"] == .string(file.text))
        // MATE plays only files; notification-daemon claims sound and plays none; dunst and Plasma 5 have none.
        #expect(try Self.mapped(file, on: Self.mate).call.hints["sound-file"] == .string(file.text))
        for (server, sound) in [
            (Self.mate, name), (Self.notificationDaemon, name), (Self.dunst, file), (Self.plasma, name),
        ] {
            let mapped = try Self.mapped(sound, on: server)
            #expect(mapped.localSound == sound, "\(server.information?.name ?? "")")
            #expect(mapped.call.hints["sound-name"] == nil && mapped.call.hints["sound-file"] == nil)
        }
        // Never both: the server is sent a hint, or the presenter plays it.
        #expect(try Self.mapped(nil, on: Self.dunst).localSound == nil)
    }

    @Test func anUpdateWithTheSameSoundPlaysNothingAndSilenceIsAlwaysSent() throws {
        let name = ToastSound.named("complete")
        let update = try Self.mapped(name, on: Self.gnome, new: false)
        #expect(update.call.hints["sound-name"] == nil, "GNOME would play it again on every update")
        #expect(try Self.mapped(name, on: Self.dunst, new: false).localSound == nil)
        for server in [Self.gnome, Self.mate, Self.dunst] {
            for new in [true, false] {
                let silent = try Self.mapped(.silent, on: server, new: new)
                #expect(silent.call.hints["suppress-sound"] == .boolean(true) && silent.localSound == nil)
            }
        }
    }

    @Test func aSoundWithANulByteIsRefusedNamingTheField() {
        #expect(throws: ToastValidationError.self) { try Self.mapped(.named("bell\0"), on: Self.dunst) }
    }

    /// The portal: version 2 plays the desktop's default sound (each update is a new notification there, so an update
    /// whose sound has played is sent silent); version 1 plays none, so the presenter does.
    @Test func thePortalPlaysTheDefaultSoundOnVersionTwoAndThePresenterPlaysItOnVersionOne() throws {
        func mapped(_ sound: ToastSound?, version: UInt32, new: Bool = true) throws -> PortalNotification {
            let toast = PresentedToast(id: "a", status: .normal, title: "Listo", sound: sound)
            return try PortalNotificationMapping.notification(
                ToastPresentation(toast: toast, request: PlainToastStyle().makeRequest(for: toast)), version: version,
                configuration: PresenterMachineTests.configuration, soundIsNew: new)
        }
        let name = ToastSound.named("complete")
        #expect(try mapped(name, version: 2).fields["sound"] == .string("default"))
        #expect(try mapped(name, version: 2).localSound == nil)
        #expect(try mapped(name, version: 2, new: false).fields["sound"] == .string("silent"))
        #expect(try mapped(.silent, version: 2).fields["sound"] == .string("silent"))
        #expect(try mapped(nil, version: 2).fields["sound"] == nil)
        #expect(try mapped(name, version: 1).fields["sound"] == nil, "version 1 refuses the key")
        #expect(try mapped(name, version: 1).localSound == name)
        #expect(try mapped(name, version: 1, new: false).localSound == nil)
        #expect(try mapped(.silent, version: 1).localSound == nil)
        #expect(try mapped(name, version: 1).degradations.isEmpty, "it plays: nothing is left out")
    }

    // MARK: - The machine

    static func presentation(_ id: String, _ title: String = "T", sound: ToastSound?, running: Bool = true)
        -> ToastPresentation
    {
        let toast = PresentedToast(
            id: id, status: .normal, title: title, remaining: .seconds(4), isTimerRunning: running, sound: sound)
        return ToastPresentation(toast: toast, request: PlainToastStyle().makeRequest(for: toast))
    }

    /// Shows `presentation` and answers its Notify; returns what the answer set off.
    static func shown(_ presentation: ToastPresentation, on machine: inout Machine, serverID: UInt32) throws
        -> [Machine.Action]
    {
        let call = try #require(machine.handle(.show(presentation)).notifyCall)
        return machine.handle(
            .notifyAnswered(id: presentation.toast.id, call: call, PresenterMachineTests.reply(serverID)))
    }

    @Test func theSoundPlaysOnceTheServerAcceptedTheToastAndNotForItsUpdates() throws {
        var machine = PresenterMachineTests.linked(Self.dunst)
        let bell = ToastSound.named("bell")
        let sent = machine.handle(.show(Self.presentation("a", sound: bell)))
        #expect(!sent.contains(.playSound(id: "a", bell)), "not before the server accepted it")
        let call = try #require(sent.notifyCall)
        let accepted = machine.handle(.notifyAnswered(id: "a", call: call, PresenterMachineTests.reply(7)))
        #expect(accepted.contains(.playSound(id: "a", bell)), "\(accepted)")
        // Its timer stops, its text changes: the same sound, nothing plays.
        let paused = try Self.shown(
            Self.presentation("a", "T2", sound: bell, running: false), on: &machine, serverID: 7)
        #expect(!paused.contains { if case .playSound = $0 { true } else { false } }, "\(paused)")
        // An update that asks for another sound plays it.
        let done = ToastSound.named("complete")
        #expect(
            try Self.shown(Self.presentation("a", "Done", sound: done), on: &machine, serverID: 7).contains(
                .playSound(id: "a", done)))
        // Where the server plays it, the presenter never does.
        var gnome = PresenterMachineTests.linked(Self.gnome)
        let onGnome = try Self.shown(Self.presentation("g", sound: bell), on: &gnome, serverID: 9)
        #expect(!onGnome.contains { if case .playSound = $0 { true } else { false } }, "\(onGnome)")
    }

    /// A toast that comes back to the front (the stack says its sound has played) is shown again without it, on a
    /// server that plays sounds (no hint) and on one that does not (nothing played).
    @Test func aToastThatComesBackPlaysNoSoundAgain() throws {
        let bell = ToastSound.named("bell")
        for server in [Self.dunst, Self.gnome] {
            var machine = PresenterMachineTests.linked(server)
            let toast = PresentedToast(
                id: "a", status: .normal, title: "T", remaining: .seconds(4), isTimerRunning: true, sound: bell,
                soundHasPlayed: true)
            let presentation = ToastPresentation(toast: toast, request: PlainToastStyle().makeRequest(for: toast))
            let sent = machine.handle(.show(presentation))
            #expect(try #require(sent.notifies.first).hints["sound-name"] == nil)
            let answered = machine.handle(
                .notifyAnswered(id: "a", call: try #require(sent.notifyCall), PresenterMachineTests.reply(5)))
            #expect(!answered.contains(.playSound(id: "a", bell)), "\(answered)")
        }
    }

    @Test func aFailedNotifyPlaysNothingAndTheNextTryDoes() throws {
        var machine = PresenterMachineTests.linked(Self.dunst)
        let bell = ToastSound.named("bell")
        let call = try #require(machine.handle(.show(Self.presentation("a", sound: bell))).notifyCall)
        let failed = machine.handle(
            .notifyAnswered(id: "a", call: call, .failure(PresentationError(.refused, reason: "no"))))
        #expect(!failed.contains(.playSound(id: "a", bell)))
        #expect(
            try Self.shown(Self.presentation("a", sound: bell), on: &machine, serverID: 4).contains(
                .playSound(id: "a", bell)))
    }

    /// A machine linked to `capabilities`' server while its Do Not Disturb is on.
    static func linkedDuringDoNotDisturb(_ capabilities: ServerCapabilities) -> Machine {
        var machine = Machine(configuration: PresenterMachineTests.configuration)
        _ = machine.handle(.attached)
        _ = machine.handle(
            .linkReady(
                generation: 1, capabilities: capabilities, owner: PresenterMachineTests.server,
                doNotDisturb: DoNotDisturbMachineTests.on))
        return machine
    }

    @Test func nothingPlaysWhileDoNotDisturbIsOn() throws {
        var machine = Self.linkedDuringDoNotDisturb(Self.dunst)
        let bell = ToastSound.named("bell")
        // A toast that shows anyway (`--dnd show`) comes quietly.
        let shown = try Self.shown(Self.presentation("a", sound: bell), on: &machine, serverID: 3)
        #expect(!shown.contains(.playSound(id: "a", bell)), "\(shown)")
        _ = machine.handle(.doNotDisturbRead(generation: 1, DoNotDisturbMachineTests.off))
        #expect(
            try Self.shown(Self.presentation("b", sound: bell), on: &machine, serverID: 4).contains(
                .playSound(id: "b", bell)))
    }

    @Test func aSoundThatCouldNotBePlayedIsReportedOnce() throws {
        var machine = PresenterMachineTests.linked(Self.dunst)
        _ = try Self.shown(Self.presentation("a", sound: .named("bell")), on: &machine, serverID: 3)
        let reason =
            "no sound player: install libcanberra0, pipewire-bin or pulseaudio-utils, or set TOASTKIT_SOUND_PLAYER"
        #expect(
            machine.handle(.soundNotPlayed(id: "a", reason: reason)) == [
                .report(.degraded(toastID: "a", reason: reason))
            ])
        #expect(machine.handle(.soundNotPlayed(id: "a", reason: reason)).isEmpty, "once")
        #expect(
            machine.handle(.soundNotPlayed(id: "gone", reason: reason)) == [
                .report(.degraded(toastID: "gone", reason: reason))
            ])
    }

    /// Who waits for a toast's sounds (the agent, before it answers `Present`) is told once each has played or
    /// failed — a failure after its `degraded` report, so the report reaches the center first — and at once when none
    /// is under way; a detach from the center does not lose the sounds still playing.
    @Test func aToastsSoundsAreAwaitedUntilEachHasPlayedOrFailed() throws {
        var machine = PresenterMachineTests.linked(Self.dunst)
        #expect(machine.handle(.awaitSoundsPlayed(id: "quiet", waiter: 1)) == [.resume([1], .success(0))])
        let bell = ToastSound.named("bell"), done = ToastSound.named("complete")
        #expect(
            try Self.shown(Self.presentation("a", sound: bell), on: &machine, serverID: 7).contains(
                .playSound(id: "a", bell)))
        #expect(
            try Self.shown(Self.presentation("a", "Done", sound: done), on: &machine, serverID: 7).contains(
                .playSound(id: "a", done)))
        #expect(machine.handle(.awaitSoundsPlayed(id: "a", waiter: 2)).isEmpty, "two sounds under way")
        #expect(machine.handle(.soundPlayed(id: "a")).isEmpty, "one still under way")
        #expect(
            machine.handle(.soundNotPlayed(id: "a", reason: "paplay: exit 1")) == [
                .report(.degraded(toastID: "a", reason: "paplay: exit 1")), .resume([2], .success(7)),
            ])
        #expect(machine.handle(.awaitSoundsPlayed(id: "a", waiter: 3)) == [.resume([3], .success(7))])

        _ = try Self.shown(Self.presentation("b", sound: bell), on: &machine, serverID: 8)
        #expect(machine.handle(.awaitSoundsPlayed(id: "b", waiter: 4)).isEmpty)
        _ = machine.handle(.reset)
        #expect(machine.handle(.soundPlayed(id: "b")) == [.resume([4], .success(0))], "told after the detach too")
    }

    /// A player that fails says why in its own words: the last line it wrote ends the reason.
    @Test func aFailingPlayersLastLineIsItsReason() throws {
        let (folder, _, _, environment) = try Self.fifoPlayer()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let failing = "\(folder)/failing"
        try "#!/bin/sh\necho 'starting'\necho 'Connection failure: Connection refused  ' >&2\necho >&2\nexit 3\n"
            .write(toFile: failing, atomically: true, encoding: .utf8)
        let file = "/usr/share/sounds/freedesktop/stereo/bell.oga"
        #expect(
            SoundPlayer.command(["/bin/sh", failing]).play(.file(file), appName: "t", environment: environment)
                == "/bin/sh: exit 3: Connection failure: Connection refused")
        // The silence doctor plays: a WAV file the player is given, and who played it.
        let copy = "\(folder)/copy"
        try "#!/bin/sh\ncp \"$1\" \(folder)/silence.wav\n".write(toFile: copy, atomically: true, encoding: .utf8)
        let probed = SoundPlayer.command(["/bin/sh", copy]).probe(
            appName: "t", environment: environment, limit: .seconds(20))
        #expect(probed.player == "/bin/sh \(copy)" && probed.failures.isEmpty, "\(probed)")
        let wave = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/silence.wav"))
        #expect(Array(wave) == SoundPlayer.silentWave() && wave.count == 44 + 1600)
        let failed = SoundPlayer.command(["/bin/sh", failing]).probe(
            appName: "t", environment: environment, limit: .seconds(20))
        #expect(failed.player == nil && failed.failures == ["/bin/sh: exit 3: Connection failure: Connection refused"])
    }

    // MARK: - The sound theme

    /// A theme of the person's (`gtk-sound-theme-name`) that inherits from another, over the system's freedesktop
    /// theme: a name is looked for in the theme, then what it inherits, then freedesktop; without its last `-part`
    /// when not found.
    @Test func aNameIsFoundInThePersonsThemeThenWhatItInheritsThenFreedesktop() throws {
        let home = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: home) }
        func write(_ text: String, _ path: String) throws {
            let full = "\(home)/\(path)"
            try FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        try write("[Settings]\ngtk-sound-theme-name = mine\n", "config/gtk-3.0/settings.ini")
        try write("[Sound Theme]\nName=Mine\nInherits=base\nDirectories=stereo\n", "data/sounds/mine/index.theme")
        try write("x", "data/sounds/mine/stereo/bell.wav")
        try write("[Sound Theme]\nName=Base\nDirectories=5.1,stereo\n", "data/sounds/base/index.theme")
        try write("x", "data/sounds/base/5.1/message.ogg")
        let environment = [
            "HOME": home, "XDG_CONFIG_HOME": "\(home)/config", "XDG_DATA_HOME": "\(home)/data",
            "XDG_DATA_DIRS": "/usr/share",
        ]
        let theme = SoundTheme(environment: environment)
        #expect(theme.file(named: "bell") == "\(home)/data/sounds/mine/stereo/bell.wav", "the person's first")
        #expect(theme.file(named: "message") == "\(home)/data/sounds/base/5.1/message.ogg", "then what it inherits")
        #expect(
            theme.file(named: "message-new-instant") == "/usr/share/sounds/freedesktop/stereo/message-new-instant.oga",
            "then freedesktop (sound-theme-freedesktop)")
        #expect(theme.file(named: "message-new-email") == "\(home)/data/sounds/base/5.1/message.ogg", "less specific")
        #expect(theme.file(named: "no-such-sound") == nil)
        #expect(theme.file(named: "../../etc/passwd") == nil)
    }

    @Test func aPlayerIsGivenTheFileAndAFailureSaysWhatIsMissing() async throws {
        let (folder, log, player, environment) = try Self.fifoPlayer()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let failures = Mutex<[String]>([])
        let queue = SoundQueue()
        func play(_ player: SoundPlayer, _ sound: ToastSound, in environment: [String: String]) {
            queue.play(sound, with: player, appName: "t", environment: environment) { reason in
                failures.withLock { $0.append(reason) }
            }
        }
        // Run by /bin/sh, not executed itself: a child another test thread forks meanwhile may still hold the script
        // open for writing, and executing it would fail (ETXTBSY).
        play(.command(["/bin/sh", player, "--quiet"]), .named("bell"), in: environment)
        #expect(try await firstLine(ofFIFO: log, within: 20) == "--quiet /usr/share/sounds/freedesktop/stereo/bell.oga")
        var withVariable = environment
        withVariable["TOASTKIT_SOUND_PLAYER"] = "/bin/sh \(player) --from-variable"
        play(.automatic, .named("complete"), in: withVariable)
        #expect(
            try await firstLine(ofFIFO: log, within: 20)
                == "--from-variable /usr/share/sounds/freedesktop/stereo/complete.oga")
        SoundPlayer.waitUntilPlayed(timeout: .seconds(20))
        #expect(failures.withLock { $0 }.isEmpty)

        let stereo = "/usr/share/sounds/freedesktop/stereo"
        #expect(
            SoundPlayer.command([player]).play(.named("no-such-sound"), appName: "t", environment: environment)
                == "the sound \"no-such-sound\" is not in the sound theme: none played")
        #expect(
            SoundPlayer.command([player]).play(.file("\(folder)/missing.oga"), appName: "t", environment: environment)
                == "the sound file \(folder)/missing.oga cannot be read (or is not a regular file): none played")
        #expect(
            SoundPlayer.command([player]).play(.file(log), appName: "t", environment: environment)
                == "the sound file \(log) cannot be read (or is not a regular file): none played", "a FIFO would block")
        #expect(SoundPlayer.off.play(.named("bell"), appName: "t", environment: environment) == nil)
        #expect(
            SoundPlayer.command(["/nonexistent/player"]).play(.named("bell"), appName: "t", environment: environment)?
                .hasPrefix("the sound player /nonexistent/player could not start") == true)
        #expect(
            SoundPlayer.command(["/bin/false"]).play(
                .file("\(stereo)/bell.oga"), appName: "t", environment: environment)
                == "/bin/false: exit 1")
    }

    /// One sound at a time, at most four playing or waiting: a fifth is not played, and said so; the others play
    /// in order. The first player blocks on the FIFO until the test reads it, so the queue is full meanwhile.
    @Test func aQueueOfSoundsPlaysThemInOrderAndRefusesMoreThanItsLimit() async throws {
        let (folder, log, player, environment) = try Self.fifoPlayer()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let queue = SoundQueue(maximumWaiting: 4)
        let failures = Mutex<[String]>([])
        let names = ["bell", "complete", "message", "dialog-warning", "dialog-error"]
        for name in names {
            queue.play(.named(name), with: .command(["/bin/sh", player]), appName: "t", environment: environment) {
                reason in failures.withLock { $0.append(reason) }
            }
        }
        #expect(failures.withLock { $0 } == ["4 sounds were already waiting to play: this one was not played"])
        // Opened only now: until then the first player waits for a reader, and the queue stays full.
        let lines = FIFOLines(log)
        for name in names.prefix(4) {
            let line = try await lines.next(within: 20)
            #expect(line == "/usr/share/sounds/freedesktop/stereo/\(name).oga")
        }
    }

    @Test func aToastAdoptedFromAProcessThatPlayedItsSoundDoesNotPlayItAgain() throws {
        let bell = ToastSound.named("bell")
        for onScreen in [false, true] {
            var machine = PresenterMachineTests.linked(Self.dunst)
            _ = machine.handle(.adopt(serverID: 40, toastID: "a", onScreen: onScreen, soundPlayed: true))
            let sent = machine.handle(.show(Self.presentation("a", sound: bell)))
            if let call = sent.notifyCall {
                let answered = machine.handle(.notifyAnswered(id: "a", call: call, PresenterMachineTests.reply(40)))
                #expect(!answered.contains(.playSound(id: "a", bell)), "onScreen \(onScreen): \(answered)")
            }
        }
        // Adopted without it (`send -r N --sound`, the remembered id of `--id`): the new content's sound plays.
        var machine = PresenterMachineTests.linked(Self.dunst)
        _ = machine.handle(.adopt(serverID: 41, toastID: "b"))
        #expect(
            try Self.shown(Self.presentation("b", sound: bell), on: &machine, serverID: 41).contains(
                .playSound(id: "b", bell)))
    }

    /// Where the server plays sounds (here: one that lists `sound`), Do Not Disturb keeps the hint off a toast that
    /// shows anyway.
    @Test func aServerThatPlaysSoundsIsNotSentOneDuringDoNotDisturb() throws {
        var machine = Self.linkedDuringDoNotDisturb(Self.server("xfce4-notifyd", "Xfce", sound: true))
        let sent = machine.handle(.show(Self.presentation("a", sound: .named("bell"))))
        #expect(sent.notifies.first?.hints["sound-name"] == nil, "\(sent)")
    }

    /// A folder with a FIFO and a player script that writes its arguments to it (run it with /bin/sh: executing a
    /// script just written can fail with ETXTBSY while another thread forks), and an environment for the theme.
    static func fifoPlayer() throws -> (folder: String, fifo: String, player: String, environment: [String: String]) {
        let folder = try temporaryFolder()
        let fifo = "\(folder)/played"
        #expect(mkfifo(fifo, 0o600) == 0)
        let player = "\(folder)/player"
        try "#!/bin/sh\necho \"$@\" > \(fifo)\n".write(toFile: player, atomically: true, encoding: .utf8)
        return (folder, fifo, player, ["PATH": "/usr/bin:/bin", "HOME": folder, "XDG_DATA_DIRS": "/usr/share"])
    }

    static func temporaryFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-sound-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
