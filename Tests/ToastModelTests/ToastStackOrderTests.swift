import Testing
import ToastModel

/// The stack's order with room for several toasts (issue 43, decision 0010): the newest on screen is in front and
/// only its time runs; the covered ones keep theirs; a waiting toast takes a freed room, in front; an update changes its
/// toast where it is and never takes another off the screen.
@Suite("ToastStack order: the newest in front")
struct ToastStackOrderTests {
    private static func stack(maxVisible: Int = ToastStack.Configuration.standardMaxVisible) -> ToastStack {
        var stack = ToastStack(configuration: .init(defaultDuration: 2, maxVisible: maxVisible))
        _ = stack.attachPresenter(now: .zero)
        return stack
    }

    private static func commands(_ outputs: [ToastStack.Output]) -> [String] {
        ToastStackTimerTests.commands(outputs)
    }

    private static func present(_ id: String, _ stack: inout ToastStack, at seconds: Int = 0) -> [String] {
        commands(stack.present(ToastMessage(id: id, title: id), now: .seconds(seconds)))
    }

    @Test("three in a row are on screen at once and end newest first, each after its own full time")
    func threeInARow() {
        #expect(ToastStack.Configuration().maxVisible == 3, "three on screen unless the app says otherwise")
        var stack = Self.stack()
        #expect(Self.present("A", &stack) == ["show A 2s running"])
        #expect(Self.present("B", &stack) == ["show B 2s running", "timer A 2s stopped"])
        #expect(Self.present("C", &stack) == ["show C 2s running", "timer B 2s stopped"])
        #expect(stack.idsOnPresenter == ["C", "B", "A"])
        #expect(Self.commands(stack.advance(to: .seconds(2))) == ["close C expired", "timer B 2s running"])
        #expect(Self.commands(stack.advance(to: .seconds(4))) == ["close B expired", "timer A 2s running"])
        #expect(Self.commands(stack.advance(to: .seconds(6))) == ["close A expired"])
        #expect(stack.liveToastIDs.isEmpty)
    }

    @Test("a fourth waits for a room and takes it in front; the covered ones stay where they are")
    func aFourthWaits() {
        var stack = Self.stack()
        for id in ["A", "B", "C"] { _ = Self.present(id, &stack) }
        #expect(Self.present("D", &stack).isEmpty, "no room: it waits, nothing on screen is closed")
        #expect(stack.liveToastIDs == ["C", "B", "A", "D"])
        #expect(Self.commands(stack.advance(to: .seconds(2))) == ["close C expired", "show D 2s running"])
        #expect(stack.idsOnPresenter == ["D", "B", "A"])
        // A covered toast closed by the person frees a room too: nothing waits, so nothing moves.
        #expect(Self.commands(stack.dismiss(id: "A", now: .seconds(3))) == ["close A closedByApp"])
        #expect(stack.idsOnPresenter == ["D", "B"])
    }

    @Test("an update of a waiting toast changes it where it waits: no toast leaves the screen for it")
    func updateWhileWaiting() {
        for maxVisible in [1, 3] {
            var stack = Self.stack(maxVisible: maxVisible)
            let ids = (0...maxVisible).map { "t\($0)" }
            for id in ids { _ = Self.present(id, &stack) }
            let waiting = ids.last!
            let out = stack.present(ToastMessage(id: waiting, title: "50 %", duration: 5), now: .seconds(1))
            #expect(Self.commands(out).isEmpty, "maxVisible \(maxVisible): \(Self.commands(out))")
            #expect(stack.liveToastIDs.last == waiting, "it keeps its place in the wait")
            #expect(stack.entryState(of: waiting, now: .seconds(1))?.remaining == .seconds(5))
        }
    }

    @Test("an update of a covered toast updates it in place and puts it in front; nothing is closed")
    func updateWhileCovered() {
        var stack = Self.stack()
        for id in ["A", "B", "C"] { _ = Self.present(id, &stack) }
        let out = stack.present(ToastMessage(id: "A", title: "A2", duration: 3), now: .seconds(1))
        #expect(Self.commands(out) == ["update A 3s running", "timer C 1s stopped"])
        #expect(stack.idsOnPresenter == ["A", "C", "B"])
    }

    @Test("an indefinite toast never covers a timed one: the timed toasts' time runs on, newest first")
    func indefiniteStaysBehind() {
        var stack = Self.stack()
        for id in ["A", "B"] { _ = Self.present(id, &stack) }
        let error = stack.present(ToastMessage(id: "E", title: "Error", duration: .indefinite), now: .seconds(1))
        #expect(Self.commands(error) == ["show E ∞ stopped"], "B keeps running in front")
        #expect(stack.idsOnPresenter == ["B", "E", "A"])
        #expect(Self.commands(stack.advance(to: .seconds(2))) == ["close B expired", "timer A 2s running"])
        #expect(stack.idsOnPresenter == ["A", "E"])
        #expect(Self.commands(stack.advance(to: .seconds(4))) == ["close A expired"])
        // Made indefinite by an update, the front gives way to the next timed toast on screen.
        _ = Self.present("C", &stack, at: 5)
        let update = stack.present(ToastMessage(id: "E", title: "Error", duration: .indefinite), now: .seconds(5))
        #expect(Self.commands(update) == ["update E ∞ stopped"])
        #expect(stack.idsOnPresenter == ["C", "E"])
        let sync = stack.present(
            ToastMessage(id: "C", title: "Sincronizando…", duration: .indefinite), now: .seconds(6))
        #expect(Self.commands(sync) == ["update C ∞ stopped"])
        #expect(stack.nextDeadline == nil)
    }

    @Test("with replaceOldest, the newest takes the oldest's room in front")
    func replaceOldest() {
        var stack = ToastStack(configuration: .init(defaultDuration: 2, maxVisible: 2, overflow: .replaceOldest))
        _ = stack.attachPresenter(now: .zero)
        for id in ["A", "B"] { _ = Self.present(id, &stack) }
        #expect(Self.present("C", &stack) == ["close A replaced", "show C 2s running", "timer B 2s stopped"])
        #expect(stack.idsOnPresenter == ["C", "B"])
    }

    @Test("a presenter attached late shows the newest in front")
    func attachedLate() {
        var stack = ToastStack(configuration: .init(defaultDuration: 2))
        for id in ["A", "B", "C", "D"] { _ = Self.present(id, &stack) }
        let out = Self.commands(stack.attachPresenter(now: .seconds(1)))
        #expect(
            out == ["show A 2s stopped", "show B 2s stopped", "show C 2s running"], "back to front: the front on top")
    }
    private static func question(_ id: String, duration: ToastDuration = 5) -> ToastMessage {
        ToastMessage(
            id: id, title: "¿Borrar?", duration: duration,
            swipeActions: ToastSwipeActions(leading: ToastAction(id: "yes", title: "Sí")))
    }

    @Test("a question never waits: with every room taken it is shown at once, in front, in a room of its own")
    func aQuestionNeverWaits() {
        var stack = Self.stack()
        for id in ["A", "B", "C"] { _ = Self.present(id, &stack) }
        let asked = Self.commands(stack.present(Self.question("Q"), now: .seconds(1)))
        #expect(asked == ["show Q 5s running", "timer C 1s stopped"])
        #expect(stack.idsOnPresenter == ["Q", "C", "B", "A"])
        #expect(Self.present("D", &stack, at: 1).isEmpty, "an informing toast still waits for a room")
        // Its room goes with it: the screen is back to three, and D still waits.
        #expect(Self.commands(stack.advance(to: .seconds(6))) == ["close Q expired", "timer C 1s running"])
        #expect(stack.idsOnPresenter == ["C", "B", "A"])
        #expect(Self.commands(stack.advance(to: .seconds(7))) == ["close C expired", "show D 2s running"])
    }

    @Test("a room that frees goes to a question in a room of its own before a waiting toast")
    func aFreedRoomGoesToTheQuestion() {
        var stack = Self.stack()
        for id in ["A", "B", "C"] { _ = Self.present(id, &stack) }
        // Indefinite: the newest timed toast stays in front of it.
        _ = stack.present(Self.question("Q", duration: .indefinite), now: .zero)
        #expect(stack.idsOnPresenter == ["C", "Q", "B", "A"])
        #expect(Self.present("D", &stack).isEmpty)
        #expect(Self.commands(stack.advance(to: .seconds(2))) == ["close C expired", "timer B 2s running"])
        #expect(stack.idsOnPresenter == ["B", "Q", "A"], "three on screen again; D waits")
        #expect(
            Self.commands(stack.dismiss(id: "Q", now: .seconds(3))) == [
                "close Q closedByApp", "show D 2s running", "timer B 1s stopped",
            ])
        #expect(stack.idsOnPresenter == ["D", "B", "A"])
    }

    @Test("a waiting toast made a question by an update comes in front at once")
    func aWaitingToastBecomesAQuestion() {
        var stack = Self.stack(maxVisible: 1)
        for id in ["A", "B"] { _ = Self.present(id, &stack) }
        let out = Self.commands(stack.present(Self.question("B"), now: .seconds(1)))
        #expect(out == ["show B 5s running", "timer A 1s stopped"])
        #expect(stack.idsOnPresenter == ["B", "A"])
        #expect(
            Self.commands(stack.dismiss(id: "B", now: .seconds(2))) == ["close B closedByApp", "timer A 1s running"])
    }
}
