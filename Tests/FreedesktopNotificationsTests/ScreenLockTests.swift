import DBus
import FreedesktopNotifications
import TestSupport
import Testing
import ToastKitTesting
import ToastModel

/// Timers pause while the screen saver is active (M4, `org.freedesktop.ScreenSaver.ActiveChanged`).
@Suite(.timeLimit(.minutes(1))) struct ScreenLockTests {
    @Test func aLockedScreenFreezesTheRemainingTime() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let screenSaver = try await bus.connect()
        defer { screenSaver.close() }
        #expect(try await screenSaver.bus.requestName("org.freedesktop.ScreenSaver") == .primaryOwner)
        func setActive(_ active: Bool) throws {
            try screenSaver.emitSignal(
                path: "/org/freedesktop/ScreenSaver", interface: "org.freedesktop.ScreenSaver", member: "ActiveChanged",
                arguments: [.boolean(active)])
        }

        let clock = ManualClock()
        let harness = DesktopHarness(busAddress: bus.address, clock: clock)
        harness.center.present(ToastMessage(id: "copied", title: "Copiado", duration: 2))
        _ = try await server.nextNotification()
        try await clock.sleepers(count: 1)
        clock.advance(by: .seconds(1))
        try await clock.sleepers(count: 1)

        try setActive(true)
        try await clock.sleepers(atMost: 0)  // the timer stopped
        clock.advance(by: .seconds(60))
        #expect(harness.events.filter(\.isTerminal).isEmpty)

        try setActive(false)
        try await clock.sleepers(count: 1)  // running again, with the second that was left
        clock.advance(by: .seconds(1))
        #expect(try await harness.outcome(of: "copied") == .expired)
    }
}
