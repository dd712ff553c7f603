import Testing

@testable import DBus

@Suite struct DeadlineQueueTests {
    @Test func theNearestEnabledDeadlineWinsWhateverTheOrderOfChanges() {
        var queue = DeadlineQueue<Int>()
        #expect(queue.nearest() == nil)
        queue.set(1, enabled: true, deadline: 50)
        queue.set(2, enabled: true, deadline: 20)
        queue.set(3, enabled: false, deadline: 10)
        #expect(queue.nearest() == 20)
        queue.remove(2)
        #expect(queue.nearest() == 50)
        queue.set(3, enabled: true, deadline: 30)
        #expect(queue.nearest() == 30)
        queue.set(3, enabled: true, deadline: 70)  // re-armed later: its old node is stale
        #expect(queue.nearest() == 50)
        queue.set(1, enabled: false, deadline: 50)
        #expect(queue.nearest() == 70)
        #expect(queue.count == 2)
    }

    @Test func dueTimeoutsComeOutNearestFirstAndStayRegistered() {
        var queue = DeadlineQueue<Int>()
        for key in [5, 1, 4, 2, 3] { queue.set(key, enabled: true, deadline: UInt64(key * 10)) }
        queue.remove(2)
        #expect(queue.takeDue(now: 35) == [1, 3])
        #expect(queue.nearest() == 40)
        #expect(queue.contains(1) && queue.contains(3) && !queue.contains(2))
        queue.set(1, enabled: true, deadline: 100)
        #expect(queue.takeDue(now: 1000) == [4, 5, 1])
    }

    @Test func thousandsOfAddsAndRemovesKeepTheHeapSmallAndCorrect() {
        var queue = DeadlineQueue<Int>()
        var expected: [Int: UInt64] = [:]
        var random = SystemRandomNumberGenerator()
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<200, using: &random)
            if step % 3 == 0 {
                queue.remove(key)
                expected[key] = nil
            } else {
                let deadline = UInt64.random(in: 0..<1_000_000, using: &random)
                queue.set(key, enabled: true, deadline: deadline)
                expected[key] = deadline
            }
            #expect(queue.nearest() == expected.values.min())
        }
        #expect(queue.count == expected.count)
    }
}

/// The one Duration → milliseconds conversion (libdbus timeouts, `poll`, `expire_timeout`).
@Suite struct MillisecondsTests {
    @Test func roundsTowardZeroOrUpAndSaturates() throws {
        #expect(Duration.milliseconds(1500).milliseconds() == 1500)
        #expect(Duration.microseconds(1999).milliseconds() == 1)
        #expect(Duration.microseconds(1999).milliseconds(roundingUp: true) == 2)
        #expect(Duration.microseconds(2000).milliseconds(roundingUp: true) == 2)
        #expect(Duration.nanoseconds(1).milliseconds(roundingUp: true) == 1)
        #expect(Duration.microseconds(-1500).milliseconds(roundingUp: true) == -1)
        #expect(Duration.seconds(Int64.max).milliseconds() == .max)
        #expect(Duration.seconds(Int64.min).milliseconds() == .min)
        #expect(try Duration.seconds(Int64.max).dbusMilliseconds() == .max)
        #expect(throws: DBusError.self) { try Duration.seconds(-1).dbusMilliseconds() }
    }
}
