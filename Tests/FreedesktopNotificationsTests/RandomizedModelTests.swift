import DBus
import FreedesktopNotifications
import Testing
import ToastKitTesting
import ToastModel

/// Seeded random event sequences through the whole model: `ToastStack` and the desktop presenter's state machine
/// wired together, against a simulated server that answers calls in any order, closes notifications as a person
/// would, invokes actions and restarts (issue 10 §4). After every step the model's rules are checked.
@Suite struct RandomizedModelTests {
    @Test(arguments: 0..<64)
    func rulesHoldAfterEveryStep(seed: UInt64) throws {
        var world = World(seed: seed, maxVisible: seed % 3 == 0 ? 2 : 1)
        for step in 0..<400 {
            world.randomStep()
            world.checkRules(step: step)
        }
        world.finish()
    }
}

struct World {
    typealias Machine = DesktopPresenterMachine

    /// One call the simulated server has received and not answered yet.
    enum Call {
        case notify(id: String, call: UInt64, NotifyCall)
        case close(id: String, call: UInt64, serverID: UInt32)
        case discard(UInt32)
        case connect(UInt64)
    }

    var random: SeededGenerator
    let seed: UInt64
    var stack: ToastStack
    var machine = Machine(configuration: PresenterConfiguration(appName: "random"))
    var now = Duration.zero
    var calls: [Call] = []
    /// The moments the machine asked to be woken at (``DesktopPresenterMachine/Action/wake(at:)``).
    var wakes: [Duration] = []
    /// The server's notifications: id → (toast, expire_timeout, when the server's timer closes it: from when the
    /// server had the `Notify`).
    var live: [UInt32: (toast: String, expire: Int32, closesAt: Duration?)] = [:]
    var nextServerID: UInt32 = 1
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
        case 0..<22: present()
        case 22..<28: carryOut(stack.dismiss(id: ids.randomElement(using: &random)!, now: now))
        case 28..<33: carryOut(Bool.random(using: &random) ? stack.pause(now: now) : stack.resume(now: now))
        case 33..<36: carryOut(stack.handle(Bool.random(using: &random) ? .pauseRequested : .resumeRequested, now: now))
        case 36..<50: advance()
        case 50..<80: answerOne()
        case 80..<87: serverCloses()
        case 87..<94: personActs()
        case 94..<96: restartServer()
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
            swipeActions: Bool.random(using: &random) ? ToastSwipeActions(leading: archive) : nil)
        carryOut(stack.present(message, now: now))
    }

    mutating func advance() {
        let wasPaused = stack.isPaused
        let before = ended.values.reduce(0, +)
        let endedBefore = endedExpired
        now += .milliseconds(Int.random(in: 1...3000, using: &random))
        carryOut(stack.advance(to: now))
        wakeIfDue()
        if wasPaused {
            #expect(endedExpired == endedBefore, "seed \(seed): a paused center expired a toast")
        }
        _ = before
    }

    var endedExpired = 0

    mutating func answerOne() {
        guard !calls.isEmpty else { return }
        // Different toasts' calls are answered in any order; one toast's calls are in order (one at a time anyway).
        let index = Int.random(in: 0..<calls.count, using: &random)
        answer(calls.remove(at: index))
    }

    /// Feeds the machine its tick when a moment it asked for has come (as the shell's timer does).
    mutating func wakeIfDue() {
        guard wakes.contains(where: { $0 <= now }) else { return }
        wakes.removeAll { $0 <= now }
        handle(.tick)
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
            let capabilities = ServerCapabilities(["actions", "body", "body-markup"])
            handle(.linkReady(generation: generation, capabilities: capabilities, owner: owner))
        case .notify(let id, let call, let arguments):
            let serverID: UInt32
            if arguments.replacesID != 0, live[arguments.replacesID] != nil {
                serverID = arguments.replacesID
            } else {
                serverID = nextServerID
                nextServerID += 1
            }
            let closesAt = arguments.expireTimeout > 0 ? now + .milliseconds(Int64(arguments.expireTimeout)) : nil
            live[serverID] = (id, arguments.expireTimeout, closesAt)
            handle(.notifyAnswered(id: id, call: call, .success(.init(serverID: serverID, sender: owner))))
        case .close(let id, let call, let serverID):
            let wasLive = live.removeValue(forKey: serverID) != nil
            handle(.closeAnswered(id: id, call: call))
            if wasLive { handle(.signal(.closed(id: serverID, reason: .closedByCall), sender: owner)) }
        case .discard(let serverID):
            live[serverID] = nil
        }
    }

    /// The person closes a notification, or the server expires one whose timeout ran out.
    mutating func serverCloses() {
        guard let (serverID, notification) = live.randomElement(using: &random) else { return }
        live[serverID] = nil
        let reason: NotificationCloseReason =
            notification.expire > 0 && Bool.random(using: &random) ? .expired : .dismissedByUser
        handle(.signal(.closed(id: serverID, reason: reason), sender: owner))
        if Bool.random(using: &random) {
            // swaync sends a second close for the same notification.
            handle(.signal(.closed(id: serverID, reason: .dismissedByUser), sender: owner))
        }
    }

    mutating func personActs() {
        guard let (serverID, _) = live.randomElement(using: &random) else { return }
        if Bool.random(using: &random) { handle(.signal(.activationToken(id: serverID, token: "t"), sender: owner)) }
        handle(.signal(.actionInvoked(id: serverID, key: "archive"), sender: owner))
        if Bool.random(using: &random) {
            // Plasma closes it with reason 3 after an action.
            live[serverID] = nil
            handle(.signal(.closed(id: serverID, reason: .closedByCall), sender: owner))
        }
    }

    mutating func restartServer() {
        live = [:]
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
                handle(.show(ToastPresentation(toast: toast, request: style.makeRequest(for: toast))))
            case .close(let id, _):
                handle(.close(id: id))
            case .timer(let id, let remaining, let isRunning):
                handle(.timer(id: id, remaining: remaining, isRunning: isRunning))
            case .event(.presented(let id)):
                presented[id, default: 0] += 1
            case .event(.ended(let id, let outcome)):
                ended[id, default: 0] += 1
                if outcome == .expired { endedExpired += 1 }
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
            case .notify(let id, let call, let arguments): calls.append(.notify(id: id, call: call, arguments))
            case .close(let id, let call, let serverID): calls.append(.close(id: id, call: call, serverID: serverID))
            case .discard(let serverID): calls.append(.discard(serverID))
            case .report(let report): carryOut(stack.handle(report, now: now))
            case .resume: break
            case .wake(let at): wakes.append(at)
            case .readDoNotDisturb: break  // the machine's configuration here does not follow it
            case .playSound: break  // no toast here has a sound
            case .requestJobView, .updateJobView, .endJobView: break  // the server here is dunst: no job views
            }
        }
    }

    /// Answers every call, and lets time pass for the updates that wait for their interval, until nothing is left.
    mutating func settle() {
        for _ in 0..<100 {
            answerAll()
            guard let next = wakes.min() else { return }
            now = max(now, next)
            carryOut(stack.advance(to: now))
            wakeIfDue()
        }
    }

    // MARK: - Rules

    func checkRules(step: Int) {
        let states = stack.entryStates(now: now)
        let onPresenter = states.filter(\.isOnPresenter)
        // A question that came when every room was taken has one of its own (decision 0010).
        let ownRooms = states.filter(\.hasRoomOfItsOwn).count
        #expect(
            onPresenter.filter { !$0.hasRoomOfItsOwn }.count <= stack.configuration.maxVisible,
            "seed \(seed) step \(step): too many shown")
        let running = states.enumerated().filter { $0.element.isRunning }
        #expect(running.count <= 1, "seed \(seed) step \(step): \(running.count) timers run")
        #expect(running.allSatisfy { $0.offset == 0 }, "seed \(seed) step \(step): a covered toast's timer runs")
        if stack.isPaused { #expect(running.isEmpty, "seed \(seed) step \(step): a timer runs while paused") }
        #expect(
            machine.wantedToastIDs.count <= stack.configuration.maxVisible + ownRooms,
            "seed \(seed) step \(step): the presenter holds \(machine.wantedToastIDs)")
        // Once every call is answered and no update waits for its interval, the server's clocks never come before
        // the center's (decision 0011): a notification the server may expire is the running front toast's, to be
        // closed by the server no earlier than the center ends it, or the presenter has asked to be woken in time to
        // tell the server otherwise.
        if calls.isEmpty, machine.isSettled {
            let front = states.first.flatMap { state -> (id: String, end: Duration)? in
                guard state.isOnPresenter, !stack.isPaused, let remaining = state.remaining else { return nil }
                return (state.id, now + remaining)
            }
            for (serverID, notification) in live {
                guard let closesAt = notification.closesAt else { continue }
                if let front, notification.toast == front.id, closesAt >= front.end { continue }
                #expect(
                    closesAt - DesktopPresenterMachine.timerNotice > now
                        && wakes.contains { $0 <= closesAt - DesktopPresenterMachine.timerNotice },
                    "seed \(seed) step \(step): \(notification.toast) (#\(serverID)) may expire on the server at \(closesAt) (now \(now)), the running front toast is \(front?.id ?? "none"), and the presenter is not woken in time (\(wakes))"
                )
            }
        }
    }

    mutating func finish() {
        settle()
        carryOut(stack.dismissAll(now: now))
        settle()
        #expect(machine.isSettled, "seed \(seed): the machine is not settled")
        for id in ids {
            #expect(
                ended[id, default: 0] == presented[id, default: 0],
                "seed \(seed): \(id) presented \(presented[id, default: 0]) times, ended \(ended[id, default: 0])")
        }
        #expect(live.isEmpty, "seed \(seed): left on the server: \(live)")
    }
}
