import Testing
import ToastKitTesting

@Suite("ManualClock", .timeLimit(.minutes(1)))
struct ManualClockTests {
    @Test("sleepers wake only when time passes their deadline, and tests can wait for them")
    func wakesOnAdvance() async throws {
        let clock = ManualClock()
        let task = Task {
            try await clock.sleep(until: clock.now.advanced(by: .seconds(5)))
            return clock.now
        }
        try await clock.sleepers(count: 1)
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(5)))
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(2))
        #expect(try await task.value == ManualClock.Instant(offset: .seconds(6)))
        #expect(clock.sleeperCount == 0)
    }

    @Test("a past deadline returns at once; cancellation throws and removes the sleeper")
    func pastAndCancelled() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(3))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(1)))
        let task = Task { try await clock.sleep(for: .seconds(10)) }
        try await clock.sleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("time never goes backwards")
    func monotonic() {
        let clock = ManualClock()
        clock.advance(to: ManualClock.Instant(offset: .seconds(2)))
        clock.advance(to: ManualClock.Instant(offset: .seconds(1)))
        #expect(clock.now.offset == .seconds(2))
    }
}
