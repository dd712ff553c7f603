import Testing
import ToastKitTesting

@testable import ToastKitAgent

/// The agent's rules in process, without a bus, a process or a sleep: events in with the time they happen, actions
/// out (issue 18 §1).
@Suite struct AgentMachineTests {
    static let idle = Duration.seconds(60)

    func started(maximumLive: Int = 20_000) -> AgentMachine {
        var machine = AgentMachine(configuration: .init(maximumLive: maximumLive, idleTimeout: Self.idle))
        #expect(machine.handle(.started(now: .zero)) == [.armIdle(serial: 1, at: Self.idle)])
        return machine
    }

    @Test func anIdleAgentExitsAtItsDeadlineAndRefusesEveryCallAfter() {
        var machine = started()
        #expect(machine.handle(.idleDeadline(serial: 1, now: Self.idle)) == [.exit])
        #expect(machine.isStopping)
        // A call that arrives after the decision is refused, never taken and dropped.
        #expect(machine.handle(.callArrived) == [.refuseStopping])
        #expect(machine.calls == 0)
    }

    /// Scheduled toasts (`send --in`, `--at`, a snooze, issue 20 §5) keep the agent until they are shown, fire in the
    /// order they are due, and count as calls in hand until presented: the exit never comes between.
    @Test func scheduledToastsKeepTheAgentAndFireInTheirOrder() {
        var machine = started()
        #expect(
            machine.handle(.schedule(id: "b", due: .seconds(20), now: .seconds(1)))
                == [.keepScheduled, .armSchedule(at: .seconds(20))])
        #expect(
            machine.handle(.schedule(id: "a", due: .seconds(10), now: .seconds(2)))
                == [.keepScheduled, .armSchedule(at: .seconds(10))])
        // The idle countdown armed at the start is stale: something waits for its time.
        #expect(machine.handle(.idleDeadline(serial: 1, now: Self.idle)) == [])
        #expect(machine.handle(.scheduleDeadline(now: .seconds(9))) == [.armSchedule(at: .seconds(10))], "not yet")
        #expect(
            machine.handle(.scheduleDeadline(now: .seconds(25)))
                == [.fire(ids: ["a", "b"]), .armSchedule(at: nil)], "both due, soonest first")
        #expect(machine.calls == 2, "in hand until presented")
        #expect(
            machine.handle(.present(id: "a", traits: .init())) == [.admit(lane: .application("toastkit"), opens: true)])
        #expect(machine.handle(.callAnswered(now: .seconds(25))) == [])
        #expect(
            machine.handle(.present(id: "b", traits: .init())) == [.admit(lane: .application("toastkit"), opens: false)]
        )
        #expect(machine.handle(.callAnswered(now: .seconds(25))) == [], "toasts are live: no countdown")
        _ = machine.handle(.ended(id: "a", replaced: false, now: .seconds(30)))
        let last = machine.handle(.ended(id: "b", replaced: false, now: .seconds(31)))
        #expect(last.contains { if case .armIdle(_, at: .seconds(91)) = $0 { true } else { false } }, "\(last)")
    }

    /// A new agent takes up the user's schedules before it starts: then its first idle countdown is never armed.
    @Test func schedulesTakenUpBeforeTheStartKeepTheAgent() {
        var machine = AgentMachine(configuration: .init(maximumLive: 10, idleTimeout: .milliseconds(1)))
        #expect(
            machine.handle(.schedule(id: "a", due: .seconds(5), now: .zero))
                == [.keepScheduled, .armSchedule(at: .seconds(5))])
        #expect(machine.handle(.started(now: .zero)) == [], "no countdown while something waits for its time")
    }

    @Test func aCancelledScheduleLetsTheAgentGoAndTheBoundCountsSchedules() {
        var machine = started(maximumLive: 2)
        _ = machine.handle(.schedule(id: "a", due: .seconds(100), now: .zero))
        #expect(
            machine.handle(.schedule(id: "a", due: .seconds(50), now: .zero)) == [
                .keepScheduled, .armSchedule(at: .seconds(50)),
            ], "the id's new time replaces the old")
        _ = machine.handle(.present(id: "live", traits: .init()))
        #expect(machine.handle(.schedule(id: "c", due: .seconds(10), now: .zero)) == [.refuseFull])
        #expect(machine.handle(.cancelSchedule(id: "nobody", now: .zero)) == [])
        #expect(machine.handle(.cancelSchedule(id: "a", now: .seconds(1))) == [.armSchedule(at: nil)])
        let ended = machine.handle(.ended(id: "live", replaced: false, now: .seconds(2)))
        #expect(ended.contains { if case .armIdle(_, at: .seconds(62)) = $0 { true } else { false } }, "\(ended)")
    }

    @Test func aCallInHandKeepsTheAgentAndMakesTheCountdownStale() {
        var machine = started()
        #expect(machine.handle(.callArrived) == [.takeCall])
        // The old countdown's deadline comes while the call is in hand: nothing happens.
        #expect(machine.handle(.idleDeadline(serial: 1, now: Self.idle)) == [])
        let answered = machine.handle(.callAnswered(now: .seconds(70)))
        guard case .armIdle(let serial, let at)? = answered.first else {
            Issue.record("no new countdown: \(answered)")
            return
        }
        #expect(at == .seconds(130))
        #expect(machine.handle(.idleDeadline(serial: 1, now: .seconds(130))) == [], "a stale countdown")
        #expect(machine.handle(.idleDeadline(serial: serial, now: .seconds(130))) == [.exit])
    }

    @Test func aLiveToastKeepsTheAgentUntilItEnds() {
        var machine = started()
        _ = machine.handle(.callArrived)
        #expect(
            machine.handle(.present(id: "a", traits: .init())) == [.admit(lane: .application("toastkit"), opens: true)])
        #expect(machine.handle(.callAnswered(now: .seconds(1))) == [], "a toast is live: no countdown")
        let ended = machine.handle(.ended(id: "a", replaced: false, now: .seconds(5)))
        #expect(ended.first == .releaseLane(.application("toastkit")))
        #expect(
            ended.dropFirst().first.map { if case .armIdle(_, let at) = $0 { at == .seconds(65) } else { false } }
                == true)
    }

    @Test func eachKindOfToastJoinsItsLaneAndALiveIDStaysInItsLane() {
        var machine = started()
        _ = machine.handle(.callArrived)
        #expect(
            machine.handle(.present(id: "a", traits: .init(appName: "backup"))) == [
                .admit(lane: .application("backup"), opens: true)
            ])
        #expect(
            machine.handle(.present(id: "b", traits: .init(appName: "backup"))) == [
                .admit(lane: .application("backup"), opens: false)
            ])
        #expect(
            machine.handle(.present(id: "q", traits: .init(question: true))) == [.admit(lane: .own("q"), opens: true)])
        #expect(
            machine.handle(.present(id: "i", traits: .init(indefinite: true))) == [.admit(lane: .own("i"), opens: true)]
        )
        #expect(
            machine.handle(.present(id: "w", traits: .init(waited: true))) == [.admit(lane: .own("w"), opens: true)])
        #expect(
            machine.handle(.present(id: "r", traits: .init(replacesServerID: true))) == [
                .admit(lane: .own("r"), opens: true)
            ])
        #expect(
            machine.handle(.present(id: "d", traits: .init(desktopEntry: "org.example.App", appName: "backup")))
                == [.admit(lane: .application("desktop-entry:org.example.App"), opens: true)])
        // Replaced (`--id` again) with the same kind: still its lane, updated in place.
        #expect(
            machine.handle(.present(id: "a", traits: .init(appName: "other")))
                == [.admit(lane: .application("backup"), opens: false)])
        #expect(machine.handle(.ended(id: "a", replaced: true, now: .seconds(1))) == [], "a replacement is still live")
        // Replaced with traits that call for a lane of its own (indefinite): it leaves its application's lane, so it
        // can neither block nor wait in it.
        #expect(
            machine.handle(.present(id: "a", traits: .init(indefinite: true)))
                == [.leave(lane: .application("backup")), .admit(lane: .own("a"), opens: true)])
        #expect(machine.handle(.ended(id: "a", replaced: false, now: .seconds(2))) == [.releaseLane(.own("a"))])
        #expect(
            machine.handle(.ended(id: "b", replaced: false, now: .seconds(3))) == [.releaseLane(.application("backup"))]
        )
        // The last of its lane leaving it releases the lane.
        _ = machine.handle(.present(id: "e", traits: .init(appName: "solo")))
        #expect(
            machine.handle(.present(id: "e", traits: .init(waited: true))) == [
                .leave(lane: .application("solo")), .releaseLane(.application("solo")),
                .admit(lane: .own("e"), opens: true),
            ])
        #expect(machine.liveCount == 6)
    }

    @Test func theLiveBoundRefusesOneMoreButNotAReplacement() {
        var machine = started(maximumLive: 2)
        _ = machine.handle(.callArrived)
        _ = machine.handle(.present(id: "a", traits: .init()))
        _ = machine.handle(.present(id: "b", traits: .init()))
        #expect(machine.handle(.present(id: "c", traits: .init())) == [.refuseFull])
        #expect(
            machine.handle(.present(id: "a", traits: .init())) == [.admit(lane: .application("toastkit"), opens: false)]
        )
        _ = machine.handle(.ended(id: "a", replaced: false, now: .seconds(1)))
        #expect(
            machine.handle(.present(id: "c", traits: .init())) == [.admit(lane: .application("toastkit"), opens: false)]
        )
    }

    @Test func withoutAnIdleTimeNoCountdownIsArmed() {
        var machine = AgentMachine(configuration: .init(idleTimeout: nil))
        #expect(machine.handle(.started(now: .zero)) == [])
        _ = machine.handle(.callArrived)
        #expect(machine.handle(.callAnswered(now: .seconds(1))) == [])
    }

    /// A seeded random walk of calls, toasts and deadlines: the machine never exits with a call in hand or a toast
    /// live, and every refusal comes only after the exit (its debug invariants run after every event).
    @Test func aRandomWalkNeverExitsWithWorkInHand() {
        var generator = SeededGenerator(seed: 18)
        for _ in 0..<200 {
            var machine = started()
            var now = Duration.zero
            var armed: [UInt64] = [1]
            var live: [String] = []
            for _ in 0..<100 {
                now += .milliseconds(Int64.random(in: 1...90_000, using: &generator))
                let actions: [AgentMachine.Action]
                switch Int.random(in: 0..<5, using: &generator) {
                case 0:
                    actions = machine.handle(.callArrived)
                    if actions == [.takeCall] {
                        let id = "t\(Int.random(in: 0..<5, using: &generator))"
                        if !live.contains(id) { live.append(id) }
                        _ = machine.handle(.present(id: id, traits: .init()))
                        _ = machine.handle(.callAnswered(now: now))
                    }
                case 1 where !live.isEmpty:
                    let id = live.removeFirst()
                    actions = machine.handle(.ended(id: id, replaced: false, now: now))
                default:
                    actions = machine.handle(
                        .idleDeadline(serial: armed.randomElement(using: &generator) ?? 0, now: now))
                }
                for case .armIdle(let serial, _) in actions { armed.append(serial) }
                if actions.contains(.exit) {
                    #expect(machine.calls == 0 && machine.liveCount == 0 && live.isEmpty)
                }
                if actions.contains(.refuseStopping) { #expect(machine.isStopping) }
            }
        }
    }
}
