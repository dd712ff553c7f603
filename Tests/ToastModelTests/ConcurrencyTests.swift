import Testing
import ToastKitTesting
import ToastModel

@Suite("Concurrency", .timeLimit(.minutes(1)))
struct ConcurrencyTests {
    @Test("1,000 concurrent present calls from many tasks → 1,000 terminal events, none lost or doubled")
    func thousandConcurrentPresents() async {
        let presenter = RecordingPresenter { presentation, events in
            events.closed(toastID: presentation.id, reason: .dismissedByUser)
        }
        let h = Harness(presenter: presenter)
        let center = h.center
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<50 {
                group.addTask {
                    for index in 0..<20 {
                        center.present(ToastMessage(id: "t\(task)-\(index)", title: "Toast \(task)-\(index)"))
                    }
                }
            }
        }
        await h.log.waitUntil { $0.filter(\.isTerminal).count >= 1000 }
        let terminal = h.log.terminal
        #expect(terminal.count == 1000)
        #expect(Set(terminal.compactMap(\.toastID)).count == 1000)
        #expect(terminal.allSatisfy { $0 == .ended(id: $0.toastID!, outcome: .dismissed) })
        #expect(center.liveToastIDs.isEmpty)
        let shows = presenter.commands.filter { if case .show = $0 { true } else { false } }
        #expect(shows.count == 1000)
    }

    @Test("concurrent presents of shared ids, then dismissAll: one terminal per present call")
    func sharedIDsAndDismissAll() async {
        let h = Harness(maxVisible: 5)
        let center = h.center
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<40 {
                group.addTask {
                    for index in 0..<25 {
                        center.present(ToastMessage(id: "id\((task * 25 + index) % 100)", title: "x"))
                    }
                }
            }
        }
        center.dismissAll()
        await h.log.waitUntil { $0.filter(\.isTerminal).count >= 1000 }
        let terminal = h.log.terminal
        #expect(terminal.count == 1000)
        #expect(terminal.filter { $0 == .ended(id: $0.toastID!, outcome: .closedByApp) }.count == 100)
        #expect(terminal.filter { $0 == .ended(id: $0.toastID!, outcome: .replaced) }.count == 900)
        #expect(h.log.events.filter { if case .presented = $0 { true } else { false } }.count == 1000)
        #expect(h.presenter.onScreen.isEmpty)
    }

    @Test("presents racing with dismisses and clock advances still end each toast exactly once")
    func racingOperations() async {
        let h = Harness(defaultDuration: 1, maxVisible: 3)
        let center = h.center
        let clock = h.clock
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<10 {
                group.addTask {
                    for index in 0..<50 {
                        let id = "r\(task)-\(index)"
                        center.present(ToastMessage(id: id, title: id))
                        if index % 3 == 0 { center.dismiss(id: id) }
                    }
                }
            }
            group.addTask {
                for _ in 0..<200 { clock.advance(by: .milliseconds(100)) }
            }
        }
        center.dismissAll()
        await h.log.waitUntil { $0.filter(\.isTerminal).count >= 500 }
        let ids = h.log.terminal.compactMap(\.toastID)
        #expect(ids.count == 500)
        #expect(Set(ids).count == 500)
    }
}
