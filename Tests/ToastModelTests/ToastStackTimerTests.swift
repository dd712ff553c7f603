import Testing
import ToastModel

/// What the stack tells the presenter about timers (issue 10 §1): only the running front toast may run out on the
/// presenter's side; every start and stop of a shown toast's timer is reported, except while an action runs.
@Suite("ToastStack timers on the presenter")
struct ToastStackTimerTests {
    /// The presenter commands among `outputs`, with each show's and update's timer state.
    static func commands(_ outputs: [ToastStack.Output]) -> [String] {
        outputs.compactMap { output in
            switch output {
            case .show(let toast): "show \(toast.id) \(state(toast.remaining, toast.isTimerRunning))"
            case .update(let toast): "update \(toast.id) \(state(toast.remaining, toast.isTimerRunning))"
            case .close(let id, let reason): "close \(id) \(reason.rawValue)"
            case .timer(let id, let remaining, let isRunning): "timer \(id) \(state(remaining, isRunning))"
            case .event, .runAction, .promptReply, .cancelReplyPrompt, .keepForLater: nil
            }
        }
    }

    private static func state(_ remaining: Duration?, _ running: Bool) -> String {
        "\(remaining.map { "\($0.components.seconds)s\($0.components.attoseconds == 0 ? "" : "+")" } ?? "∞") "
            + (running ? "running" : "stopped")
    }

    private static func stack(maxVisible: Int = 1) -> ToastStack {
        var stack = ToastStack(configuration: .init(defaultDuration: 4, maxVisible: maxVisible))
        _ = stack.attachPresenter(now: .zero)
        return stack
    }

    @Test("pause stops the front toast's timer on the presenter with what is left; resume starts it again")
    func pauseAndResume() {
        var stack = Self.stack()
        #expect(
            Self.commands(stack.present(ToastMessage(id: "A", title: "A", duration: 2), now: .zero)) == [
                "show A 2s running"
            ])
        #expect(Self.commands(stack.pause(now: .milliseconds(500))) == ["timer A 1s+ stopped"])
        #expect(Self.commands(stack.advance(to: .seconds(10))).isEmpty)
        #expect(Self.commands(stack.pause(now: .seconds(10))).isEmpty, "pausing twice says nothing new")
        let resumed = stack.resume(now: .seconds(10))
        guard case .timer(_, let remaining, true) = resumed.first else {
            Issue.record("expected a running timer, got \(Self.commands(resumed))")
            return
        }
        #expect(remaining == .milliseconds(1500))
        #expect(stack.nextDeadline == .milliseconds(11_500))
    }

    @Test("the presenter's pause (screen locked) stops the timer on the presenter like the app's")
    func presenterPause() {
        var stack = Self.stack()
        _ = stack.present(ToastMessage(id: "A", title: "A", duration: 2), now: .zero)
        #expect(Self.commands(stack.handle(.pauseRequested, now: .seconds(1))) == ["timer A 1s stopped"])
        #expect(Self.commands(stack.pause(now: .seconds(2))).isEmpty, "still paused by the presenter")
        #expect(Self.commands(stack.handle(.resumeRequested, now: .seconds(3))).isEmpty, "still paused by the app")
        #expect(Self.commands(stack.resume(now: .seconds(4))) == ["timer A 1s running"])
    }

    @Test("maxVisible 2: the newest is in front and runs; the covered one keeps its time and runs once in front again")
    func coveredToastKeepsItsTime() {
        var stack = Self.stack(maxVisible: 2)
        _ = stack.present(ToastMessage(id: "A", title: "A", duration: 2), now: .zero)
        #expect(
            Self.commands(stack.present(ToastMessage(id: "B", title: "B", duration: 5), now: .zero)) == [
                "show B 5s running", "timer A 2s stopped",
            ])
        #expect(Self.commands(stack.advance(to: .seconds(5))) == ["close B expired", "timer A 2s running"])
        #expect(stack.nextDeadline == .seconds(7))
    }

    @Test("an update of a covered toast updates it where it is, in front; the old front stops and runs again after")
    func frontChanges() {
        var stack = Self.stack(maxVisible: 2)
        _ = stack.present(ToastMessage(id: "A", title: "A", duration: 3), now: .zero)
        _ = stack.present(ToastMessage(id: "B", title: "B", duration: 5), now: .zero)
        // Re-presenting A (covered by B) updates it on screen and puts it in front: B stops with what it has left.
        #expect(
            Self.commands(stack.present(ToastMessage(id: "A", title: "A2", duration: 3), now: .seconds(1))) == [
                "update A 3s running", "timer B 4s stopped",
            ])
        #expect(
            Self.commands(stack.dismiss(id: "A", now: .seconds(2))) == ["close A closedByApp", "timer B 4s running"])
        #expect(stack.nextDeadline == .seconds(6))
    }

    @Test("replacing the running front toast is one update that carries the new timer, no separate timer call")
    func replaceCarriesTheTimer() {
        var stack = Self.stack()
        _ = stack.present(ToastMessage(id: "sync", title: "Sincronizando…", duration: .indefinite), now: .zero)
        #expect(
            Self.commands(stack.present(ToastMessage(id: "sync", title: "Sincronizado", duration: 3), now: .seconds(9)))
                == ["update sync 3s running"])
    }

    @Test("an action in flight stops the center's clock but is not reported; its confirmation runs on the presenter")
    func actionIsNotReported() {
        var stack = Self.stack()
        let archive = ToastAction(id: "archive", title: "Archivar", confirmation: "Archivado")
        _ = stack.present(
            ToastMessage(id: "A", title: "A", swipeActions: ToastSwipeActions(leading: archive)), now: .zero)
        let run = stack.handle(.actionInvoked(toastID: "A", key: "archive", activationToken: nil), now: .seconds(1))
        #expect(Self.commands(run).isEmpty)
        #expect(stack.nextDeadline == nil)
        guard case .runAction(let invocation) = run.first else {
            Issue.record("expected an action run")
            return
        }
        #expect(Self.commands(stack.completeAction(invocation, now: .seconds(2))) == ["update A 1s+ running"])
    }

    @Test("after a recoverable failure, reshow shows the front running and the covered one stopped")
    func reshowCarriesTimers() {
        var stack = Self.stack(maxVisible: 2)
        _ = stack.present(ToastMessage(id: "A", title: "A", duration: 3), now: .zero)
        _ = stack.present(ToastMessage(id: "B", title: "B", duration: 5), now: .zero)
        _ = stack.handle(.failed(toastID: nil, reason: "server left", recoverable: true), now: .seconds(1))
        #expect(stack.nextDeadline == nil)
        #expect(
            Self.commands(stack.handle(.reshowRequested, now: .seconds(4))) == [
                "show A 3s stopped", "show B 4s running",
            ])
        #expect(stack.nextDeadline == .seconds(8))
    }

    @Test("an indefinite front toast is never told to run; a detached presenter hears nothing about timers")
    func indefiniteAndDetached() {
        var stack = Self.stack()
        #expect(
            Self.commands(stack.present(ToastMessage(id: "A", title: "A", duration: .indefinite), now: .zero)) == [
                "show A ∞ stopped"
            ])
        #expect(Self.commands(stack.pause(now: .seconds(1))).isEmpty)
        #expect(Self.commands(stack.resume(now: .seconds(2))).isEmpty)
        _ = stack.present(ToastMessage(id: "B", title: "B", duration: 2), now: .seconds(2))
        #expect(Self.commands(stack.detachPresenter(now: .seconds(3))) == ["close A detached"])
    }
}
