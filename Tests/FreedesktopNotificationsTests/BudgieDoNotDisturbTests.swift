// Budgie's Do Not Disturb (issue 41): budgie-daemon keeps it in its dispatcher beside the server
// (`org.buddiesofbudgie.budgie.Dispatcher.GetDoNotDisturb`, `DoNotDisturbChanged`), and shows no popup for a
// non-critical toast while it is on. A center reads it as it reads the other servers': toasts are held while it is on
// and shown when it goes off. A fake server named as Budgie's and a dispatcher that answers as budgie-daemon 10.9's
// does (its interface read from budgie-desktop's source), on a private bus.
import DBus
import FreedesktopNotifications
import Synchronization
import TestSupport
import Testing
import ToastModel

@Suite(.timeLimit(.minutes(1))) struct BudgieDoNotDisturbTests {
    /// budgie-daemon's dispatcher: its Do Not Disturb switch, toggled as its applet does.
    private final class Dispatcher: Sendable {
        let connection: DBusConnection
        private let on = Mutex(false)

        init(on bus: PrivateBus) async throws {
            connection = try await bus.connect()
            var object = DBusObject(interface: "org.buddiesofbudgie.budgie.Dispatcher")
            object.method("GetDoNotDisturb") { call in call.reply([.boolean(self.isOn)]) }
            connection.export(object, at: "/org/budgie_desktop/Notifications")
            let reply = try await connection.bus.requestName("org.budgie_desktop.Notifications", flags: .doNotQueue)
            guard reply == .primaryOwner else { throw TestEnvironmentError("the dispatcher's name: \(reply)") }
        }

        var isOn: Bool { on.withLock { $0 } }

        func toggle() throws {
            let value = on.withLock {
                $0.toggle()
                return $0
            }
            try connection.emitSignal(
                path: "/org/budgie_desktop/Notifications", interface: "org.buddiesofbudgie.budgie.Dispatcher",
                member: "DoNotDisturbChanged", arguments: [.boolean(value)])
        }
    }

    @Test func aToastWaitsWhileBudgiesDoNotDisturbIsOnAndIsShownWhenItGoesOff() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(
            on: bus,
            options: .init(capabilities: ["actions", "body", "body-markup"], name: "Budgie Notification Server"))
        defer { server.stop() }
        let dispatcher = try await Dispatcher(on: bus)
        defer { dispatcher.connection.close() }
        let harness = DesktopHarness(busAddress: bus.address, maxVisible: 3)
        harness.center.present(ToastMessage(id: "a", title: "Antes"))
        _ = try await harness.next("a shown") { if case .shown(id: "a") = $0 { true } else { false } }
        #expect(harness.center.doNotDisturb.isOn == false, "\(harness.center.doNotDisturb)")

        try dispatcher.toggle()
        let changed = try await harness.next("Do Not Disturb on") {
            if case .doNotDisturbChanged(let state) = $0 { state.isOn } else { false }
        }
        if case .doNotDisturbChanged(let state) = changed {
            #expect(state.source.hasPrefix("Budgie: org.buddiesofbudgie.budgie.Dispatcher"), "\(state.source)")
        }
        harness.center.present(ToastMessage(id: "b", title: "Durante"))
        let held = try await harness.next("b held") { if case .suppressed(id: "b", _) = $0 { true } else { false } }
        if case .suppressed(_, let suppression) = held { #expect(suppression.kind == .held) }
        #expect(!server.notifications.contains { $0.arguments.summary == "Durante" }, "never sent while it is on")

        try dispatcher.toggle()
        _ = try await harness.next("b shown once it is off") { if case .shown(id: "b") = $0 { true } else { false } }
        _ = try await server.nextNotification(summary: "Durante")
    }
}
