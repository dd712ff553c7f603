import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

extension OneAtATime {
    /// The agent on GNOME Shell 43 (issue 18 §7): what GNOME's notification daemon does to in-place updates and to
    /// its banner queue, proven on the real shell.
    @Suite(.timeLimit(.minutes(4)))
    struct AgentGNOMEQuirkTests {
        /// Before: a toast shown without a tap, then updated in place with one, reported the click as a dismissal —
        /// GNOME keeps the first `Notify`'s click handler (`notificationDaemon.js`: with no `default` action a click
        /// opens the app and destroys the notification), and adds the new one after it. Now every toast on GNOME
        /// carries the `default` action from its first `Notify`, and a click on one without a tap is a dismissal
        /// as before.
        @Test func aTapAddedByAnInPlaceUpdateIsReportedAsTheTap() async throws {
            try await NotificationEnvironment.withWatched(.gnomeShell) { desktop, watcher in
                let env = desktop.agentEnvironment

                let first = try await toastkit(["send", "--id", "t", "-d", "indefinite", "Sin tap"], environment: env)
                #expect(first.status == 0 && first.error.isEmpty, "\(first.error)")
                let (_, serverID) = try await watcher.nextNotifyAndReply()
                #expect(try await desktop.waitForPopups(1)?.first?.title == "Sin tap")
                let waiting = try ToolProcess.start(
                    ["send", "--wait", "--id", "t", "--tap", "open=Abrir", "-d", "30", "Con tap"].map {
                        Array($0.utf8)
                    },
                    environment: env)
                let (update, sameID) = try await watcher.nextNotifyAndReply()
                #expect(update.replacesID == serverID && sameID == serverID, "updated in place")
                _ = try await desktop.waitForPopups(1)
                try await desktop.invokeAction("default", serverID: serverID, actionKeys: update.actions.map(\.key))
                let clicked = await waiting.finish()
                #expect(
                    clicked.status == 0 && clicked.output == "open\n",
                    "\(clicked.status) \(clicked.output) \(clicked.error)")

                // A toast without a tap, clicked: dismissed, as before.
                let plain = try ToolProcess.start(
                    ["send", "--wait", "-d", "30", "Sin nada"].map { Array($0.utf8) }, environment: env)
                let (plainNotify, plainID) = try await watcher.nextNotifyAndReply()
                _ = try await desktop.waitForPopups(1)
                try await desktop.invokeAction("default", serverID: plainID, actionKeys: plainNotify.actions.map(\.key))
                let dismissed = await plain.finish()
                #expect(dismissed.status == 2, "\(dismissed.status) \(dismissed.output) \(dismissed.error)")
            }
        }

        /// `toastkit run` on GNOME Shell (issue 20 §3): the toast of how the command ended pops up with its title, and
        /// its *Show output* button opens the whole output after `run` has gone (the agent carries it out).
        @Test func runsToastOnGNOMEOpensTheOutputAfterRunHasGone() async throws {
            try await NotificationEnvironment.withWatched(.gnomeShell) { desktop, watcher in
                var env = desktop.agentEnvironment
                let bin = "\(desktop.directory)/bin"
                let fifo = "\(desktop.directory)/opened"
                try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
                #expect(mkfifo(fifo, 0o600) == 0)
                // A stand-in for xdg-open that says what it was asked to open, through a FIFO the test reads (written
                // with O_CLOEXEC, see `AgentSafetyTests.writeExecutable`).
                try AgentSafetyTests.writeExecutable(
                    "\(bin)/xdg-open", "#!/bin/sh\nprintf '%s\\n' \"$1\" > '\(fifo)'\n")
                env["PATH"] = bin + ":" + (env["PATH"] ?? "/usr/bin:/bin")
                let run = try await toastkit(
                    ["run", "-d", "60", "--", "sh", "-c", "echo hola; exit 2"], environment: env)
                #expect(run.status == 2, "\(run.error)")
                #expect(run.output == "hola\n")
                let (notify, serverID) = try await watcher.nextNotifyAndReply()
                #expect(notify.summary == "sh -c 'echo hola; exit 2'")
                #expect(try await desktop.waitForPopups(1)?.first?.title == "sh -c 'echo hola; exit 2'")
                try await desktop.invokeAction("output", serverID: serverID, actionKeys: notify.actions.map(\.key))
                let opened = try await firstLine(ofFIFO: fifo, within: 30)
                let log = try #require(opened.isEmpty ? nil : opened, "the output action opened nothing within 30 s")
                #expect(log.hasPrefix("\(desktop.directory)/"), "\(log)")
                #expect(try String(contentsOfFile: log, encoding: .utf8) == "hola\n")
                try await desktop.clear()
            }
        }

        /// GNOME Shell 43 queues a notification that arrives while a banner is up; when the banner's notification is
        /// then closed by a call (the agent ends a toast on time, `toastkit close`), the shell hides it without the
        /// animation whose end shows the next one, and the queued one never pops up (`messageTray.js`,
        /// `_hideNotification(false)`). The presenter shows it: after a close on GNOME it sends its other live
        /// notifications again, in place, which makes the shell look at its queue.
        @Test func aToastWaitingInGNOMEsQueueBehindAClosedBannerPopsUp() async throws {
            try await NotificationEnvironment.withWatched(.gnomeShell) { desktop, watcher in
                let env = desktop.agentEnvironment
                let first = try await toastkit(
                    ["send", "--id", "uno", "-a", "uno", "-d", "60", "Primero"], environment: env)
                #expect(first.status == 0, "\(first.error)")
                let (_, firstID) = try await watcher.nextNotifyAndReply()
                #expect(try await desktop.waitForPopups(1)?.first?.title == "Primero")
                // Another application: not held behind the first in the agent, so the shell queues it.
                let second = try await toastkit(["send", "-a", "dos", "-d", "60", "Segundo"], environment: env)
                #expect(second.status == 0, "\(second.error)")
                _ = try await watcher.nextNotifyAndReply()
                let closed = try await toastkit(["close", "--id", "uno"], environment: env)
                #expect(closed.status == 0, "\(closed.error)")
                #expect(try await watcher.nextClosed(firstID) == 3)
                let popups = try await desktop.waitForPopups(1)
                #expect(popups?.first?.title == "Segundo", "\(popups ?? [])")
                try await desktop.clear()
            }
        }

        /// Before: a toast presented after a dismissed one could stay in GNOME's queue and never pop up. Now the
        /// next toast's banner is on screen: sent after the dismissal, or waiting in its application's lane and sent
        /// the moment the first one is dismissed (by its close button, or by a click on it). One toast of an
        /// application at a time here (`max-visible = 1`), so that the lane's queue is there to be seen.
        @Test func aToastAfterADismissedOnePopsUp() async throws {
            try await NotificationEnvironment.withWatched(.gnomeShell) { desktop, watcher in
                let env = desktop.agentEnvironment
                try desktop.configureAgent("max-visible = 1\n")
                for round in 0..<4 {
                    let queued = round >= 2
                    let byClick = round % 2 == 1
                    let sent = try await toastkit(["send", "-d", "30", "Primero \(round)"], environment: env)
                    #expect(sent.status == 0, "\(sent.error)")
                    let (firstNotify, firstID) = try await watcher.nextNotifyAndReply()
                    #expect(try await desktop.waitForPopups(1)?.first?.title == "Primero \(round)")
                    if queued {
                        let next = try await toastkit(["send", "-d", "30", "Después \(round)"], environment: env)
                        #expect(next.status == 0, "\(next.error)")
                    }
                    if byClick {
                        try await desktop.invokeAction(
                            "default", serverID: firstID, actionKeys: firstNotify.actions.map(\.key))
                    } else {
                        try await desktop.dismiss(serverID: firstID)
                    }
                    #expect(try await watcher.nextClosed(firstID) == 2)
                    if !queued {
                        let next = try await toastkit(["send", "-d", "30", "Después \(round)"], environment: env)
                        #expect(next.status == 0, "\(next.error)")
                    }
                    _ = try await watcher.nextNotifyAndReply()
                    let popups = try await desktop.waitForPopups(1)
                    #expect(popups?.first?.title == "Después \(round)", "round \(round): \(popups ?? [])")
                    try await desktop.clear()
                }
            }
        }
    }
}
