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

    static let mako = ServerCapabilities(
        ["actions", "body"],
        information: ServerInformation(name: "mako", vendor: "emersion", version: "1.7.1", specificationVersion: "1.2"))
    static let makoOff = ToastDoNotDisturb(isOn: false, source: "mako: fr.emersion.Mako.ListModes (modes: default)")
    static let makoOn = ToastDoNotDisturb(
        isOn: true, source: "mako: fr.emersion.Mako.ListModes (modes: do-not-disturb)")

    /// A machine attached and linked at time zero to `capabilities`, whose Do Not Disturb read off then.
    static func linkedAtZero(_ capabilities: ServerCapabilities = mako) -> Machine {
        var machine = Machine(configuration: PresenterMachineTests.configuration)
        _ = machine.handle(.attached, now: .zero)
        _ = machine.handle(
            .linkReady(
                generation: 1, capabilities: capabilities, owner: PresenterMachineTests.server, doNotDisturb: makoOff),
            now: .zero)
        return machine
    }

    static func reads(_ actions: [Machine.Action]) -> Int {
        actions.filter { if case .readDoNotDisturb = $0 { true } else { false } }.count
    }

    /// mako says nothing when Do Not Disturb comes on either: a process that stays linked (the agent, an app) reads it
    /// again before a new toast once the last reading is two seconds old — once for a burst, never for an update, and
    /// never on a server that announces its changes. The new toasts wait for the reading, and go out once it says off.
    @Test func onASilentServerANewToastReadsAStaleStateAgain() throws {
        let information = try #require(Self.mako.information)
        let linked = Self.linkedAtZero
        let reads = Self.reads
        let (off, on) = (Self.makoOff, Self.makoOn)
        var machine = linked(Self.mako)
        let fresh = machine.handle(.show(PresenterMachineTests.presentation("a")), now: .seconds(1))
        #expect(reads(fresh) == 0 && fresh.notifies.count == 1, "a reading a second old is fresh: \(fresh)")
        let stale = machine.handle(.show(PresenterMachineTests.presentation("b")), now: .seconds(3))
        #expect(stale == [.readDoNotDisturb(generation: 1, information: information)], "it waits: \(stale)")
        let burst = machine.handle(.show(PresenterMachineTests.presentation("c")), now: .seconds(3.5))
        #expect(burst.isEmpty, "one reading for a burst, and the toast waits for it too: \(burst)")
        #expect(!machine.isSettled, "toasts wait")
        let update = machine.handle(.show(PresenterMachineTests.presentation("a", "T2")), now: .seconds(3.5))
        #expect(reads(update) == 0, "an update in place reads nothing: \(update)")
        let read = machine.handle(.doNotDisturbRead(generation: 1, off), now: .seconds(3.6))
        #expect(read.notifies.map(\.summary) == ["T", "T"] && read.count == 2, "off: both go out, in order: \(read)")
        #expect(reads(machine.handle(.show(PresenterMachineTests.presentation("d")), now: .seconds(6))) == 1)
        #expect(
            machine.handle(.doNotDisturbRead(generation: 1, on), now: .seconds(6.5)) == [
                .report(.doNotDisturbChanged(on)), .wake(at: .seconds(8.5)), .report(.withheld(toastID: "d")),
            ])
        #expect(!machine.trackedToastIDs.contains("d"), "forgotten: the center shows it again when it is time")

        var dunst = linked(PresenterMachineTests.dunst)
        #expect(reads(dunst.handle(.show(PresenterMachineTests.presentation("a")), now: .seconds(60))) == 0)
        #expect(
            !DoNotDisturbQuery.announcesChanges(
                of: ServerInformation(name: "gnome-shell", vendor: "GNOME", version: "43", specificationVersion: "1.2"),
                gsettingsBackend: "keyfile"), "GSettings in a keyfile says nothing")
        #expect(
            DoNotDisturbQuery.announcesChanges(
                of: ServerInformation(name: "gnome-shell", vendor: "GNOME", version: "43", specificationVersion: "1.2"),
                gsettingsBackend: nil), "dconf sends Notify")
    }

    /// While new toasts wait for the reading: one the center closes is dropped (never sent), one whose time ran out is
    /// still sent once and then closed (as a toast that waited for the link), and one whose link is lost goes on as
    /// any other, to wait for the next link.
    @Test func toastsWaitingForAReadingCanBeClosedAndOutliveTheirLink() throws {
        let reads = Self.reads
        var machine = Self.linkedAtZero()
        _ = machine.handle(.show(PresenterMachineTests.presentation("gone")), now: .seconds(3))
        _ = machine.handle(.show(PresenterMachineTests.presentation("brief")), now: .seconds(3))
        #expect(machine.handle(.close(id: "gone"), now: .seconds(3)).isEmpty)
        #expect(machine.handle(.close(id: "brief", expired: true), now: .seconds(3)).isEmpty)
        let read = machine.handle(.doNotDisturbRead(generation: 1, Self.makoOff), now: .seconds(3.1))
        #expect(read.notifies.count == 1 && read.count == 1, "only the one whose time ran out, once: \(read)")
        let answered = machine.handle(
            .notifyAnswered(id: "brief", call: try #require(read.notifyCall), PresenterMachineTests.reply(9)),
            now: .seconds(3.1))
        #expect(answered.contains { if case .close(id: "brief", _, serverID: 9) = $0 { true } else { false } })
        #expect(!machine.trackedToastIDs.contains("gone"))

        var lost = Self.linkedAtZero()
        #expect(reads(lost.handle(.show(PresenterMachineTests.presentation("x")), now: .seconds(3))) == 1)
        let left = lost.handle(.ownerChanged(nil), now: .seconds(3.1))
        #expect(left.notifies.isEmpty && left.contains(.connect(generation: 2)), "it waits for a link: \(left)")
        _ = lost.handle(.linkFailed(generation: 2, PresentationError(.noServer, reason: "gone")), now: .seconds(3.2))
        #expect(lost.isSettled, "and fails for now, as any toast: the center shows it again when a server comes")
        // The answer to the old reading changes nothing.
        #expect(lost.handle(.doNotDisturbRead(generation: 1, Self.makoOn), now: .seconds(3.4)).isEmpty)
    }
}
