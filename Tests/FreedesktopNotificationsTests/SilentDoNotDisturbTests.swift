import FreedesktopNotifications
import TestSupport
import Testing
import ToastModel

extension OneAtATime {
    /// Do Not Disturb on a real server that announces no change: mako's modes, set with `makoctl`.
    @Suite(.timeLimit(.minutes(2))) struct SilentDoNotDisturbTests {
        /// mako says nothing when its `do-not-disturb` mode comes on. A center that stays linked (an app, the agent)
        /// reads it again before a new toast once the last reading is old (here at once: the age is the
        /// configuration's, so no time has to pass). That toast waits for the reading and is held, never sent to mako
        /// (which would hide it: the person would never see it); so is the one after it. When the mode is taken off,
        /// the recheck while it is on finds it off, and both are shown.
        @Test func onMakoAModeSetWhileLinkedHoldsTheNextToast() async throws {
            let desktop = try await NotificationEnvironment.start(server: .mako)
            defer { desktop.stop() }
            let harness = DesktopHarness(busAddress: desktop.bus.address, maxVisible: 3) {
                $0.doNotDisturbStaleAfter = .zero
            }
            harness.center.present(ToastMessage(id: "a", title: "Antes"))
            _ = try await harness.next("a shown") { if case .shown(id: "a") = $0 { true } else { false } }
            #expect(harness.center.doNotDisturb.isOn == false, "\(harness.center.doNotDisturb)")

            _ = try await desktop.run("makoctl", ["mode", "-a", "do-not-disturb"])
            // Indefinite: sent to mako (as it was before), it would still be in its list below.
            harness.center.present(ToastMessage(id: "b", title: "Durante", duration: .indefinite))
            let changed = try await harness.next("Do Not Disturb read again, and on") {
                if case .doNotDisturbChanged(let state) = $0 { state.isOn } else { false }
            }
            if case .doNotDisturbChanged(let state) = changed {
                #expect(state.source.hasPrefix("mako: fr.emersion.Mako.ListModes"), "\(state.source)")
            }
            for id in ["b", "c"] {
                if id == "c" { harness.center.present(ToastMessage(id: "c", title: "Después")) }
                let held = try await harness.next("\(id) held") {
                    if case .suppressed(id: id, _) = $0 { true } else { false }
                }
                if case .suppressed(_, let suppression) = held { #expect(suppression.kind == .held, "\(id)") }
            }
            await harness.center.flush()
            let listed = try await desktop.run("makoctl", ["list"])
            #expect(!listed.contains("Durante"), "never sent to mako: \(listed)")

            _ = try await desktop.run("makoctl", ["mode", "-r", "do-not-disturb"])
            for id in ["b", "c"] {
                _ = try await harness.next("\(id) shown once it is off") {
                    if case .shown(id: id) = $0 { true } else { false }
                }
            }
        }
    }
}
