import Testing
import ToastKitTesting
import ToastModel

@Suite("M3/M4 timing with the manual clock", .timeLimit(.minutes(1)))
struct ToastTimingTests {
    @Test("three toasts 1 s apart, maxVisible 1: one after the other, each for its full duration")
    func threeToastsInSequence() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A"))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 1)
        h.center.present(ToastMessage(id: "B", title: "B"))
        await h.advance(to: 2)
        h.center.present(ToastMessage(id: "C", title: "C"))
        #expect(h.presenter.commandSummaries == ["show A"])

        await h.advance(to: 4)
        await h.log.waitFor(.shown(id: "B"))
        #expect(h.presenter.presentation(of: "B")?.toast.remaining == seconds(4))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 7.999)
        #expect(h.presenter.commandSummaries == ["show A", "close A expired", "show B"])
        await h.advance(to: 8)
        await h.log.waitFor(.shown(id: "C"))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 12)
        await h.log.waitFor(.ended(id: "C", outcome: .expired))

        #expect(
            h.presenter.commandSummaries == [
                "show A", "close A expired", "show B", "close B expired", "show C", "close C expired",
            ])
        for (id, start) in [("A", 0.0), ("B", 4.0), ("C", 8.0)] {
            #expect(h.log.time(of: .shown(id: id)) == seconds(start))
            #expect(h.log.time(of: .ended(id: id, outcome: .expired)) == seconds(start + 4))
        }
        #expect(h.log.terminal.count == 3)
    }

    @Test("an update of a waiting toast changes it where it waits: the toast on screen is not closed for it")
    func replaceWaitingToast() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A"))
        h.center.present(ToastMessage(id: "B", title: "Sincronizando…", duration: .indefinite))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 1)
        h.center.present(ToastMessage(id: "B", status: .success, title: "Sincronizado", duration: 6))

        #expect(h.presenter.commandSummaries == ["show A"])
        #expect(h.log.terminal == [.ended(id: "B", outcome: .replaced)])
        #expect(h.center.liveToastIDs == ["A", "B"])

        await h.advance(to: 4)
        await h.log.waitFor(.ended(id: "A", outcome: .expired))
        await h.log.waitFor(.shown(id: "B"))
        #expect(h.presenter.presentation(of: "B")?.toast.title == "Sincronizado")
        #expect(h.presenter.presentation(of: "B")?.toast.remaining == seconds(6))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 10)
        await h.log.waitFor(.ended(id: "B", outcome: .expired))
        #expect(h.presenter.commandSummaries == ["show A", "close A expired", "show B", "close B expired"])
        #expect(h.log.terminal.count == 3)
    }

    @Test("an update of a covered toast updates it on screen and puts it in front; nothing is closed for it")
    func replaceCoveredToast() async throws {
        let h = Harness(maxVisible: 3)
        h.center.present(ToastMessage(id: "B", title: "Sincronizando…", duration: .indefinite))
        h.center.present(ToastMessage(id: "A", title: "A"))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 1)
        h.center.present(ToastMessage(id: "B", status: .success, title: "Sincronizado", duration: 6))

        #expect(h.presenter.commandSummaries == ["show B", "show A", "update B", "timer A stopped"])
        #expect(h.presenter.presentation(of: "B")?.toast.remaining == seconds(6))
        #expect(h.log.terminal == [.ended(id: "B", outcome: .replaced)])
        #expect(h.center.liveToastIDs == ["B", "A"])

        try await h.clock.sleepers(count: 1)
        await h.advance(to: 7)
        await h.log.waitFor(.ended(id: "B", outcome: .expired))
        try await h.clock.sleepers(count: 1)
        #expect(h.presenter.commandSummaries.last == "timer A running")
        #expect(h.presenter.presentation(of: "A")?.toast.remaining == seconds(3))
        await h.advance(to: 10)
        await h.log.waitFor(.ended(id: "A", outcome: .expired))
        #expect(h.log.terminal.count == 3)
    }

    @Test("M2: re-presenting the front id updates it in place, never shown twice")
    func replaceFrontInPlace() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "sync", title: "Sincronizando…", duration: .indefinite))
        h.center.present(ToastMessage(id: "sync", status: .success, title: "Sincronizado"))
        #expect(h.presenter.commandSummaries == ["show sync", "update sync"])
        #expect(h.presenter.onScreen.map(\.toast.title) == ["Sincronizado"])
        #expect(
            h.log.events == [
                .presented(id: "sync"), .shown(id: "sync"), .ended(id: "sync", outcome: .replaced),
                .presented(id: "sync"), .updated(id: "sync"),
            ])
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 4)
        await h.log.waitFor(.ended(id: "sync", outcome: .expired))
    }

    @Test("pause freezes the remaining time mid-countdown; resume continues it")
    func pauseAndResume() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A"))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 1)
        h.center.pause()
        #expect(h.center.isPaused)
        #expect(h.clock.sleeperCount == 0)
        await h.advance(to: 100)
        #expect(h.log.terminal.isEmpty)
        h.center.resume()
        try await h.clock.sleepers(count: 1)
        #expect(h.clock.nextDeadline == ManualClock.Instant(offset: seconds(103)))
        await h.advance(to: 102.5)
        #expect(h.log.terminal.isEmpty)
        await h.advance(to: 103)
        await h.log.waitFor(.ended(id: "A", outcome: .expired))
        #expect(h.log.time(of: .ended(id: "A", outcome: .expired)) == seconds(103))
    }

    @Test("the presenter's pause (screen locked) also freezes time")
    func presenterPause() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A", duration: 2))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 1)
        h.presenter.requestPause()
        #expect(h.center.isPaused)
        await h.advance(to: 50)
        h.presenter.requestResume()
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 51)
        await h.log.waitFor(.ended(id: "A", outcome: .expired))
    }

    @Test(".automatic uses the center default", arguments: [1.0, 4.0, 6.0, 0.5])
    func automaticUsesDefault(defaultSeconds: Double) async throws {
        let h = Harness(defaultDuration: .seconds(defaultSeconds))
        h.center.present(.normal, title: "Copiado")
        #expect(h.presenter.onScreen.first?.toast.remaining == seconds(defaultSeconds))
        #expect(h.presenter.onScreen.first?.toast.isTimerRunning == true)
        try await h.clock.sleepers(count: 1)
        #expect(h.clock.nextDeadline == ManualClock.Instant(offset: seconds(defaultSeconds)))
    }

    @Test("an explicit duration wins over the default, also as a literal")
    func explicitDuration() async throws {
        let h = Harness(defaultDuration: 6)
        h.center.present(ToastMessage(title: "Copiado", duration: 2))
        try await h.clock.sleepers(count: 1)
        #expect(h.clock.nextDeadline == ManualClock.Instant(offset: seconds(2)))
    }

    @Test(".indefinite never expires and does not hold up a timer")
    func indefiniteNeverExpires() async throws {
        let h = Harness()
        h.center.present(ToastMessage(id: "E", title: "Error al sincronizar", duration: .indefinite))
        h.center.present(ToastMessage(id: "N", title: "Next"))
        #expect(h.presenter.onScreen.first?.toast.remaining == nil)
        #expect(h.presenter.onScreen.first?.toast.isTimerRunning == false)
        await h.advance(to: 10_000)
        #expect(h.clock.sleeperCount == 0)
        #expect(h.log.terminal.isEmpty)
        h.center.dismiss(id: "E")
        #expect(h.log.terminal == [.ended(id: "E", outcome: .closedByApp)])
        #expect(h.presenter.onScreen.map(\.id) == ["N"])
    }

    @Test("maxVisible 2: the newest on screen is in front and only its time runs; a waiting toast comes in front")
    func maxVisibleTwo() async throws {
        let h = Harness(maxVisible: 2)
        h.center.present(ToastMessage(id: "A", title: "A"))
        h.center.present(ToastMessage(id: "B", title: "B"))
        h.center.present(ToastMessage(id: "C", title: "C"))
        #expect(h.presenter.commandSummaries == ["show A", "show B", "timer A stopped"])
        #expect(h.presenter.presentation(of: "B")?.toast.isTimerRunning == true)
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 4)
        await h.log.waitFor(.shown(id: "C"))
        #expect(h.center.liveToastIDs == ["C", "A"])
        #expect(h.presenter.presentation(of: "A")?.toast.remaining == seconds(4))
        try await h.clock.sleepers(count: 1)
        #expect(h.clock.nextDeadline == ManualClock.Instant(offset: seconds(8)))
    }

    @Test("overflow .replaceOldest drops the oldest with .replaced")
    func replaceOldest() async throws {
        let h = Harness(maxVisible: 2, overflow: .replaceOldest)
        h.center.present(ToastMessage(id: "A", title: "A"))
        h.center.present(ToastMessage(id: "B", title: "B"))
        h.center.present(ToastMessage(id: "C", title: "C"))
        // C takes A's room, in front: B stops there.
        #expect(
            h.presenter.commandSummaries == [
                "show A", "show B", "timer A stopped", "close A replaced", "show C", "timer B stopped",
            ])
        #expect(h.log.terminal == [.ended(id: "A", outcome: .replaced)])
        #expect(h.center.liveToastIDs == ["C", "B"])
    }

    @Test("dismissAll ends every toast, shown or waiting, once")
    func dismissAll() {
        let h = Harness()
        for id in ["A", "B", "C"] { h.center.present(ToastMessage(id: id, title: id)) }
        h.center.dismissAll()
        #expect(h.log.terminal == ["A", "B", "C"].map { .ended(id: $0, outcome: .closedByApp) })
        #expect(h.presenter.commandSummaries == ["show A", "close A closedByApp"])
        h.center.dismissAll()
        #expect(h.log.terminal.count == 3)
    }
}
