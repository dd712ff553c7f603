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
        #expect(
            machine.handle(.doNotDisturbRead(generation: 1, Self.on)) == [
                .report(.doNotDisturbChanged(Self.on)), .wake(at: .seconds(2)),
            ])
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

    /// mako never says when Do Not Disturb ends, nor dunst when it is resumed by a signal: while it is on, it is read
    /// again every two seconds, so held toasts are not held for ever.
    @Test func whileItIsOnItIsReadAgainEveryTwoSeconds() throws {
        var machine = Machine(configuration: PresenterMachineTests.configuration)
        let information = try #require(PresenterMachineTests.dunst.information)
        _ = machine.handle(.attached, now: .zero)
        let ready = machine.handle(
            .linkReady(
                generation: 1, capabilities: PresenterMachineTests.dunst, owner: PresenterMachineTests.server,
                doNotDisturb: Self.on), now: .zero)
        #expect(ready == [.report(.doNotDisturbChanged(Self.on)), .wake(at: .seconds(2))])
        #expect(machine.handle(.tick, now: .seconds(1)) == [.wake(at: .seconds(2))], "not yet: asked again")
        #expect(
            machine.handle(.tick, now: .seconds(2)) == [.readDoNotDisturb(generation: 1, information: information)])
        #expect(machine.handle(.doNotDisturbRead(generation: 1, Self.on), now: .seconds(2)) == [.wake(at: .seconds(4))])
        #expect(
            machine.handle(.doNotDisturbRead(generation: 1, Self.off), now: .seconds(3)) == [
                .report(.doNotDisturbChanged(Self.off))
            ])
        #expect(machine.handle(.tick, now: .seconds(4)).isEmpty, "off: no more readings")
    }

    /// A change signal that comes while the link is being made may be newer than the reading on its way: the state
    /// is read again once the link is up.
    @Test func aChangeDuringTheLinkIsReadAgainOnceItIsUp() throws {
        var machine = Machine(configuration: PresenterMachineTests.configuration)
        let information = try #require(PresenterMachineTests.dunst.information)
        _ = machine.handle(.attached)
        #expect(machine.handle(.doNotDisturbMayHaveChanged).isEmpty)
        let ready = machine.handle(
            .linkReady(
                generation: 1, capabilities: PresenterMachineTests.dunst, owner: PresenterMachineTests.server,
                doNotDisturb: Self.off))
        #expect(
            ready == [
                .report(.doNotDisturbChanged(Self.off)), .readDoNotDisturb(generation: 1, information: information),
            ])
    }
}
