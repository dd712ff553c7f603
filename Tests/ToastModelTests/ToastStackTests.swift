import Testing
import ToastModel

/// The state machine on its own: plain values in, commands out, no clock at all.
@Suite("ToastStack state machine")
struct ToastStackTests {
    static func summary(_ outputs: [ToastStack.Output]) -> [String] {
        outputs.map { output in
            switch output {
            case .show(let toast): "show \(toast.id) \(toast.remaining.map { "\($0)" } ?? "∞")"
            case .update(let toast): "update \(toast.id)"
            case .close(let id, let reason): "close \(id) \(reason.rawValue)"
            case .timer(let id, let remaining, let isRunning):
                "timer \(id) \(remaining.map { "\($0)" } ?? "∞") \(isRunning ? "running" : "stopped")"
            case .event(let event): "event \(event)"
            case .runAction(let invocation): "run \(invocation.action.id)"
            case .promptReply(let invocation, _): "prompt \(invocation.action.id)"
            case .cancelReplyPrompt(let presentation): "cancel prompt \(presentation)"
            case .keepForLater(let message): "keep \(message.id)"
            }
        }
    }

    @Test("nothing is shown or timed before a presenter is attached")
    func noPresenter() {
        var stack = ToastStack()
        let out = stack.present(ToastMessage(id: "A", title: "A"), now: .zero)
        #expect(Self.summary(out) == ["event presented(id: \"A\")"])
        #expect(stack.nextDeadline == nil)
        _ = stack.attachPresenter(now: .seconds(10))
        #expect(stack.nextDeadline == .seconds(14))
    }

    @Test("advance catches up over several deadlines, starting each front when it is reached")
    func catchUp() {
        var stack = ToastStack(configuration: .init(defaultDuration: 2, maxVisible: 1))
        _ = stack.attachPresenter(now: .zero)
        for id in ["A", "B", "C"] { _ = stack.present(ToastMessage(id: id, title: id), now: .zero) }
        let out = stack.advance(to: .seconds(5))
        #expect(
            Self.summary(out) == [
                "close A expired", "event ended(id: \"A\", outcome: ToastModel.ToastOutcome.expired)",
                "show B 2.0 seconds", "event shown(id: \"B\")",
            ])
        #expect(stack.nextDeadline == .seconds(7))
    }

    @Test("entry states show which timer runs and what remains")
    func entryStates() {
        var stack = ToastStack(configuration: .init(maxVisible: 2))
        _ = stack.attachPresenter(now: .zero)
        // The newest on screen is in front: B (indefinite) first, A over it, C waits for a room.
        _ = stack.present(ToastMessage(id: "B", title: "B", duration: .indefinite), now: .zero)
        _ = stack.present(ToastMessage(id: "A", title: "A"), now: .zero)
        _ = stack.present(ToastMessage(id: "C", title: "C", duration: 9), now: .zero)
        let states = stack.entryStates(now: .seconds(1))
        #expect(states.map(\.id) == ["A", "B", "C"])
        #expect(states.map(\.isRunning) == [true, false, false])
        #expect(states.map(\.remaining) == [.seconds(3), nil, .seconds(9)])
        #expect(states.map(\.isOnPresenter) == [true, true, false])
        #expect(stack.idsOnPresenter == ["A", "B"])
        #expect(["A", "B", "C", "nobody"].map(stack.isOnPresenter) == [true, true, false, false])
        // The front ends: the next in line takes its room, in front, as its state says.
        _ = stack.advance(to: .seconds(4))
        #expect(stack.entryStates(now: .seconds(4)).map(\.id) == ["C", "B"])
        #expect(stack.entryStates(now: .seconds(4)).map(\.isOnPresenter) == [true, true])
        #expect(["A", "B", "C"].map(stack.isOnPresenter) == [false, true, true])
    }

    @Test("an action run is requested, then its effect applies only to the same presentation")
    func actionLifecycle() {
        var stack = ToastStack()
        _ = stack.attachPresenter(now: .zero)
        _ = stack.present(
            ToastMessage(id: "A", title: "A", swipeActions: ToastSwipeActions(trailing: .later)), now: .zero)
        let out = stack.handle(.actionInvoked(toastID: "A", key: "later", activationToken: nil), now: .seconds(1))
        guard case .runAction(let invocation) = out.first else {
            Issue.record("expected a run, got \(Self.summary(out))")
            return
        }
        #expect(stack.nextDeadline == nil)  // time stops while the action is in flight
        let effect = stack.completeAction(invocation, now: .seconds(1))
        #expect(
            Self.summary(effect) == [
                "keep A", "close A deferred", "event ended(id: \"A\", outcome: ToastModel.ToastOutcome.deferred)",
            ])
        #expect(stack.completeAction(invocation, now: .seconds(1)).isEmpty)
    }

    @Test("maxVisible below 1 is taken as 1")
    func clampMaxVisible() {
        #expect(ToastStack.Configuration(maxVisible: 0).maxVisible == 1)
    }
}
