import DBus
import FreedesktopNotifications
import Testing
import ToastModel

/// When the desktop presenter tells the server a toast's timer changed (decision 0011): only when the server's own
/// timer would otherwise come first, `timerNotice` before it; at once when a stopped timer runs again. A manual clock.
@Suite struct ServerTimerRuleTests {
    typealias Machine = DesktopPresenterMachine
    private let notice = Machine.timerNotice

    /// A linked machine with toast "t" shown at `at` with `seconds` of running time and answered (server id 4).
    private func shown(_ seconds: Int64, at start: Duration = .seconds(1)) throws -> Machine {
        var machine = PresenterMachineTests.linked()
        let sent = machine.handle(
            .show(PresenterMachineTests.presentation("t", remaining: .seconds(seconds))), now: start)
        let call = try #require(sent.notifyCall)
        #expect(sent.notifies.map(\.expireTimeout) == [Int32(seconds * 1000)])
        _ = machine.handle(.notifyAnswered(id: "t", call: call, PresenterMachineTests.reply(4)), now: start)
        return machine
    }

    private func wakes(_ actions: [Machine.Action]) -> [Duration] {
        actions.compactMap { if case .wake(let at) = $0 { at } else { nil } }
    }

    @Test func aShortCoverSendsNothing() throws {
        var machine = try shown(10)
        // Covered at 2 s: the server would close it at 11 s; nothing is said now, only a wake-up asked for.
        let covered = machine.handle(.timer(id: "t", remaining: .seconds(9), isRunning: false), now: .seconds(2))
        #expect(covered.notifies.isEmpty)
        #expect(wakes(covered) == [.seconds(11) - notice])
        // In front again at 3 s with its 9 s: it ends at 12 s, after the server's 11 s: still told later, not now.
        let front = machine.handle(.timer(id: "t", remaining: .seconds(9), isRunning: true), now: .seconds(3))
        #expect(front.notifies.isEmpty)
        #expect(machine.isSettled, "nothing on its way: a flush does not wait for the server's timer")
        // At 9 s (2 s before the server's 11 s) it goes, with what is left then: 12 s − 9 s.
        let due = machine.handle(.tick, now: .seconds(11) - notice)
        #expect(due.notifies.map(\.expireTimeout) == [3000])
        #expect(due.notifies.map(\.replacesID) == [4])
    }

    @Test func inFrontAgainWithTimeToSpareNothingIsSentAtAll() throws {
        var machine = try shown(10)
        _ = machine.handle(.timer(id: "t", remaining: .seconds(9), isRunning: false), now: .seconds(2))
        // Uncovered at once, with 8.5 s left: it ends at 10.5 s, before the server's 11 s.
        #expect(
            machine.handle(.timer(id: "t", remaining: .milliseconds(8500), isRunning: true), now: .seconds(2)).isEmpty)
        #expect(machine.handle(.tick, now: .seconds(11) - notice).notifies.isEmpty, "nothing held back any more")
    }

    @Test func aLongCoverIsToldNeverInTimeAndItsTimeAtOnceWhenItRunsAgain() throws {
        var machine = try shown(10)
        _ = machine.handle(.timer(id: "t", remaining: .seconds(9), isRunning: false), now: .seconds(2))
        let stopped = machine.handle(.tick, now: .seconds(11) - notice)
        #expect(stopped.notifies.map(\.expireTimeout) == [0], "the server must not close it while it is covered")
        let call = try #require(stopped.notifyCall)
        _ = machine.handle(.notifyAnswered(id: "t", call: call, PresenterMachineTests.reply(4)), now: .seconds(9))
        // A minute later it is in front again: the server, told never, is told its 9 s at once.
        let again = machine.handle(.timer(id: "t", remaining: .seconds(9), isRunning: true), now: .seconds(70))
        #expect(again.notifies.map(\.expireTimeout) == [9000])
    }

    @Test func aTimerThatStopsNearTheServersEndIsToldAtOnce() throws {
        var machine = try shown(3)
        // The server closes it at 4 s; at 2 s its notice has begun: the stop goes now.
        let covered = machine.handle(
            .timer(id: "t", remaining: .milliseconds(1500), isRunning: false), now: .seconds(2))
        #expect(covered.notifies.map(\.expireTimeout) == [0])
    }

    @Test func aToastClosedWhileItsStopWasHeldBackIsNotSentAgain() throws {
        var machine = try shown(10)
        _ = machine.handle(.timer(id: "t", remaining: .seconds(9), isRunning: false), now: .seconds(2))
        let closed = machine.handle(.close(id: "t"), now: .seconds(3))
        #expect(closed.notifies.isEmpty)
        #expect(machine.handle(.tick, now: .seconds(11) - notice).notifies.isEmpty)
    }
}
