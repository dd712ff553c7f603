import Testing

@testable import ToastKitCommandLine

/// The rules of root's wait for its `--user` children (UserDelivery), in process, with time passed in.
@Suite struct UserDeliveryTests {
    private func delivery(_ names: [String], bound: Duration? = .seconds(60)) -> UserDelivery {
        UserDelivery(names: names, settings: .init(bound: bound, label: "--user all"), now: .zero)
    }

    @Test func oneUsersEndIsRootsEnd() {
        var machine = delivery(["ana"])
        #expect(machine.handle(.ended(0, .exited(3)), at: .seconds(1)) == [.finish(3)])
        var signaled = delivery(["ana"])
        #expect(signaled.handle(.ended(0, .signaled(9)), at: .seconds(1)) == [.finish(137)])
    }

    @Test func aStoppedChildIsKilledAtOnceAndSaidInOneLine() {
        var machine = delivery(["ana", "ben"], bound: nil)
        #expect(
            machine.handle(.stopped(0, signal: 19), at: .seconds(1)) == [
                .kill([0]), .report("--user all: toastkit as ana was stopped (SIGSTOP); it was ended"),
            ])
        // Its end, seen later, is no outcome of its own; Ben's decides.
        #expect(machine.handle(.ended(0, .signaled(9)), at: .seconds(1)).isEmpty)
        #expect(
            machine.handle(.ended(1, .exited(2)), at: .seconds(5)) == [
                .report("--user all: reached 1 of 2 users"), .finish(0),
            ])
    }

    @Test func aCommandThatDoesNotWaitHasItsBound() {
        var machine = delivery(["ana", "ben"])
        #expect(machine.nextDeadline == .seconds(60))
        #expect(machine.handle(.ended(1, .exited(0)), at: .seconds(1)).isEmpty)
        #expect(machine.handle(.tick, at: .seconds(59)).isEmpty)
        #expect(
            machine.handle(.tick, at: .seconds(60)) == [
                .kill([0]), .report("--user all: toastkit as ana did not end within 60 s; it was ended"),
                .report("--user all: reached 1 of 2 users"), .finish(0),
            ])
        #expect(machine.nextDeadline == nil)
        #expect(machine.handle(.tick, at: .seconds(61)).isEmpty, "finished")
    }

    @Test func aCommandThatWaitsForAPersonHasNoBoundButCtrlC() {
        var machine = delivery(["ana", "ben"], bound: nil)
        #expect(machine.nextDeadline == nil)
        #expect(machine.handle(.tick, at: .seconds(3600)).isEmpty)
        #expect(machine.handle(.interrupted(2), at: .seconds(3600)) == [.signal([0, 1], 2)])
        #expect(machine.nextDeadline == .seconds(3605))
        #expect(machine.handle(.interrupted(15), at: .seconds(3601)).isEmpty, "one interruption")
        #expect(machine.handle(.ended(0, .exited(130)), at: .seconds(3601)).isEmpty)
        #expect(machine.handle(.tick, at: .seconds(3601)).isEmpty, "within the grace")
        #expect(machine.handle(.tick, at: .seconds(3604)).isEmpty, "within the grace")
        #expect(machine.handle(.tick, at: .seconds(3605)) == [.kill([1]), .finish(130)])
    }

    @Test func rootsCodeForEveryUser() {
        // The same outcome for all: that outcome, and nobody was missed.
        var expired = delivery(["ana", "ben"], bound: nil)
        #expect(expired.handle(.ended(0, .exited(3)), at: .zero).isEmpty)
        #expect(expired.handle(.ended(1, .exited(3)), at: .zero) == [.finish(3)])
        // Nobody reached: the last failure.
        var failed = delivery(["ana", "ben"])
        #expect(failed.handle(.ended(0, .exited(69)), at: .zero).isEmpty)
        #expect(
            failed.handle(.ended(1, .exited(65)), at: .zero) == [
                .report("--user all: reached 0 of 2 users"), .finish(65),
            ])
        // Different outcomes, all shown: 0, nothing to say.
        var mixed = delivery(["ana", "ben"])
        #expect(mixed.handle(.ended(0, .exited(2)), at: .zero).isEmpty)
        #expect(mixed.handle(.ended(1, .exited(0)), at: .zero) == [.finish(0)])
        // A start that failed counts as not reached.
        var unseen = delivery(["ana", "ben"])
        #expect(unseen.handle(.ended(0, nil), at: .zero).isEmpty)
        #expect(
            unseen.handle(.ended(1, .exited(0)), at: .zero) == [
                .report("--user all: reached 1 of 2 users"), .finish(0),
            ])
    }
}
