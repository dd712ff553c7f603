import Foundation
import Testing
import ToastModel

/// Do Not Disturb in the stack: plain values in, commands out, time passed in.
@Suite("Do Not Disturb in the stack")
struct DoNotDisturbStackTests {
    static let on = ToastDoNotDisturb(isOn: true, source: "test: paused", serverEffect: "held by the server")
    static let off = ToastDoNotDisturb(isOn: false, source: "test: paused")

    static func summary(_ outputs: [ToastStack.Output]) -> [String] {
        ToastStackTests.summary(outputs)
    }

    static func changed(_ state: ToastDoNotDisturb) -> String {
        "event \(ToastEvent.doNotDisturbChanged(state))"
    }

    static func suppressed(_ id: String, _ kind: ToastSuppression.Kind) -> String {
        "event \(ToastEvent.suppressed(id: id, suppression: ToastSuppression(kind: kind, state: on)))"
    }

    @Test("a toast that comes during Do Not Disturb is held, its time still, and shown whole when it ends")
    func holdThenShow() {
        var stack = ToastStack(configuration: .init(defaultDuration: 4))
        _ = stack.attachPresenter(now: .zero)
        _ = stack.handle(.doNotDisturbChanged(Self.on), now: .zero)
        let held = stack.present(ToastMessage(id: "A", title: "A"), now: .seconds(1))
        #expect(Self.summary(held) == ["event presented(id: \"A\")", Self.suppressed("A", .held)])
        #expect(stack.heldToastIDs == ["A"])
        #expect(stack.isLive("A"))
        #expect(stack.idsOnPresenter.isEmpty)
        #expect(stack.nextDeadline == nil)
        #expect(Self.summary(stack.advance(to: .seconds(100))).isEmpty)
        let released = stack.handle(.doNotDisturbChanged(Self.off), now: .seconds(100))
        #expect(Self.summary(released) == [Self.changed(Self.off), "show A 4.0 seconds", "event shown(id: \"A\")"])
        #expect(stack.heldToastIDs.isEmpty)
        #expect(stack.nextDeadline == .seconds(104))
    }

    @Test("drop ends the toast at once with .suppressed; show goes out and says it was sent anyway")
    func dropAndShow() {
        var stack = ToastStack()
        _ = stack.attachPresenter(now: .zero)
        _ = stack.handle(.doNotDisturbChanged(Self.on), now: .zero)
        let dropped = stack.present(ToastMessage(id: "A", title: "A", doNotDisturb: .drop), now: .zero)
        #expect(
            Self.summary(dropped) == [
                Self.suppressed("A", .dropped), "event ended(id: \"A\", outcome: ToastModel.ToastOutcome.suppressed)",
            ])
        #expect(!stack.isLive("A"))
        let shown = stack.present(ToastMessage(id: "B", title: "B", doNotDisturb: .show), now: .zero)
        #expect(
            Self.summary(shown) == [
                "event presented(id: \"B\")", "show B 4.0 seconds", Self.suppressed("B", .sentAnyway),
                "event shown(id: \"B\")",
            ])
    }

    @Test("toasts waiting behind the front are held or dropped when it comes on; the one on screen stays")
    func waitingOnesAreHeld() {
        var stack = ToastStack(configuration: .init(maxVisible: 1))
        _ = stack.attachPresenter(now: .zero)
        _ = stack.present(ToastMessage(id: "A", title: "A"), now: .zero)
        _ = stack.present(ToastMessage(id: "B", title: "B"), now: .zero)
        _ = stack.present(ToastMessage(id: "C", title: "C", doNotDisturb: .drop), now: .zero)
        _ = stack.present(ToastMessage(id: "D", title: "D", doNotDisturb: .show), now: .zero)
        let out = stack.handle(.doNotDisturbChanged(Self.on), now: .seconds(1))
        #expect(
            Self.summary(out) == [
                Self.changed(Self.on), Self.suppressed("B", .held), Self.suppressed("C", .dropped),
                "event ended(id: \"C\", outcome: ToastModel.ToastOutcome.suppressed)",
            ])
        #expect(stack.idsOnPresenter == ["A"])
        #expect(stack.liveToastIDs == ["A", "D", "B"])
        // A ends: D (show) comes next; B waits for the end of Do Not Disturb.
        let next = stack.advance(to: .seconds(4))
        #expect(
            Self.summary(next).suffix(3) == [
                "show D 4.0 seconds", Self.suppressed("D", .sentAnyway), "event shown(id: \"D\")",
            ])
        _ = stack.dismiss(id: "D", now: .seconds(5))
        #expect(stack.idsOnPresenter.isEmpty)
        let released = stack.handle(.doNotDisturbChanged(Self.off), now: .seconds(6))
        #expect(Self.summary(released) == [Self.changed(Self.off), "show B 4.0 seconds", "event shown(id: \"B\")"])
    }

    @Test("a toast the presenter withholds (Do Not Disturb came on unseen) is taken back: held, dropped or shown again")
    func withheldToasts() {
        var stack = ToastStack(configuration: .init(defaultDuration: 4, maxVisible: 3))
        _ = stack.attachPresenter(now: .zero)
        // The newest is in front: A, presented last, is the one whose time runs.
        _ = stack.present(ToastMessage(id: "C", title: "C", doNotDisturb: .show), now: .zero)
        _ = stack.present(ToastMessage(id: "B", title: "B", doNotDisturb: .drop), now: .zero)
        _ = stack.present(ToastMessage(id: "A", title: "A"), now: .zero)
        #expect(stack.idsOnPresenter == ["A", "B", "C"])
        // The presenter tells the state first, then what it did not send.
        _ = stack.handle(.doNotDisturbChanged(Self.on), now: .seconds(1))
        let heldA = stack.handle(.withheld(toastID: "A"), now: .seconds(1))
        #expect(
            Self.summary(heldA) == ["close A covered", Self.suppressed("A", .held), "timer B 4.0 seconds running"],
            "closed on the presenter (an update sent meanwhile is not shown); told, never a second presented")
        #expect(stack.heldToastIDs == ["A"] && !stack.idsOnPresenter.contains("A"))
        let droppedB = stack.handle(.withheld(toastID: "B"), now: .seconds(1))
        #expect(
            Self.summary(droppedB) == [
                "close B covered", Self.suppressed("B", .dropped),
                "event ended(id: \"B\", outcome: ToastModel.ToastOutcome.suppressed)",
                "timer C 4.0 seconds running",
            ])
        let againC = stack.handle(.withheld(toastID: "C"), now: .seconds(1))
        #expect(
            Self.summary(againC) == [
                "close C covered", "show C 4.0 seconds", Self.suppressed("C", .sentAnyway), "event shown(id: \"C\")",
            ], "it shows anyway: sent again, and said so")
        #expect(Self.summary(stack.handle(.withheld(toastID: "nobody"), now: .seconds(1))).isEmpty)
        // A's time stood still from the moment it was withheld: it gets its 4 s back less the second it ran.
        _ = stack.dismiss(id: "C", now: .seconds(2))
        let released = stack.handle(.doNotDisturbChanged(Self.off), now: .seconds(50))
        #expect(Self.summary(released) == [Self.changed(Self.off), "show A 3.0 seconds", "event shown(id: \"A\")"])
    }

    @Test("a held toast replaced by id ends as .replaced and the new content is held in its place")
    func replaceHeld() {
        var stack = ToastStack()
        _ = stack.attachPresenter(now: .zero)
        _ = stack.handle(.doNotDisturbChanged(Self.on), now: .zero)
        _ = stack.present(ToastMessage(id: "A", title: "one"), now: .zero)
        let out = stack.present(ToastMessage(id: "A", title: "two"), now: .zero)
        #expect(
            Self.summary(out) == [
                "event ended(id: \"A\", outcome: ToastModel.ToastOutcome.replaced)", "event presented(id: \"A\")",
                Self.suppressed("A", .held),
            ])
        #expect(stack.heldToastIDs == ["A"])
        let dismissed = stack.dismiss(id: "A", now: .zero)
        #expect(Self.summary(dismissed) == ["event ended(id: \"A\", outcome: ToastModel.ToastOutcome.closedByApp)"])
        #expect(!stack.isLive("A"))
    }

    @Test("a presenter that reports Do Not Disturb is handed nothing before its first report")
    func awaitsFirstReport() {
        var stack = ToastStack()
        _ = stack.attachPresenter(now: .zero, awaitingDoNotDisturb: true)
        let waiting = stack.present(ToastMessage(id: "A", title: "A"), now: .zero)
        #expect(Self.summary(waiting) == ["event presented(id: \"A\")"])
        #expect(stack.isAwaitingDoNotDisturb)
        let first = stack.handle(.doNotDisturbChanged(Self.on), now: .zero)
        #expect(Self.summary(first) == [Self.changed(Self.on), Self.suppressed("A", .held)])
        #expect(stack.idsOnPresenter.isEmpty)

        var other = ToastStack()
        _ = other.attachPresenter(now: .zero, awaitingDoNotDisturb: true)
        _ = other.present(ToastMessage(id: "A", title: "A"), now: .zero)
        let off = other.handle(.doNotDisturbChanged(Self.off), now: .zero)
        #expect(Self.summary(off) == ["show A 4.0 seconds", "event shown(id: \"A\")"], "off, as assumed: no change")
    }

    @Test("detaching the presenter forgets its Do Not Disturb: held toasts wait like any other")
    func detachReleases() {
        var stack = ToastStack()
        _ = stack.attachPresenter(now: .zero)
        _ = stack.handle(.doNotDisturbChanged(Self.on), now: .zero)
        _ = stack.present(ToastMessage(id: "A", title: "A"), now: .zero)
        _ = stack.detachPresenter(now: .zero)
        #expect(stack.heldToastIDs.isEmpty)
        #expect(stack.doNotDisturb == .off)
        let out = stack.attachPresenter(now: .seconds(1))
        #expect(Self.summary(out) == ["show A 4.0 seconds", "event shown(id: \"A\")"])
    }

    @Test("detached with toasts on screen and several held: every toast on screen is closed, and shown again later")
    func detachWithSeveralHeld() {
        for questions in [false, true] {
            var stack = ToastStack()
            _ = stack.attachPresenter(now: .zero)
            let tap = questions ? ToastAction(title: "Abrir") : nil
            for id in questions ? ["A", "B", "C"] : ["A"] {
                _ = stack.present(ToastMessage(id: id, title: id), now: .zero)
            }
            _ = stack.handle(.doNotDisturbChanged(Self.on), now: .zero)
            for id in ["H1", "H2"] { _ = stack.present(ToastMessage(id: id, title: id, tapAction: tap), now: .zero) }
            #expect(stack.heldToastIDs == ["H1", "H2"])
            let detached = stack.detachPresenter(now: .zero)
            let closed = detached.compactMap { if case .close(let id, _) = $0 { id } else { nil } }
            #expect(Set(closed) == Set(questions ? ["A", "B", "C"] : ["A"]), "questions \(questions): \(closed)")
            #expect(stack.idsOnPresenter.isEmpty)
            let shown = stack.attachPresenter(now: .seconds(1)).compactMap {
                if case .show(let toast) = $0 { toast.id } else { nil }
            }
            #expect(Set(shown) == Set(stack.liveToastIDs), "everything is shown again: \(shown)")
        }
    }

    @Test("a room freed when Do Not Disturb takes a toast back goes to a question in a room of its own")
    func takeBackFreesARoomForTheQuestion() {
        var stack = ToastStack(configuration: .init(maxVisible: 1))
        _ = stack.attachPresenter(now: .zero, awaitingDoNotDisturb: true)
        _ = stack.present(ToastMessage(id: "A", title: "A"), now: .zero)
        _ = stack.present(
            ToastMessage(id: "Q", title: "Q", tapAction: ToastAction(title: "Abrir"), doNotDisturb: .show), now: .zero)
        _ = stack.present(ToastMessage(id: "N", title: "N", doNotDisturb: .show), now: .zero)
        #expect(stack.entryStates(now: .zero).map(\.hasRoomOfItsOwn) == [true, false, false])
        _ = stack.handle(.doNotDisturbChanged(Self.on), now: .zero)
        #expect(stack.heldToastIDs == ["A"])
        #expect(stack.idsOnPresenter == ["Q"], "one room: the question has A's, N waits")
        #expect(stack.entryStates(now: .zero).map(\.hasRoomOfItsOwn) == [false, false, false], "Q, N, then held A")
    }

    @Test("dismissAll ends held toasts too, and a dropped toast never counts as live")
    func dismissAllHeld() {
        var stack = ToastStack()
        _ = stack.attachPresenter(now: .zero)
        _ = stack.present(ToastMessage(id: "A", title: "A"), now: .zero)
        _ = stack.handle(.doNotDisturbChanged(Self.on), now: .zero)
        _ = stack.present(ToastMessage(id: "B", title: "B"), now: .zero)
        let out = stack.dismissAll(now: .zero)
        #expect(
            Self.summary(out) == [
                "close A closedByApp", "event ended(id: \"A\", outcome: ToastModel.ToastOutcome.closedByApp)",
                "event ended(id: \"B\", outcome: ToastModel.ToastOutcome.closedByApp)",
            ])
        #expect(stack.liveToastIDs.isEmpty)
    }

    @Test("the policy and the outcome travel as JSON; a message without a policy holds")
    func codable() throws {
        let message = ToastMessage(id: "A", title: "A", doNotDisturb: .drop)
        let data = try JSONEncoder().encode(message)
        #expect(String(decoding: data, as: UTF8.self).contains("\"doNotDisturb\":\"drop\""))
        #expect(try JSONDecoder().decode(ToastMessage.self, from: data) == message)
        let plain = try JSONDecoder().decode(ToastMessage.self, from: Data(#"{"title":"x"}"#.utf8))
        #expect(plain.doNotDisturb == .hold)
        let outcome = try JSONEncoder().encode(ToastOutcome.suppressed)
        #expect(try JSONDecoder().decode(ToastOutcome.self, from: outcome) == .suppressed)
    }
}
