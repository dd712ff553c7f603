import DBus
import FreedesktopNotifications
import TestSupport
import Testing
import ToastModel

/// A server that owns `org.freedesktop.Notifications` a moment before it exports its object — GNOME Shell 43's
/// notifications proxy (a gjs process that owns the name, then exports `/org/freedesktop/Notifications` once it holds
/// `org.gnome.Shell.Notifications`). The conformance matrix meets it when GNOME's notification server restarts, as
/// a race; here it is deterministic.
@Suite(.timeLimit(.minutes(1))) struct LateExportTests {
    /// A toast live while the server restarts must come back on the new server once it answers, not fail because
    /// the first call reached it before its object existed.
    @Test func aLiveToastComesBackOnAServerThatExportsLate() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let first = try await FakeNotificationServer.start(on: bus)
        let harness = DesktopHarness(busAddress: bus.address)
        harness.center.present(ToastMessage(id: "live", title: "Copia en curso", duration: 30))
        _ = try await first.nextNotification()
        first.stop()
        _ = try await harness.next { if case .presenterFailed("live", _) = $0 { true } else { false } }

        let second = try await FakeNotificationServer.start(
            on: bus, options: .init(firstID: 50, exportsAfterOwning: .milliseconds(300)))
        defer { second.stop() }
        // Whichever comes first: the toast shown on the new server, or its end.
        let comesFirst = await withTaskGroup(of: String?.self) { group in
            group.addTask { (try? await second.nextNotification()).map { "shown again: \($0.summary)" } }
            group.addTask { (try? await harness.outcome(of: "live")).map { "ended: \($0)" } }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        // UnknownMethod from a server that is not ready yet is not a refusal: it is asked again.
        #expect(comesFirst == "shown again: Copia en curso")
    }
}
