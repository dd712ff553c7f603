import Foundation
import Testing
import ToastKitTesting
import ToastModel

@Suite("M6 .later", .timeLimit(.minutes(1)))
struct ToastLaterTests {
    static func laterMessage(id: String = "M") -> ToastMessage {
        ToastMessage(
            id: id, status: .notification, title: "Mensaje de Ana", message: "¿Comemos?",
            icon: .system("person.crop.circle"), duration: 6,
            tapAction: ToastAction(id: "open", title: "Abrir"),
            swipeActions: ToastSwipeActions(leading: ToastAction(id: "archive", title: "Archivar"), trailing: .later))
    }

    @Test("later keeps the toast aside; hostDidBecomeActive brings it back, with its handlers, in-process")
    func inProcessRoundTrip() throws {
        let h = Harness()
        let opened = Trace()
        var message = Self.laterMessage()
        message.tapAction = ToastAction(id: "open", title: "Abrir") { toast in opened.append(toast.id) }
        h.center.present(message)
        try h.presenter.invokeAction("later", on: "M")
        #expect(h.log.terminal == [.ended(id: "M", outcome: .deferred)])
        #expect(h.presenter.commandSummaries == ["show M", "close M deferred"])
        #expect(h.store.records.map(\.id) == ["M"])

        h.center.hostDidBecomeActive()
        #expect(h.presenter.commandSummaries == ["show M", "close M deferred", "show M"])
        #expect(h.store.records.isEmpty)
        try h.presenter.invokeAction("default", on: "M")
        #expect(opened.all == ["M"])
        h.center.hostDidBecomeActive()
        #expect(h.presenter.commandSummaries.count == 4)
    }

    @Test("later(after:) brings the toast back by itself at its time; hostDidBecomeActive does not bring it sooner")
    func aSnoozeComesBackAtItsTime() async throws {
        let h = Harness()
        h.center.present(
            ToastMessage(
                id: "S", title: "Reunión a las 11", duration: 6,
                swipeActions: ToastSwipeActions(leading: .later(after: .seconds(600)))))
        h.center.present(Self.laterMessage(id: "P"))
        #expect(h.presenter.presentation(of: "S")?.toast.actions.map(\.title) == ["Later"], "the built-in label")
        try h.presenter.invokeAction("later", on: "S")
        #expect(h.log.terminal == [.ended(id: "S", outcome: .deferred)])
        let record = try #require(h.store.records.first { $0.id == "S" })
        #expect(record.comesBackAt.map { $0.timeIntervalSince(record.deferredAt) } == 600)
        try h.presenter.invokeAction("later", on: "P")
        // The host comes back: the plain Later toast with it, the snoozed one waits for its time.
        h.center.hostDidBecomeActive()
        #expect(h.presenter.commandSummaries.filter { $0 == "show S" }.count == 1, "\(h.presenter.commandSummaries)")
        #expect(h.presenter.commandSummaries.filter { $0 == "show P" }.count == 2, "\(h.presenter.commandSummaries)")
        #expect(h.store.records.map(\.id) == ["S"], "still kept until it comes back")
        // P's 6 s and S's 600 s sleep on the clock.
        try await h.clock.sleepers(count: 2)
        h.clock.advance(by: .seconds(599))
        #expect(h.presenter.commandSummaries.filter { $0 == "show S" }.count == 1, "not before its time")
        h.clock.advance(by: .seconds(1))
        // Presented again: its own 6 s timer sleeps.
        try await h.clock.sleepers(count: 1)
        #expect(h.presenter.commandSummaries.filter { $0 == "show S" }.count == 2, "\(h.presenter.commandSummaries)")
        #expect(h.store.records.isEmpty)
        #expect(h.presenter.presentation(of: "S")?.toast.actions.map(\.key) == ["later"], "it can be snoozed again")
    }

    @Test("a snooze stored by one run comes back in the next at its time, or at once when it has passed")
    func aStoredSnoozeComesBackInTheNextRun() async throws {
        let store = InMemoryLaterStore()
        do {
            let h = Harness(store: store)
            h.center.present(
                ToastMessage(
                    id: "S", title: "Té", swipeActions: ToastSwipeActions(leading: .later(after: .seconds(300)))))
            try h.presenter.invokeAction("later", on: "S")
            #expect(store.records.first?.comesBackAt != nil)
        }
        let next = Harness(store: store)
        next.center.hostDidBecomeActive()
        #expect(next.presenter.commandSummaries.isEmpty, "its time has not come")
        try await next.clock.sleepers(count: 1)
        next.clock.advance(by: .seconds(300))
        try await next.clock.sleepers(count: 1)
        #expect(next.presenter.commandSummaries == ["show S"])

        #expect(store.records.isEmpty)
        let past = ToastLaterRecord(
            message: ToastMessage(id: "Q", title: "Pasado", swipeActions: .init(leading: .later(after: .seconds(1)))),
            deferredAt: Date(timeIntervalSinceNow: -60))
        try store.save([past])
        let third = Harness(store: store)
        third.center.hostDidBecomeActive()
        #expect(third.presenter.commandSummaries == ["show Q"], "its time came while no center ran")
    }

    @Test("round trip through a JSON file and a fresh center")
    func fileRoundTrip() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("toastkit/later.json")

        do {
            let clock = ManualClock()
            let presenter = RecordingPresenter()
            let center = ToastCenter(
                presenter: presenter, clock: clock, laterStore: FileLaterStore(url: url),
                labels: ToastLabels(language: .japanese))
            center.present(Self.laterMessage())
            #expect(presenter.presentation(of: "M")?.toast.actions.last?.title == "後で")
            try presenter.invokeAction("later", on: "M")
        }
        let stored = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        #expect(stored?["version"] as? Int == 1)
        #expect((stored?["toasts"] as? [Any])?.count == 1)

        let clock = ManualClock()
        let presenter = RecordingPresenter()
        let center = ToastCenter(presenter: presenter, clock: clock, laterStore: FileLaterStore(url: url))
        let log = EventLog(clock: clock)
        center.onEvent = { log.append($0) }
        let trace = Trace()
        center.onToastAction = { trace.append("observer \($0.actionID)") }
        center.hostDidBecomeActive()

        let back = try #require(presenter.presentation(of: "M"))
        #expect(back.toast.title == "Mensaje de Ana")
        #expect(back.toast.message == "¿Comemos?")
        #expect(back.toast.status == .notification)
        #expect(back.toast.icon == .system("person.crop.circle"))
        #expect(back.toast.remaining == seconds(6))
        #expect(back.toast.actions.map(\.key) == ["default", "archive", "later"])
        #expect(try FileLaterStore(url: url).load().isEmpty)
        // Without a restorer the actions come back without handlers, but the observer still sees them.
        try presenter.invokeAction("archive", on: "M")
        #expect(trace.all == ["observer archive"])
        #expect(log.terminal == [.ended(id: "M", outcome: .actionInvoked(actionID: "archive"))])
    }

    @Test("a laterRestorer gives restored toasts their handlers back")
    func restorer() throws {
        let store = InMemoryLaterStore(records: [ToastLaterRecord(message: Self.laterMessage())])
        let h = Harness(store: store)
        let trace = Trace()
        h.center.laterRestorer = { record in
            var message = record.makeMessage()
            message.tapAction = message.tapAction?.withHandler { trace.append("open \($0.toast.id)") }
            return message
        }
        h.center.hostDidBecomeActive()
        try h.presenter.invokeAction("default", on: "M")
        #expect(trace.all == ["open M"])
    }

    @Test("a corrupt file is set aside (not deleted) and reported; new toasts are still kept")
    func corruptFile() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("later.json")
        try Data("{ not json".utf8).write(to: url)

        let clock = ManualClock()
        let presenter = RecordingPresenter()
        let center = ToastCenter(presenter: presenter, clock: clock, laterStore: FileLaterStore(url: url))
        let log = EventLog(clock: clock)
        center.onEvent = { log.append($0) }
        center.present(Self.laterMessage())
        try presenter.invokeAction("later", on: "M")

        let problems = log.events.compactMap { event -> LaterStoreProblem? in
            if case .laterStoreProblem(let problem) = event { return problem }
            return nil
        }
        #expect(problems.count == 1)
        let problem = try #require(problems.first)
        #expect(problem.kind == .corrupt)
        let aside = try #require(problem.setAsideAt)
        #expect(aside.lastPathComponent.hasPrefix("later.json.corrupt-"))
        #expect(try String(contentsOf: aside, encoding: .utf8) == "{ not json")
        #expect(try FileLaterStore(url: url).load().map(\.id) == ["M"])
        #expect(log.terminal == [.ended(id: "M", outcome: .deferred)])
    }

    @Test("a corrupt file found on hostDidBecomeActive is reported and set aside, never a crash")
    func corruptFileOnRestore() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("later.json")
        try Data("[1, 2".utf8).write(to: url)
        let clock = ManualClock()
        let center = ToastCenter(presenter: RecordingPresenter(), clock: clock, laterStore: FileLaterStore(url: url))
        let log = EventLog(clock: clock)
        center.onEvent = { log.append($0) }
        center.hostDidBecomeActive()
        guard case .laterStoreProblem(let problem) = log.events.first else {
            Issue.record("expected a later store problem, got \(log.events)")
            return
        }
        #expect(problem.kind == .corrupt)
        #expect(FileManager.default.fileExists(atPath: problem.setAsideAt?.path ?? "/nonexistent"))
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test("an unreadable file is reported and set aside")
    func unreadableFile() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("later.json")
        // A directory where the file should be cannot be read, even as root.
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        #expect {
            try FileLaterStore(url: url).load()
        } throws: { error in
            guard let problem = error as? LaterStoreProblem else { return false }
            return problem.kind == .unreadable && problem.setAsideAt != nil
        }
    }

    @Test("when the store cannot be read or written, kept toasts stay in memory and still come back")
    func storeFailures() throws {
        let h = Harness()
        let location = URL(fileURLWithPath: "/nonexistent/later.json")
        h.store.failLoads(with: LaterStoreProblem(kind: .unreadable, location: location, detail: "EACCES"))
        h.center.present(Self.laterMessage(id: "A"))
        try h.presenter.invokeAction("later", on: "A")
        h.store.failLoads(with: nil)
        h.store.failSaves(with: LaterStoreProblem(kind: .unwritable, location: location, detail: "ENOSPC"))
        h.center.present(Self.laterMessage(id: "B"))
        try h.presenter.invokeAction("later", on: "B")
        let kinds = h.log.events.compactMap { event -> LaterStoreProblem.Kind? in
            if case .laterStoreProblem(let problem) = event { return problem.kind }
            return nil
        }
        #expect(kinds == [.unreadable, .unwritable])
        h.store.failSaves(with: nil)
        h.center.hostDidBecomeActive()
        // Both back, and both questions (a tap, buttons): shown at once, the last brought back in front.
        #expect(h.center.liveToastIDs == ["B", "A"])
    }

    @Test(
        "each application's location follows XDG_STATE_HOME, then HOME/.local/state",
        arguments: [
            (["XDG_STATE_HOME": "/state", "HOME": "/home/ana"], "/state/toastkit/later/Fotos.json"),
            (["HOME": "/home/ana"], "/home/ana/.local/state/toastkit/later/Fotos.json"),
            (["XDG_STATE_HOME": "relative", "HOME": "/home/ana"], "/home/ana/.local/state/toastkit/later/Fotos.json"),
        ])
    func defaultLocation(environment: [String: String], expected: String) {
        #expect(FileLaterStore.defaultURL(application: "Fotos", environment: environment).path == expected)
        #expect(
            FileLaterStore.defaultURL(environment: environment).path
                == expected.replacingOccurrences(of: "later/Fotos.json", with: "later.json"),
            "the shared file of earlier versions")
    }

    @Test(
        "an application's name is its file's name, and no name reaches another folder",
        arguments: [
            ("Fotos", "Fotos.json"), ("org.example.Fotos", "org.example.Fotos.json"), ("mi app", "mi%20app.json"),
            ("../../etc/x", "..%2F..%2Fetc%2Fx.json"), ("..", "%2E%2E.json"), ("", "%.json"), ("\u{0}", "%00.json"),
            ("Música", "M%C3%BAsica.json"),
        ])
    func applicationFileNames(application: String, file: String) {
        let url = FileLaterStore.defaultURL(application: application, environment: ["XDG_STATE_HOME": "/s"])
        #expect(url.path == "/s/toastkit/later/\(file)")
    }

    @Test("a long application name is cut and hashed within NAME_MAX, and two such names stay apart")
    func longApplicationNames() {
        let long = String(repeating: "ñ", count: 300)
        let other = String(repeating: "ñ", count: 299) + "n"
        let names = [long, other].map { FileLaterStore.defaultURL(application: $0).lastPathComponent }
        #expect(names.allSatisfy { $0.utf8.count <= 255 }, "\(names)")
        #expect(names[0] != names[1])
        #expect(names[0].contains("~"))
    }

    @Test("two applications keep their own toasts, with the same ids, apart")
    func applicationsKeepTheirOwn() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ["XDG_STATE_HOME": folder.path]
        let clock = ManualClock()
        for (application, title) in [("Fotos", "Foto lista"), ("Correo", "Correo nuevo")] {
            let presenter = RecordingPresenter()
            let center = ToastCenter(
                presenter: presenter, clock: clock,
                laterStore: FileLaterStore.standard(application: application, environment: environment))
            center.present(ToastMessage(id: "M", title: title, swipeActions: ToastSwipeActions(trailing: .later)))
            try presenter.invokeAction("later", on: "M")
        }
        let fotos = try FileLaterStore.standard(application: "Fotos", environment: environment).load()
        let correo = try FileLaterStore.standard(application: "Correo", environment: environment).load()
        #expect(fotos.map(\.title) == ["Foto lista"])
        #expect(correo.map(\.title) == ["Correo nuevo"])
    }

    @Test("records encode icons, including image pixels, and durations")
    func recordCoding() throws {
        let image = ToastIcon.image(width: 1, height: 1, rgba: [1, 2, 3, 4])
        for icon in [ToastIcon.system("a"), .file("/tmp/a.png"), image] {
            for duration in [ToastDuration.automatic, .indefinite, 2.5] {
                let record = ToastLaterRecord(
                    message: ToastMessage(id: "x", title: "t", icon: icon, duration: duration))
                let data = try JSONEncoder().encode(record)
                #expect(try JSONDecoder().decode(ToastLaterRecord.self, from: data) == record)
            }
        }
    }

    @Test("two centers on one file (two processes) both keep their toast: save merges what changed since load")
    func concurrentKeepersOnOneFile() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("toastkit/later.json")
        let first = FileLaterStore(url: url)
        let second = FileLaterStore(url: url)
        // Both read the (empty) list, then each adds its own record: the second save must not drop the first.
        var seenByFirst = try first.load()
        var seenBySecond = try second.load()
        seenByFirst.append(ToastLaterRecord(message: Self.laterMessage(id: "A")))
        seenBySecond.append(ToastLaterRecord(message: Self.laterMessage(id: "B")))
        try first.save(seenByFirst)
        try second.save(seenBySecond)
        #expect(try FileLaterStore(url: url).load().map(\.id) == ["A", "B"])
        // Clearing what one has seen leaves what the other added meanwhile.
        let restoring = FileLaterStore(url: url)
        _ = try restoring.load()
        var third = try first.load()
        third.append(ToastLaterRecord(message: Self.laterMessage(id: "C")))
        try first.save(third)
        try restoring.save([])
        #expect(try FileLaterStore(url: url).load().map(\.id) == ["C"])
        // update(_:) is one locked step.
        let taken = try FileLaterStore(url: url).update { records -> [String] in
            defer { records = [] }
            return records.map(\.id)
        }
        #expect(taken == ["C"])
        #expect(try FileLaterStore(url: url).load().isEmpty)
    }

    @Test("a store that cannot be written says where and why, and keeps the toast in memory")
    func unwritableFileIsAClearProblem() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let blocker = folder.appendingPathComponent("file")
        try Data().write(to: blocker)
        let url = blocker.appendingPathComponent("toastkit/later.json")
        let clock = ManualClock()
        let presenter = RecordingPresenter()
        let center = ToastCenter(presenter: presenter, clock: clock, laterStore: FileLaterStore(url: url))
        let log = EventLog(clock: clock)
        center.onEvent = { log.append($0) }
        center.present(Self.laterMessage())
        try presenter.invokeAction("later", on: "M")
        let problems = log.events.compactMap { event -> LaterStoreProblem? in
            if case .laterStoreProblem(let problem) = event { return problem }
            return nil
        }
        #expect(
            problems.map(\.description) == [
                "later store \(url.path) is unwritable: cannot create \(blocker.path)/toastkit: Not a directory"
            ])
        center.hostDidBecomeActive()
        #expect(center.liveToastIDs == ["M"], "it comes back in this process")
    }
}
