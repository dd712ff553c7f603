import Glibc
import Testing
import ToastKit

@testable import ToastKitCommandLine

/// The one machine both waits run (`send --wait` directly and through the agent, `wait --id`), driven with made-up
/// times: no clock, no process, no sleeping.
@Suite struct WaitMachineTests {
    private let slack = WaitLimits.slack

    /// The serial of the timer `actions` arm, and when it fires.
    private func armed(_ actions: [WaitMachine.Action]) -> (at: Duration?, serial: UInt64)? {
        for case .arm(let at, let serial) in actions { return (at, serial) }
        return nil
    }

    @Test func aTimedToastEndsAtItsTimeAndAStaleTimerChangesNothing() throws {
        var machine = WaitMachine(duration: .seconds(3), now: .zero)
        let first = try #require(armed(machine.start()))
        #expect(first.at == .seconds(3) + slack)
        // The screen is locked at 1 s and unlocked at 5 s: the old timer is stale, the new one has 2 s left.
        #expect(armed(machine.handle(.screenLocked, now: .seconds(1)))?.at == .some(nil))
        let second = try #require(armed(machine.handle(.screenUnlocked, now: .seconds(5))))
        #expect(second.at == .seconds(7) + slack)
        #expect(machine.handle(.timerFired(serial: first.serial), now: .seconds(7) + slack).isEmpty)
        #expect(machine.handle(.timerFired(serial: second.serial), now: .seconds(7)).isEmpty, "early: not due yet")
        #expect(
            machine.handle(.timerFired(serial: second.serial), now: .seconds(7) + slack) == [.close, .end(.expired)])
    }

    @Test func anUnchangedLimitArmsNoNewTimer() {
        var machine = WaitMachine(duration: .seconds(3), now: .zero)
        _ = machine.start()
        #expect(machine.handle(.shown, now: .seconds(1)).isEmpty, "shown while not held: the limits are the same")
        #expect(machine.handle(.serverBack, now: .seconds(1)).isEmpty)
    }

    @Test func aHeldToastsTimeWaitsForDoNotDisturbToEnd() throws {
        var machine = WaitMachine(duration: .seconds(4), now: .zero)
        _ = machine.start()
        #expect(armed(machine.handle(.held, now: .seconds(1)))?.at == .some(nil), "held: nothing ends the wait")
        let shown = try #require(armed(machine.handle(.shown, now: .seconds(3601))))
        #expect(shown.at == .seconds(3604) + slack, "three seconds were left when it was held")
    }

    @Test func aSignalClosesTheToastAndAnOpenPromptIsSaidToBeClosedFirst() {
        var machine = WaitMachine(duration: .seconds(5), now: .zero)
        _ = machine.start()
        _ = machine.handle(.replyAsked(action: "reply"), now: .seconds(1))
        #expect(
            machine.handle(.signal(SIGTERM), now: .seconds(2)) == [
                .close, .replyCancelled(action: "reply"), .end(.interrupted(signal: SIGTERM)),
            ])
    }

    @Test func aPromptClosedByThePersonIsSaidOnceNotAgainAtTheEnd() throws {
        var machine = WaitMachine(duration: .seconds(1), now: .zero)
        _ = machine.start()
        let asked = try #require(armed(machine.handle(.replyAsked(action: "reply"), now: .milliseconds(500))))
        #expect(
            asked.at == .milliseconds(500) + ToastReplyPrompt.allowance + slack,
            "the prompt gets its allowance, not the toast's half second")
        #expect(
            machine.handle(.replyCancelled(action: "reply"), now: .seconds(2)) == [.replyCancelled(action: "reply")])
        #expect(machine.handle(.toastEnded(byAction: false), now: .seconds(3)).isEmpty)
    }

    @Test func theToastsOwnEndClosesAnOpenPromptUnlessAnActionEndedIt() {
        var open = WaitMachine(duration: nil, now: .zero)
        _ = open.start()
        _ = open.handle(.replyAsked(action: "reply"), now: .seconds(1))
        #expect(open.handle(.toastEnded(byAction: false), now: .seconds(2)) == [.replyCancelled(action: "reply")])

        var answered = WaitMachine(duration: nil, now: .zero)
        _ = answered.start()
        _ = answered.handle(.replyAsked(action: "reply"), now: .seconds(1))
        _ = answered.handle(.actionInvoked, now: .seconds(2))
        #expect(answered.handle(.toastEnded(byAction: true), now: .seconds(2)).isEmpty)
    }

    @Test func anInvokedActionLiftsTheTimeLimit() throws {
        var machine = WaitMachine(duration: .seconds(2), now: .zero)
        let first = try #require(armed(machine.start()))
        #expect(armed(machine.handle(.actionInvoked, now: .seconds(1)))?.at == .some(nil))
        #expect(machine.handle(.timerFired(serial: first.serial), now: .seconds(10)).isEmpty)
    }

    @Test func aServerThatLeftForGoodEndsTheWait() throws {
        var machine = WaitMachine(duration: nil, now: .zero)
        #expect(armed(machine.start())?.at == .some(nil), "an indefinite toast: no timer")
        let gone = try #require(armed(machine.handle(.serverLeft, now: .seconds(5))))
        #expect(gone.at == .seconds(5) + WaitLimits.serverAbsence)
        let back = try #require(armed(machine.handle(.serverBack, now: .seconds(8))))
        #expect(back.at == nil)
        let again = try #require(armed(machine.handle(.serverLeft, now: .seconds(20))))
        #expect(
            machine.handle(.timerFired(serial: again.serial), now: .seconds(30)) == [.close, .end(.serverGone)])
    }

    @Test func eachEndPrintsWhatAScriptReadsAndExitsWithItsCode() {
        var events: [String] = []
        func emit(_ event: String, _ fields: KeyValuePairs<String, JSONValue>) {
            events.append(([event] + fields.map { "\($0.key)=\($0.value)" }).joined(separator: " "))
        }
        #expect(WaitMachine.End.interrupted(signal: SIGINT).report(emit: emit) == .interrupted)
        #expect(WaitMachine.End.interrupted(signal: SIGTERM).report(emit: emit) == .terminated)
        #expect(WaitMachine.End.expired.report(emit: emit) == .expired)
        #expect(WaitMachine.End.serverGone.report(emit: emit) == .unavailable)
        #expect(events.count == 4)
        #expect(events[0].hasPrefix("closed") && events[0].contains("SIGINT"))
        #expect(events[1].contains("SIGTERM"))
        #expect(events[2].hasPrefix("closed") && events[2].contains("expired"))
        #expect(events[3].hasPrefix("failed") && events[3].contains("no other server started within 10 s"))
    }
}
