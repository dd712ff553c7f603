import DBus
import FreedesktopNotifications
import Testing
import ToastModel

/// Do Not Disturb in the desktop presenter's machine, without a bus: read when it links to a server, told to the center
/// before any toast goes out, read again when a signal says it may have changed, told only when it did.
@Suite struct DoNotDisturbMachineTests {
    typealias Machine = DesktopPresenterMachine
    static let on = ToastDoNotDisturb(isOn: true, source: "dunst: org.dunstproject.cmd0.paused")
    static let off = ToastDoNotDisturb(isOn: false, source: "dunst: org.dunstproject.cmd0.paused")

    @Test func attachingLinksAtOnceAndTellsTheStateBeforeAnyToastGoesOut() throws {
        var machine = Machine(configuration: PresenterMachineTests.configuration)
        #expect(machine.handle(.attached) == [.connect(generation: 1)], "the center waits: the link is made now")
        #expect(machine.handle(.show(PresenterMachineTests.presentation("a"))).isEmpty)
        #expect(!machine.isSettled, "not settled before the center has heard")
        let ready = machine.handle(
            .linkReady(
                generation: 1, capabilities: PresenterMachineTests.dunst, owner: PresenterMachineTests.server,
                doNotDisturb: Self.on))
        #expect(ready.first == .report(.doNotDisturbChanged(Self.on)), "told before the Notify: \(ready)")
        #expect(ready.notifies.map(\.summary) == ["T"])
    }

    @Test func aChangeSignalReadsTheStateAgainAndOnlyAChangeIsTold() throws {
        var machine = Machine(configuration: PresenterMachineTests.configuration)
        _ = machine.handle(.attached)
        _ = machine.handle(
            .linkReady(
                generation: 1, capabilities: PresenterMachineTests.dunst, owner: PresenterMachineTests.server,
                doNotDisturb: Self.off))
        #expect(machine.isSettled)
        let information = try #require(PresenterMachineTests.dunst.information)
        #expect(
            machine.handle(.doNotDisturbMayHaveChanged) == [
                .readDoNotDisturb(generation: 1, information: information)
            ])
        #expect(machine.handle(.doNotDisturbRead(generation: 1, Self.off)).isEmpty, "unchanged: nothing to tell")
        #expect(machine.handle(.doNotDisturbRead(generation: 1, Self.on)) == [.report(.doNotDisturbChanged(Self.on))])
        #expect(machine.handle(.doNotDisturbRead(generation: 0, Self.off)).isEmpty, "a stale link's answer")
    }

    @Test func aLinkThatFailsTellsTheWaitingCenterThatNothingWasRead() {
        var machine = Machine(configuration: PresenterMachineTests.configuration)
        _ = machine.handle(.attached)
        let failed = machine.handle(
            .linkFailed(generation: 1, PresentationError(.noServer, reason: "no notification server is running")))
        #expect(
            failed == [
                .report(
                    .doNotDisturbChanged(
                        ToastDoNotDisturb(isOn: false, source: "not read: no notification server is running")))
            ])
        #expect(machine.isSettled)
    }

    @Test func aPresenterThatDoesNotFollowItNeverReadsIt() {
        var configuration = PresenterMachineTests.configuration
        configuration.followsDoNotDisturb = false
        var machine = Machine(configuration: configuration)
        #expect(machine.handle(.attached).isEmpty)
        #expect(machine.handle(.doNotDisturbMayHaveChanged).isEmpty)
    }
}
