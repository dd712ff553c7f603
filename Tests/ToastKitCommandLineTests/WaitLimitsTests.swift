import Testing
import ToastKitAgent

@testable import ToastKitCommandLine

/// The tool's own limits for `send --wait`, driven with made-up times (no clock, no sleeping).
@Suite struct WaitLimitsTests {
    private let slack = WaitLimits.slack

    @Test func aTimedToastEndsByItsDurationWhateverTheServerDoes() {
        var limits = WaitLimits(duration: .seconds(3), now: .seconds(1))
        #expect(limits.next?.at == .seconds(4) + slack)
        #expect(limits.due(at: .seconds(4)) == nil)
        // The server leaves: the toast's time goes on (the center's stops), and the absence limit is later.
        limits.serverLeft(now: .seconds(2))
        #expect(limits.next?.at == .seconds(4) + slack)
        #expect(limits.next?.reason == .expired)
        #expect(limits.due(at: .seconds(4) + slack) == .expired)
    }

    @Test func theScreenLockStopsTheToastsTimeButNotTheServerAbsence() {
        var limits = WaitLimits(duration: .seconds(3), now: .zero)
        limits.pause(now: .seconds(1))
        #expect(limits.next == nil, "paused: nothing ends the wait")
        limits.serverLeft(now: .seconds(5))
        #expect(limits.next?.at == .seconds(15))
        #expect(limits.next?.reason == .serverGone)
        limits.serverReturned()
        limits.resume(now: .seconds(20))
        #expect(limits.next?.at == .seconds(22) + slack, "two seconds were left when the screen locked")
    }

    @Test func anIndefiniteToastIsLimitedOnlyWhileNoServerShowsIt() {
        var limits = WaitLimits(duration: nil, now: .zero)
        #expect(limits.next == nil)
        limits.serverLeft(now: .seconds(100))
        limits.serverLeft(now: .seconds(105))
        #expect(limits.due(at: .seconds(110)) == .serverGone, "from the first time it left")
        limits.serverReturned()
        #expect(limits.next == nil)
    }

    @Test func anInvokedActionStopsTheToastsTime() {
        var limits = WaitLimits(duration: .seconds(3), now: .zero)
        limits.actionInvoked()
        #expect(limits.next == nil)
    }
}
