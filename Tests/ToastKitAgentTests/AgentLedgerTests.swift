// The agent's ledger in process (``AgentLedger``): every rule the agent's shell used to decide alone — an end during a
// newer presentation, `-r` continuing a toast, a snooze as deferred, held toasts answering at once, schedules keeping
// their toast's id, nothing from a schedule once leaving, claimed schedules given back, the adoption gate — on a
// manual clock, no bus, no sleep.
import DBus
import Testing
import ToastModel

@testable import ToastKitAgent

@Suite struct AgentLedgerTests {
    /// A ledger past its start, nothing live.
    func started() -> AgentLedger {
        var ledger = AgentLedger(configuration: .init(maximumLive: 100, idleTimeout: .seconds(60)))
        _ = ledger.handle(.started(now: .zero))
        #expect(ledger.phase == .serving)
        return ledger
    }

    func request(_ id: String, snooze: Double? = nil, onAction: [String: [String]] = [:]) -> AgentRequest {
        var options = SendOptions(title: "T \(id)")
        options.id = id
        options.duration = .duration(.seconds(5))
        options.snooze = snooze
        return AgentRequest(options: options, onAction: onAction)
    }

    /// `send --id a` twice in a row: the first presentation's end (replaced) comes while the second is on its way. It
    /// is not the id's end: the toast stays live, nothing is announced or forgotten; the second's end is the end.
    @Test func anEndDuringANewerPresentationEndsNothing() {
        var ledger = started()
        #expect(
            ledger.admit(id: "a", request: request("a"))
                == .admitted(lane: .application("toastkit"), opens: true, leaving: nil, releases: [], serverID: nil))
        _ = ledger.serverAnswered(id: "a", serverID: 7)
        #expect(
            ledger.admit(id: "a", request: request("a"))
                == .admitted(lane: .application("toastkit"), opens: false, leaving: nil, releases: [], serverID: 7),
            "updated in place: the number it has")
        #expect(ledger.handle(.ended(id: "a", outcome: .replaced, unexplained: nil, now: .seconds(1))) == [])
        #expect(ledger.live["a"] != nil)
        #expect(ledger.ended["a"]?.name == "replaced", "a Wait of the first presentation hears replaced")
        let end = ledger.handle(.ended(id: "a", outcome: .expired, unexplained: nil, now: .seconds(5)))
        #expect(ledger.live["a"] == nil)
        #expect(end.contains(.machine(.releaseLane(.application("toastkit")))))
        #expect(end.contains(.forget(id: "a")))
        #expect(
            end.contains(
                .announceEnd(id: "a", AgentOutcome(.expired, serverID: 7, activationToken: nil, unexplained: nil))))
        #expect(end.contains { if case .machine(.armIdle(_, at: .seconds(65))) = $0 { true } else { false } })
    }

    /// `-r 7`, where 7 is the server id of a toast the agent shows: that toast is found by its number; its waiters
    /// keep waiting (``AgentLedger/Live/continues``). An unknown number continues nothing.
    @Test func aReplaceOfAShownToastsNumberContinuesIt() {
        var ledger = started()
        _ = ledger.admit(id: "build", request: request("build"))
        #expect(ledger.serverAnswered(id: "build", serverID: 7) == 7)
        #expect(ledger.continuation(ofServerID: 7)?.id == "build")
        #expect(ledger.continuation(ofServerID: 8)?.id == nil)
        _ = ledger.admit(id: "build", request: request("build"), continues: true)
        #expect(ledger.live["build"]?.continues == true)
        #expect(ledger.live["build"]?.serverID == 7)
    }

    /// A toast with no notification (a job view) gets a number of the agent's own, kept across updates.
    @Test func aToastWithNoNotificationGetsANumberOfTheAgentsOwn() {
        var ledger = started()
        _ = ledger.admit(id: "job", request: request("job"))
        let number = ledger.serverAnswered(id: "job", serverID: 0)
        #expect(ToastAgent.viewIDs.contains(number))
        #expect(ledger.serverAnswered(id: "job", serverID: 0) == number)
        #expect(ledger.serverAnswered(id: "gone", serverID: 0) == 0, "not live: nothing is given")
    }

    /// `-A later=10m` chosen: the ledger says to schedule it again, and its end is recorded as deferred.
    @Test func aSnoozeComesBackAndEndsDeferred() {
        var ledger = started()
        let snoozing = request("tea", snooze: 600)
        _ = ledger.admit(id: "tea", request: snoozing)
        #expect(
            ledger.handle(.actionInvoked(id: "tea", action: "later", token: nil))
                == [.snooze(id: "tea", request: snoozing)])
        let end = ledger.handle(
            .ended(id: "tea", outcome: .actionInvoked(actionID: "later"), unexplained: nil, now: .seconds(1)))
        #expect(ledger.ended["tea"]?.name == "deferred")
        #expect(
            end.contains { if case .announceEnd("tea", let outcome) = $0 { outcome.name == "deferred" } else { false } }
        )
    }

    /// Later chosen on a toast with `--on-action` commands: its request is kept with it first (for `later --show`);
    /// a toast without commands keeps nothing more than its record.
    @Test func laterOnAToastWithCommandsKeepsItsRequest() {
        var ledger = started()
        let mail = request("mail", onAction: ["archive": ["true"]])
        _ = ledger.admit(id: "mail", request: mail)
        #expect(
            ledger.handle(.actionInvoked(id: "mail", action: "later", token: nil))
                == [.keepCommands(id: "mail", request: mail), .announceAction(id: "mail", action: "later", token: nil)])
        _ = ledger.admit(id: "plain", request: request("plain"))
        #expect(
            ledger.handle(.actionInvoked(id: "plain", action: "later", token: nil))
                == [.announceAction(id: "plain", action: "later", token: nil)])
    }

    /// An action's command runs with the text the person replied, and the action is announced.
    @Test func anActionRunsItsCommandWithTheReply() {
        var ledger = started()
        let asking = request("q", onAction: ["answer": ["echo"]])
        _ = ledger.admit(id: "q", request: asking)
        #expect(ledger.handle(.replied(id: "q", action: "answer", text: "yes")) == [])
        #expect(
            ledger.handle(.actionInvoked(id: "q", action: "answer", token: "T"))
                == [
                    .runCommand(id: "q", action: "answer", argv: ["echo"], request: asking, token: "T", reply: "yes"),
                    .announceAction(id: "q", action: "answer", token: "T"),
                ])
        #expect(
            ledger.handle(.actionInvoked(id: "gone", action: "x", token: nil))
                == [.announceAction(id: "gone", action: "x", token: nil)], "announced even when not live")
    }

    /// A `Present` waiting for its toast to be shown is answered when Do Not Disturb holds it (that may be hours),
    /// when it is shown, and when it ends; one that comes for a held toast is answered at once.
    @Test func heldToastsAnswerTheirWaitersAtOnce() {
        var ledger = started()
        _ = ledger.admit(id: "a", request: request("a"))
        #expect(ledger.handle(.awaitShown(id: "a", waiter: 1, onPresenter: false)) == [])
        #expect(ledger.handle(.awaitShown(id: "a", waiter: 2, onPresenter: false)) == [])
        #expect(
            ledger.handle(
                .suppressed(
                    id: "a", ToastSuppression(kind: .held, state: ToastDoNotDisturb(isOn: true, source: "dunst")))) == [
                    .resumeShown([1, 2])
                ])
        #expect(ledger.handle(.awaitShown(id: "a", waiter: 3, onPresenter: false)) == [.resumeShown([3])])
        #expect(ledger.handle(.shown(id: "a")) == [.announceShownAfterHold(id: "a")], "a waiting send starts its clock")
        #expect(ledger.handle(.shown(id: "a")) == [], "once")

        _ = ledger.admit(id: "b", request: request("b"))
        #expect(ledger.handle(.awaitShown(id: "b", waiter: 4, onPresenter: false)) == [])
        let end = ledger.handle(.ended(id: "b", outcome: .closedByApp, unexplained: nil, now: .seconds(1)))
        #expect(end.contains(.resumeShown([4])), "an end answers too")
        #expect(ledger.handle(.awaitShown(id: "b", waiter: 5, onPresenter: false)) == [.resumeShown([5])])
    }

    /// What the user's store holds is taken up with each toast's id in its request (a reminder keeps its id through
    /// the store: `close --id`, `wait --id` and `send --id` find it when it comes due), and a schedule gone from the
    /// store is cancelled.
    @Test func schedulesTakenFromTheStoreKeepTheirToastsID() {
        var ledger = started()
        var stored = ScheduleStore.Entry(
            id: "te", due: 2_000_000_000, request: AgentRequest(options: .init(title: "Tea")))
        stored.request.options.id = nil  // as an older file kept it
        let (actions, taken) = ledger.reconcile([stored], due: { _ in .seconds(4) }, now: .zero)
        #expect(taken == ["te"])
        #expect(actions == [.keepScheduled, .armSchedule(at: .seconds(4))])
        #expect(ledger.scheduled["te"]?.request.options.id == "te")
        #expect(ledger.handle(.scheduleDeadline(now: .seconds(4))) == [.fire(ids: ["te"]), .armSchedule(at: nil)])
        #expect(ledger.takeDue("te")?.request.options.id == "te", "fired with its id")
        #expect(ledger.takeDue("te") == nil, "once")

        _ = ledger.reconcile([stored], due: { _ in .seconds(10) }, now: .seconds(5))
        let (gone, _) = ledger.reconcile([], due: { _ in .zero }, now: .seconds(6))
        #expect(gone.contains(.armSchedule(at: nil)), "\(gone)")
        #expect(ledger.scheduled.isEmpty)
    }

    /// Issue 39: told which files of the store changed, the agent reconciles their ids only — a schedule of another
    /// id is not cancelled for being absent from what was read, a gone one of those ids is, and one fired on its way
    /// to be claimed is left to its claim.
    @Test func aReconcileOfSomeIdsLeavesTheOthersAsTheyAre() {
        var ledger = started()
        let entries = ["a", "b", "c"].map { ScheduleStore.Entry(id: $0, due: 2_000_000_000, request: request($0)) }
        _ = ledger.reconcile(entries, due: { _ in .seconds(10) }, now: .zero)
        #expect(Set(ledger.scheduled.keys) == ["a", "b", "c"])
        // b moved, c gone; a not looked at.
        var moved = entries[1]
        moved.due += 60
        let (actions, taken) = ledger.reconcile([moved], ids: ["b", "c"], due: { _ in .seconds(70) }, now: .seconds(1))
        #expect(taken == ["b"], "\(actions)")
        #expect(Set(ledger.scheduled.keys) == ["a", "b"])
        #expect(ledger.scheduled["b"]?.due == moved.due)
        // a fires; its claim removes its file, and the change told is no cancel of it.
        #expect(ledger.handle(.scheduleDeadline(now: .seconds(10))).contains(.fire(ids: ["a"])))
        _ = ledger.reconcile([], ids: ["a"], due: { _ in .zero }, now: .seconds(11))
        #expect(ledger.takeDue("a") != nil, "still to be shown")
        #expect(Set(ledger.scheduled.keys) == ["b"])
    }

    /// Once the agent is leaving, nothing from a schedule is fired, taken up or admitted (its claimed toasts were
    /// given back), calls are refused (their senders call the next agent), and what waited for the adoption goes on.
    @Test func aLeavingAgentTakesNothingFromASchedule() {
        var ledger = AgentLedger(configuration: .init(maximumLive: 100, idleTimeout: nil))
        #expect(ledger.handle(.awaitAdoption(waiter: 9)) == [])
        _ = ledger.reconcile([], due: { _ in .zero }, now: .zero)
        let entry = ScheduleStore.Entry(id: "r", due: 2_000_000_000, request: request("r"))
        _ = ledger.schedule(entry, due: .seconds(1), now: .zero)
        #expect(ledger.leave() == [.openCalls([9]), .armSchedule(at: nil)])
        #expect(ledger.phase == .leaving)
        #expect(ledger.handle(.scheduleDeadline(now: .seconds(2))) == [])
        #expect(ledger.admit(id: "r", request: request("r"), fromSchedule: true) == .givenBack)
        #expect(ledger.live["r"] == nil)
        #expect(ledger.reconcile([entry], due: { _ in .zero }, now: .seconds(3)).taken == [])
        #expect(ledger.handle(.callArrived) == [.refuseStopping])
        #expect(ledger.handle(.started(now: .seconds(3))) == [], "stopped while it took up its schedules")
    }

    /// Calls wait for the adoption, and are let in together once it is done; after it, at once.
    /// A scheduled toast claimed from the user's store stays the store's until a server accepts it: the toasts still
    /// claimed when the agent leaves go back (those live here stay with the journal, when it is kept), a settled one
    /// does not, and nothing is claimed after.
    @Test func claimedSchedulesGoBackWhenTheAgentLeavesFirst() {
        var ledger = started()
        for id in ["a", "b", "c"] {
            #expect(ledger.claims.isOpen)
            ledger.claims.claimed(ScheduleStore.Entry(id: id, due: 2_000_000_000, request: request(id)))
        }
        ledger.claims.settle("a")  // a server accepted it
        _ = ledger.admit(id: "b", request: request("b"))  // live, not accepted yet
        #expect(!ledger.claims.holds("a") && ledger.claims.holds("b") && ledger.claims.holds("c"))
        _ = ledger.leave()
        #expect(ledger.closeClaims(keepingLive: true).map(\.id) == ["c"], "b goes with the journal")
        #expect(!ledger.claims.isOpen && ledger.claims.entries.isEmpty, "nothing is claimed after the give-back")

        var ending = started()
        ending.claims.claimed(ScheduleStore.Entry(id: "b", due: 2_000_000_000, request: request("b")))
        _ = ending.admit(id: "b", request: request("b"))
        _ = ending.leave()
        #expect(ending.closeClaims(keepingLive: false).map(\.id) == ["b"], "the session ends: back to the store")
    }

    @Test func callsWaitForTheAdoption() {
        var ledger = AgentLedger()
        #expect(ledger.phase == .adopting)
        #expect(ledger.handle(.awaitAdoption(waiter: 1)) == [])
        #expect(ledger.handle(.awaitAdoption(waiter: 2)) == [])
        #expect(ledger.handle(.adopted) == [.openCalls([1, 2])])
        #expect(ledger.phase == .starting)
        #expect(ledger.handle(.awaitAdoption(waiter: 3)) == [.openCalls([3])])
    }

    /// After a restart of the notification server, an adopted number the presenter refused (another server gave it)
    /// is no number of the toast: the toast is shown anew, never "updated in place" over another application's.
    @Test func anAdoptedNumberThePresenterRefusedIsForgotten() {
        var ledger = started()
        _ = ledger.admit(id: "old", request: request("old"))
        ledger.adopted("old", serverID: 12)
        _ = ledger.admit(id: "view", request: request("view"))
        let own = ledger.serverAnswered(id: "view", serverID: 0)
        ledger.adoptServerIDs { _ in nil }
        #expect(ledger.live["old"]?.serverID == nil)
        #expect(ledger.continuation(ofServerID: 12)?.id == nil)
        #expect(ledger.live["view"]?.serverID == own, "the agent's own numbers are its own")
    }

    /// The bound counts live toasts: one more is refused, and the ledger holds nothing of it.
    @Test func aFullAgentRefusesAndKeepsNothing() {
        var ledger = AgentLedger(configuration: .init(maximumLive: 1, idleTimeout: nil))
        _ = ledger.handle(.started(now: .zero))
        _ = ledger.admit(id: "a", request: request("a"))
        #expect(ledger.admit(id: "b", request: request("b")) == .full)
        #expect(ledger.live.keys.sorted() == ["a"])
    }
}
