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
/// timeline — "pause at 0.5 s, resume at 3.5 s").
@Suite(.timeLimit(.minutes(1))) struct ServerTimeTests {
    static let servers: [NotificationServerKind] = [.dunst]

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
            #expect(shown.expireTimeout == 2000)

            try await Task.sleep(until: start + .milliseconds(500))
            let left = .seconds(2) - (ContinuousClock.now - start)
            harness.center.pause()
            let (paused, pausedID) = try await watcher.nextNotifyAndReply()
            #expect(paused.replacesID == id && pausedID == id, "replaced in place")
            #expect(paused.expireTimeout == 0, "the server is told never to expire it while paused")

            // Past the original 2 s, and past 3 s of pause.
            try await Task.sleep(until: start + .milliseconds(3500))
            try await watcher.sync(from: helper)
            #expect(closes(of: id, watcher).isEmpty, "the server kept it while paused")
            #expect(harness.events.filter(\.isTerminal).isEmpty)
            if server == .dunst { #expect(try desktop.displayedCount() == 1, "still on screen") }

            let resumed = ContinuousClock.now
            harness.center.resume()
            let (running, _) = try await watcher.nextNotifyAndReply()
            let told = Duration.milliseconds(running.expireTimeout)
            #expect(told <= left && told > left - .milliseconds(300), "the remaining time: \(told), \(left) left")
            #expect(try await harness.outcome(of: "copied") == .expired)
            let took = ContinuousClock.now - resumed
            #expect(took >= told - .milliseconds(50) && took < told + .seconds(1), "expired \(took) after resume")
            _ = try await watcher.nextClosed(id)
        }
    }

    @Test(arguments: servers)
    func aCoveredToastKeepsItsTimeUntilItReachesTheFront(server: NotificationServerKind) async throws {
        try await withDesktop(server, maxVisible: 2) { desktop, harness, watcher, helper in
            let start = ContinuousClock.now
            harness.center.present(ToastMessage(id: "first", title: "Primero", duration: 2))
            harness.center.present(ToastMessage(id: "second", title: "Segundo", duration: 5))
            let (first, firstID) = try await watcher.nextNotifyAndReply()
            let (second, secondID) = try await watcher.nextNotifyAndReply()
            #expect(first.summary == "Primero" && first.expireTimeout == 2000)
            #expect(second.summary == "Segundo" && second.expireTimeout == 0, "covered: it must not run out there")

            #expect(try await harness.outcome(of: "first") == .expired)
            let (front, frontID) = try await watcher.nextNotifyAndReply()
            #expect(front.replacesID == secondID && frontID == secondID)
            #expect(front.expireTimeout == 5000, "its full time once in front: \(front.expireTimeout)")

            // Past the 5 s it would have had if its time had run while covered.
            try await Task.sleep(until: start + .milliseconds(5600))
            try await watcher.sync(from: helper)
            #expect(closes(of: secondID, watcher).isEmpty, "the server kept the covered toast past 5 s")
            _ = firstID

            #expect(try await harness.outcome(of: "second") == .expired)
            let took = ContinuousClock.now - start
            #expect(took >= .milliseconds(7000) && took < .milliseconds(8500), "the covered toast ended at \(took)")
            _ = try await watcher.nextClosed(secondID)
            if server == .dunst { #expect(try desktop.totalCount() == 0) }
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
            #expect(locked.replacesID == id && locked.expireTimeout == 0)
            #expect(harness.center.isPaused)

            try await Task.sleep(until: start + .milliseconds(3500))
            try await watcher.sync(from: helper)
            #expect(closes(of: id, watcher).isEmpty, "the server kept it while the screen was locked")
            if server == .dunst { #expect(try desktop.displayedCount() == 1) }

            let unlocked = ContinuousClock.now
            try setActive(false)
            let (running, _) = try await watcher.nextNotifyAndReply()
            let told = Duration.milliseconds(running.expireTimeout)
            // The lock reaches the center a little after the signal: it has up to a few hundred ms less.
            #expect(told <= left && told > left - .milliseconds(500), "the remaining time: \(told), \(left) left")
            #expect(try await harness.outcome(of: "copied") == .expired)
            let took = ContinuousClock.now - unlocked
            #expect(took >= told - .milliseconds(50) && took < told + .seconds(1), "expired \(took) after unlocking")
        }
    }
}
