import Synchronization
import Testing
import ToastKitTesting
import ToastModel

/// A presenter that keeps its sink even after being disconnected, to check that stale reports are ignored.
final class StickyPresenter: ToastPresenter {
    private let sink = Mutex<ToastPresenterEvents?>(nil)
    var events: ToastPresenterEvents? { sink.withLock { $0 } }
    func connect(_ events: ToastPresenterEvents) { sink.withLock { $0 = events } }
    func show(_ presentation: ToastPresentation) {}
    func update(_ presentation: ToastPresentation) {}
    func close(id: String, reason: ToastCloseReason) {}
}

@Suite("Presenter protocol", .timeLimit(.minutes(1)))
struct ToastPresenterTests {
    @Test("the recording presenter's commandSummaries are the commands, shownTitles the toasts' titles")
    func commandSummariesAndShownTitles() async throws {
        let h = Harness(maxVisible: 2)
        h.center.present(ToastMessage(id: "A", title: "Copiado", duration: 2))
        h.center.present(ToastMessage(id: "B", title: "", message: "Solo el mensaje"))
        h.center.dismiss(id: "A")
        _ = try await h.presenter.commands(count: 4)
        #expect(
            h.presenter.commandSummaries.prefix(4) == ["show A", "show B", "timer A stopped", "close A closedByApp"])
        #expect(h.presenter.shownTitles == ["Copiado", ""])
    }

    @Test("a center without a presenter keeps toasts waiting, with their time stopped, until one is attached")
    func attachLater() async throws {
        let h = Harness(attach: false)
        h.center.present(ToastMessage(id: "A", title: "A"))
        await h.advance(to: 30)
        #expect(h.clock.sleeperCount == 0)
        #expect(h.log.events == [.presented(id: "A")])
        h.center.attach(h.presenter)
        #expect(h.presenter.isConnected)
        #expect(h.presenter.commandSummaries == ["show A"])
        try await h.clock.sleepers(count: 1)
        #expect(h.clock.nextDeadline == ManualClock.Instant(offset: seconds(34)))
    }

    @Test("detaching closes the toasts there; they wait with their remaining time for the next presenter")
    func detachAndReattach() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A"))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 1)
        h.center.detach()
        #expect(h.presenter.commandSummaries == ["show A", "close A detached"])
        #expect(!h.presenter.isConnected)
        let second = RecordingPresenter()
        await h.advance(to: 20)
        h.center.attach(second)
        #expect(second.presentation(of: "A")?.toast.remaining == seconds(3))
        #expect(h.log.terminal.isEmpty)
    }

    @Test("attaching the same presenter twice changes nothing")
    func attachTwice() {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A"))
        h.center.attach(h.presenter)
        #expect(h.presenter.commandSummaries == ["show A"])
        #expect(h.presenter.isConnected)
    }

    @Test("reports from a replaced presenter are ignored")
    func staleReports() {
        let h = Harness(attach: false)
        let old = StickyPresenter()
        h.center.attach(old)
        h.center.present(ToastMessage(id: "A", title: "A"))
        h.center.attach(h.presenter)
        old.events?.closed(toastID: "A", reason: .dismissedByUser)
        old.events?.failed(toastID: nil, reason: "gone", recoverable: false)
        #expect(h.log.terminal.isEmpty)
        #expect(h.presenter.commandSummaries == ["show A"])
    }

    @Test("a recoverable failure keeps the toast, stops its time, and reshow brings it back with its remaining time")
    func recoverableFailure() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A"))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 1)
        h.presenter.fail("A", reason: "no notification server", recoverable: true)
        #expect(h.log.events.contains(.presenterFailed(id: "A", reason: "no notification server")))
        await h.advance(to: 60)
        #expect(h.log.terminal.isEmpty)
        h.presenter.requestReshow()
        #expect(h.presenter.commandSummaries == ["show A", "show A"])
        #expect(h.presenter.presentation(of: "A")?.toast.remaining == seconds(3))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 63)
        await h.log.waitFor(.ended(id: "A", outcome: .expired))
    }

    @Test("a failure that will not recover ends the toast with .failed and brings the next forward")
    func fatalFailure() {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A"))
        h.center.present(ToastMessage(id: "B", title: "B"))
        h.presenter.fail("A", reason: "server refused the image", recoverable: false)
        #expect(h.log.terminal == [.ended(id: "A", outcome: .failed(.presenter(reason: "server refused the image")))])
        #expect(h.presenter.onScreen.map(\.id) == ["B"])
    }

    @Test("server restart: reshow gives every on-screen toast its remaining time")
    func reshowAfterRestart() async throws {
        let h = Harness(maxVisible: 2)
        h.center.present(ToastMessage(id: "A", title: "A"))
        h.center.present(ToastMessage(id: "B", title: "B", duration: 10))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 2.5)
        h.presenter.requestReshow()
        // B is the newest, in front: its time ran; A, covered, kept all of its own.
        #expect(h.presenter.commandSummaries == ["show A", "show B", "timer A stopped", "show A", "show B"])
        #expect(h.presenter.presentation(of: "B")?.toast.remaining == seconds(7.5))
        #expect(h.presenter.presentation(of: "A")?.toast.remaining == seconds(4))
    }

    @Test("degraded features are reported as informational events")
    func degraded() {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A", tapAction: ToastAction(title: "Open")))
        h.presenter.degrade("A", reason: "server has no actions: actions dropped")
        #expect(h.log.events.last == .degraded(id: "A", reason: "server has no actions: actions dropped"))
        #expect(h.log.terminal.isEmpty)
    }

    @Test("presenter calls never overlap and follow the center's order, even from a reacting presenter")
    func reactingPresenter() {
        let presenter = RecordingPresenter { presentation, events in
            events.closed(toastID: presentation.id, reason: .dismissedByUser)
        }
        let h = Harness(presenter: presenter)
        for id in ["A", "B", "C"] { h.center.present(ToastMessage(id: id, title: id)) }
        #expect(presenter.commandSummaries == ["show A", "show B", "show C"])
        #expect(h.log.terminal == ["A", "B", "C"].map { .ended(id: $0, outcome: .dismissed) })
    }
}

@Suite("Events", .timeLimit(.minutes(1)))
struct ToastEventStreamTests {
    @Test("events() is an AsyncSequence; each call gives an independent stream from now on")
    func multipleStreams() async throws {
        let h = Harness()
        let first = h.center.events()
        h.center.present(ToastMessage(id: "A", title: "A"))
        let second = h.center.events()
        h.center.dismiss(id: "A")

        var firstEvents: [ToastEvent] = []
        for await event in first {
            firstEvents.append(event)
            if event.isTerminal { break }
        }
        var secondEvents: [ToastEvent] = []
        for await event in second {
            secondEvents.append(event)
            if event.isTerminal { break }
        }
        #expect(firstEvents == [.presented(id: "A"), .shown(id: "A"), .ended(id: "A", outcome: .closedByApp)])
        #expect(secondEvents == [.ended(id: "A", outcome: .closedByApp)])
    }

    @Test("streams finish when the center goes away")
    func streamFinishes() async throws {
        var center: ToastCenter? = ToastCenter(presenter: nil, clock: ManualClock(), laterStore: nil)
        let stream = center!.events()
        center = nil
        var count = 0
        for await _ in stream { count += 1 }
        #expect(count == 0)
    }
}
