import DBus
import Foundation
import FreedesktopNotifications
import TestSupport
import Testing
import ToastModel

/// The server's clock follows the center's on real servers that honour `expire_timeout` (issue 10 §1): a paused,
/// covered or screen-locked toast stays on screen and gets its remaining time once it runs again.
///
/// These run on real time, because the server's timer is real: the center's own clock is the continuous clock,
/// and each check allows for a loaded 2-core machine (events are awaited; the only sleeps are the scenario's own
/// timeline — "pause at 0.5 s, resume at 3.5 s"). They run one at a time with the other real-server suites, so
/// no other desktop competes for the CPU while a timeline runs.
extension OneAtATime {
    @Suite(.timeLimit(.minutes(1))) struct ServerTimeTests {
        /// Servers that close a notification when its `expire_timeout` runs out (the ones that could contradict the
        /// center; GNOME Shell ignores the timeout, swaync hides without a signal).
        static let servers: [NotificationServerKind] = [.dunst, .mako, .lxqtNotificationd]

        /// What "never expire" is on the wire for `server` (lxqt-notificationd crashes after an update to 0).
        private func never(_ server: NotificationServerKind) -> Int32 {
            server == .lxqtNotificationd ? .max : 0
        }

        /// What `milliseconds` is on the wire for `server` (lxqt-notificationd's coarse timers get 5 % more).
        private func wire(_ milliseconds: Int32, _ server: NotificationServerKind) -> Int32 {
            server == .lxqtNotificationd ? milliseconds + (milliseconds + 19) / 20 : milliseconds
        }

        /// The remaining time a `Notify` told `server`, and whether it matches the `left` the test measured (the
        /// center's timer started a little after the test's clock read, so it may have up to `slack` less).
        private func remaining(
            told notify: NotifyCall, _ server: NotificationServerKind, left: Duration, slack: Duration
        ) -> (Duration, Bool) {
            let told = Duration.milliseconds(notify.expireTimeout)
            let remaining = server == .lxqtNotificationd ? told * 20 / 21 : told
            return (remaining, remaining <= left + .milliseconds(50) && remaining > left - slack)
        }

        private func withDesktop(
            _ server: NotificationServerKind, maxVisible: Int = 1,
            _ body: (NotificationEnvironment, DesktopHarness, BusWatcher, DBusConnection) async throws -> Void
        ) async throws {
            let desktop = try await NotificationEnvironment.start(server: server)
            defer { desktop.stop() }
            let watcher = try await BusWatcher(bus: desktop.bus.address)
            defer { watcher.stop() }
            let helper = try await desktop.bus.connect()
            defer { helper.close() }
            let harness = DesktopHarness(busAddress: desktop.bus.address, maxVisible: maxVisible)
            try await body(desktop, harness, watcher, helper)
        }

        /// `NotificationClosed` signals the monitor saw for `id` (call after `watcher.sync`).
        private func closes(of id: UInt32, _ watcher: BusWatcher) -> [DBusMessage] {
            watcher.seen { $0.member == "NotificationClosed" && $0.body.first == .uint32(id) }
        }

        @Test(arguments: servers)
        func aPausedToastStaysOnTheServerAndExpiresAfterResume(server: NotificationServerKind) async throws {
            try await withDesktop(server) { desktop, harness, watcher, helper in
                let start = ContinuousClock.now
                harness.center.present(ToastMessage(id: "copied", title: "Copiado", duration: 2))
                let (shown, id) = try await watcher.nextNotifyAndReply()
                #expect(shown.expireTimeout == wire(2000, server))

                try await Task.sleep(until: start + .milliseconds(500))
                let left = .seconds(2) - (ContinuousClock.now - start)
                harness.center.pause()
                let (paused, pausedID) = try await watcher.nextNotifyAndReply()
                #expect(paused.replacesID == id && pausedID == id, "replaced in place")
                #expect(paused.expireTimeout == never(server), "the server is told never to expire it while paused")

                // Past the original 2 s, and past 3 s of pause.
                try await Task.sleep(until: start + .milliseconds(3500))
                try await watcher.sync(from: helper)
                #expect(closes(of: id, watcher).isEmpty, "the server kept it while paused")
                #expect(harness.events.filter(\.isTerminal).isEmpty)
                #expect(try await desktop.popups().count == 1, "still on screen")

                let resumed = ContinuousClock.now
                harness.center.resume()
                let (running, _) = try await watcher.nextNotifyAndReply()
                let (told, agrees) = remaining(told: running, server, left: left, slack: .milliseconds(300))
                #expect(agrees, "the server is told the remaining time: \(told), \(left) left")
                #expect(try await harness.outcome(of: "copied") == .expired)
                let took = ContinuousClock.now - resumed
                #expect(took >= told - .milliseconds(50) && took < told + .seconds(1), "expired \(took) after resume")
                _ = try await watcher.nextClosed(id)
            }
        }

        /// Two on screen (issue 43's stack): the newer is in front and runs; the older, covered, is never closed by the
        /// server before its turn, and gets all its time back once the newer ends (the server is told, in place, when
        /// it must be: decision 0011).
        @Test(arguments: servers)
        func aCoveredToastKeepsItsTimeUntilItIsInFrontAgain(server: NotificationServerKind) async throws {
            try await withDesktop(server, maxVisible: 2) { desktop, harness, watcher, helper in
                let start = ContinuousClock.now
                harness.center.present(ToastMessage(id: "first", title: "Primero", duration: 5))
                harness.center.present(ToastMessage(id: "second", title: "Segundo", duration: 2))
                // The first goes out running (and, covered, is told nothing while the server's 5 s are far), or goes
                // out stopped at once when the second came before its Notify did.
                var firstID: UInt32?
                var second: NotifyCall?
                while firstID == nil || second == nil {
                    let (notify, id) = try await watcher.nextNotifyAndReply()
                    if notify.summary == "Segundo" {
                        second = notify
                    } else {
                        #expect(notify.summary == "Primero" && (firstID == nil || notify.replacesID == firstID))
                        firstID = id
                    }
                }
                #expect(second?.expireTimeout == wire(2000, server), "the newest is in front and runs")
                let firstOnServer = try #require(firstID)

                #expect(try await harness.outcome(of: "second") == .expired)
                // In front again, with all of its 5 s: the server is told in place to close it when the center will,
                // 7 s from the start (at once if it was told never; else 2 s before its first 5 s would have run out).
                let (front, frontID) = try await watcher.nextNotifyAndReply()
                let toldAt = ContinuousClock.now
                #expect(front.replacesID == firstOnServer && frontID == firstOnServer, "in front again, in place")
                let (told, _) = remaining(told: front, server, left: .seconds(5), slack: .seconds(5))
                let serverEnd = toldAt - start + told
                #expect(
                    serverEnd > .milliseconds(6700) && serverEnd < .milliseconds(7600),
                    "the server was told to close it \(serverEnd) after the start, not when the center does (7 s)")

                // Past the 5 s it would have had if its time had run while covered.
                try await Task.sleep(until: start + .milliseconds(5600))
                try await watcher.sync(from: helper)
                #expect(closes(of: firstOnServer, watcher).isEmpty, "the server kept the covered toast past 5 s")

                #expect(try await harness.outcome(of: "first") == .expired)
                let took = ContinuousClock.now - start
                #expect(took >= .milliseconds(6700) && took < .milliseconds(8500), "the covered toast ended at \(took)")
                _ = try await watcher.nextClosed(firstOnServer)
                #expect(try await desktop.waitForPopups(0) != nil, "gone from the screen")
            }
        }

        @Test(arguments: servers)
        func aLockedScreenPausesLikePause(server: NotificationServerKind) async throws {
            try await withDesktop(server) { desktop, harness, watcher, helper in
                let screenSaver = try await desktop.bus.connect()
                defer { screenSaver.close() }
                #expect(try await screenSaver.bus.requestName("org.freedesktop.ScreenSaver") == .primaryOwner)
                func setActive(_ active: Bool) throws {
                    try screenSaver.emitSignal(
                        path: "/org/freedesktop/ScreenSaver", interface: "org.freedesktop.ScreenSaver",
                        member: "ActiveChanged", arguments: [.boolean(active)])
                }
                let start = ContinuousClock.now
                harness.center.present(ToastMessage(id: "copied", title: "Copiado", duration: 2))
                let (_, id) = try await watcher.nextNotifyAndReply()

                try await Task.sleep(until: start + .milliseconds(500))
                let left = .seconds(2) - (ContinuousClock.now - start)
                try setActive(true)
                let (locked, _) = try await watcher.nextNotifyAndReply()
                #expect(locked.replacesID == id && locked.expireTimeout == never(server))
                #expect(harness.center.isPaused)

                try await Task.sleep(until: start + .milliseconds(3500))
                try await watcher.sync(from: helper)
                #expect(closes(of: id, watcher).isEmpty, "the server kept it while the screen was locked")
                #expect(try await desktop.popups().count == 1, "still on screen")

                let unlocked = ContinuousClock.now
                try setActive(false)
                let (running, _) = try await watcher.nextNotifyAndReply()
                // The lock reaches the center a little after the signal: it has up to a few hundred ms less.
                let (told, agrees) = remaining(told: running, server, left: left, slack: .milliseconds(500))
                #expect(agrees, "the server is told the remaining time: \(told), \(left) left")
                #expect(try await harness.outcome(of: "copied") == .expired)
                let took = ContinuousClock.now - unlocked
                #expect(
                    took >= told - .milliseconds(50) && took < told + .seconds(1), "expired \(took) after unlocking")
            }
        }
    }
}
