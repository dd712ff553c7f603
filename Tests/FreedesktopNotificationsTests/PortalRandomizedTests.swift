import DBus
import FreedesktopNotifications
import Testing
import ToastKitTesting
import ToastModel

/// Seeded random event sequences through `ToastStack` and the portal presenter's state machine, against a simulated
/// portal that answers adds in any order, lets the person act on what it shows (also on notifications a toast has
/// left), hears forged signals and restarts (issue 14). After every step the rules are checked; at the end every
/// toast has ended exactly once and nothing is left on the portal.
@Suite struct PortalRandomizedTests {
    @Test(arguments: 0..<48)
    func rulesHoldAfterEveryStep(seed: UInt64) throws {
        var world = PortalWorld(seed: seed, maxVisible: seed % 3 == 0 ? 2 : 1)
        for step in 0..<400 {
            world.randomStep()
            world.checkRules(step: step)
        }
        world.finish()
    }
}

struct PortalWorld {
    typealias Machine = PortalPresenterMachine

    enum Call {
        case add(id: String, call: UInt64, portalID: String, PortalNotification)
        case remove(String)
        case connect(UInt64)
    }

    static let settle = Duration.milliseconds(500)
    var random: SeededGenerator
    let seed: UInt64
    var stack: ToastStack
    var machine = Machine(configuration: .init(appName: "random"), idPrefix: "r-", settleTime: settle)
    var now = Duration.zero
    var calls: [Call] = []
    var wakes: [Duration] = []
    /// Portal id → the notification the portal shows under it (action names).
    var live: [String: PortalNotification] = [:]
    var everAdded: Set<String> = []
    var answeredAt: [String: Duration] = [:]
    var owner = ":1.1"
    var ownerSerial = 1
    var presented: [String: Int] = [:]
    var ended: [String: Int] = [:]
    let style = ThemedToastStyle(theme: .standard)
    let ids = ["a", "b", "c", "d"]

    init(seed: UInt64, maxVisible: Int) {
        self.seed = seed
        random = SeededGenerator(seed: seed)
        stack = ToastStack(configuration: .init(defaultDuration: 4, maxVisible: maxVisible))
        carryOut(stack.attachPresenter(now: now))
    }

    // MARK: - Steps

    mutating func randomStep() {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<24: present()
        case 24..<30: carryOut(stack.dismiss(id: ids.randomElement(using: &random)!, now: now))
        case 30..<35: carryOut(Bool.random(using: &random) ? stack.pause(now: now) : stack.resume(now: now))
        case 35..<52: advance(by: .milliseconds(Int.random(in: 1...1500, using: &random)))
        case 52..<80: answerOne()
        case 80..<88: personActs()
        case 88..<91: forgedSignal()
        case 91..<93: restartPortal()
        default: answerAll()
        }
    }

    mutating func present() {
        let id = ids.randomElement(using: &random)!
        let durations: [ToastDuration] = [.automatic, 1, 2.5, .indefinite]
        let archive = ToastAction(
            id: "archive", title: "Archivar", confirmation: Bool.random(using: &random) ? "Hecho" : nil)
        let message = ToastMessage(
            id: id, title: "\(id) \(Int.random(in: 0..<1000, using: &random))",
            duration: durations.randomElement(using: &random)!,
            tapAction: Bool.random(using: &random) ? ToastAction(id: "open", title: "Abrir") : nil,
            swipeActions: Bool.random(using: &random) ? ToastSwipeActions(leading: archive) : nil)
        carryOut(stack.present(message, now: now))
    }

    /// Time passes: the center's timers and the machine's wake-ups fire in order.
    mutating func advance(by step: Duration) {
        let target = now + step
        while let wake = wakes.min(), wake <= target {
            wakes.removeAll { $0 <= wake }
            now = max(now, wake)
            carryOut(stack.advance(to: now))
            handle(.tick)
        }
        now = target
        carryOut(stack.advance(to: now))
    }

    mutating func answerOne() {
        guard !calls.isEmpty else { return }
        answer(calls.remove(at: Int.random(in: 0..<calls.count, using: &random)))
    }

    mutating func answerAll() {
        var rounds = 0
        while !calls.isEmpty, rounds < 1000 {
            answer(calls.removeFirst())
            rounds += 1
        }
    }

    mutating func answer(_ call: Call) {
        switch call {
        case .connect(let generation):
            handle(.linkReady(generation: generation, version: 1, owner: owner))
        case .add(let id, let call, let portalID, let notification):
            live[portalID] = notification
            answeredAt[portalID] = now
            handle(.addAnswered(id: id, call: call, .success(owner)))
        case .remove(let portalID):
            handle(.removeAnswered(portalID: portalID))
        }
    }

    /// The person clicks the body or a button of anything the portal shows, including a notification a toast has
    /// already left (dunst keeps one after an action: P27).
    mutating func personActs() {
        guard let (portalID, notification) = live.randomElement(using: &random),
            let action = notification.actionKeys.keys.randomElement(using: &random)
        else { return }
        handle(.actionInvoked(PortalActionInvoked(id: portalID, action: action), sender: owner))
    }

    /// Another connection sends a look-alike signal, or the portal speaks of an id that is not ours.
    mutating func forgedSignal() {
        let target = live.keys.randomElement(using: &random) ?? "r-1"
        handle(.actionInvoked(PortalActionInvoked(id: target, action: "default"), sender: ":1.666"))
        handle(.actionInvoked(PortalActionInvoked(id: "someone-else-1", action: "default"), sender: owner))
    }

    /// The portal restarts; its backend (and what it shows) lives on or goes with it.
    mutating func restartPortal() {
        if Bool.random(using: &random) { live = [:] }
        ownerSerial += 1
        owner = ":1.\(ownerSerial * 10)"
        handle(.ownerChanged(nil))
        handle(.ownerChanged(owner))
    }

    // MARK: - Glue

    mutating func carryOut(_ outputs: [ToastStack.Output]) {
        for output in outputs {
            switch output {
            case .show(let toast), .update(let toast):
                handle(.show(ToastPresentation(toast: toast, request: style.makeRequest(for: toast)), iconFile: nil))
            case .close(let id, _):
                handle(.close(id: id))
            case .timer:
                break  // the portal presenter does nothing with timer changes
            case .event(.presented(let id)):
                presented[id, default: 0] += 1
            case .event(.ended(let id, _)):
                ended[id, default: 0] += 1
                #expect(
                    ended[id, default: 0] <= presented[id, default: 0],
                    "seed \(seed): \(id) ended more often than presented")
            case .event:
                break
            case .runAction(let invocation):
                carryOut(stack.completeAction(invocation, now: now))
            case .promptReply(let invocation, _):
                carryOut(stack.replyPrompted(invocation, result: .cancelled, now: now))
            case .cancelReplyPrompt:
                break
            case .keepForLater:
                break
            }
        }
    }

    mutating func handle(_ event: Machine.Event) {
        for action in machine.handle(event, now: now) {
            switch action {
            case .connect(let generation): calls.append(.connect(generation))
            case .add(let id, let call, let portalID, let notification):
                #expect(everAdded.insert(portalID).inserted, "seed \(seed): \(portalID) added twice (P26)")
                calls.append(.add(id: id, call: call, portalID: portalID, notification))
            case .remove(let portalID):
                if let answered = answeredAt[portalID] {
                    #expect(
                        now >= answered + Self.settle,
                        "seed \(seed): \(portalID) removed \(now - answered) after its add was answered")
                } else {
                    Issue.record("seed \(seed): \(portalID) removed before its add was answered")
                }
                live[portalID] = nil
                calls.append(.remove(portalID))
            case .wake(let at):
                #expect(at > now, "seed \(seed): a wake-up for the past")
                wakes.append(at)
            case .report(let report):
                if case .closed = report { Issue.record("seed \(seed): the portal presenter reported a close") }
                carryOut(stack.handle(report, now: now))
            case .resume, .playSound: break
            }
        }
    }

    // MARK: - Rules

    func checkRules(step: Int) {
        // A question that came when every room was taken has one of its own (decision 0010).
        let ownRooms = stack.entryStates(now: now).filter(\.hasRoomOfItsOwn).count
        #expect(
            machine.wantedToastIDs.count <= stack.configuration.maxVisible + ownRooms,
            "seed \(seed) step \(step): the presenter holds \(machine.wantedToastIDs)")
        let adding = calls.compactMap { if case .add(let id, _, _, _) = $0 { id } else { nil } }
        #expect(Set(adding).count == adding.count, "seed \(seed) step \(step): two adds on their way for one toast")
        // Settled (every call answered, no wake-up pending): the portal shows exactly one notification per toast on
        // the presenter, under the id the machine knows, and nothing else of ours.
        if calls.isEmpty, wakes.isEmpty {
            var expected: Set<String> = []
            for id in machine.wantedToastIDs {
                if let portalID = machine.portalID(ofToast: id) { expected.insert(portalID) }
            }
            #expect(
                Set(live.keys) == expected,
                "seed \(seed) step \(step): the portal shows \(live.keys.sorted()), the toasts \(expected.sorted())")
        }
    }

    mutating func finish() {
        answerAll()
        carryOut(stack.dismissAll(now: now))
        for _ in 0..<4 {
            answerAll()
            advance(by: .seconds(1))
        }
        for id in ids {
            #expect(
                ended[id, default: 0] == presented[id, default: 0],
                "seed \(seed): \(id) presented \(presented[id, default: 0]) times, ended \(ended[id, default: 0])")
        }
        #expect(live.isEmpty, "seed \(seed): left on the portal: \(live.keys.sorted())")
        #expect(machine.trackedToastIDs.isEmpty && machine.retiringPortalIDs.isEmpty)
        #expect(machine.isSettled)
    }
}
