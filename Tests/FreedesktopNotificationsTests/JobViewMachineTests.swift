import DBus
import FreedesktopNotifications
import Testing
import ToastModel

/// Progress on Plasma as a job view (issue 21 §1), in the desktop presenter's machine: which toasts become views,
/// and the calls that make, update and end them.
@Suite struct JobViewMachineTests {
    typealias Machine = DesktopPresenterMachine

    /// Plasma with its job service on the bus.
    static let plasma: ServerCapabilities = {
        var capabilities = ServerCapabilities(
            ["actions", "body", "body-markup", "inline-reply"],
            information: ServerInformation(
                name: "Plasma", vendor: "KDE", version: "5.27.5", specificationVersion: "1.2"))
        capabilities.drawsJobViews = true
        return capabilities
    }()

    static let path = "/org/kde/notificationmanager/jobs/JobView_1"

    static func progress(
        _ id: String, _ progress: ToastProgress?, _ message: String? = "Copiando", actions: [PresentedAction] = []
    ) -> ToastPresentation {
        let toast = PresentedToast(
            id: id, status: .normal, title: "Fotos", message: message, actions: actions, remaining: .seconds(4),
            isTimerRunning: true, progress: progress)
        return ToastPresentation(toast: toast, request: ThemedToastStyle(theme: .standard).makeRequest(for: toast))
    }

    static func requests(_ actions: [Machine.Action]) -> [(call: UInt64, DBusMethodCall)] {
        actions.compactMap { if case .requestJobView(_, let call, let request) = $0 { (call, request) } else { nil } }
    }

    static func updates(_ actions: [Machine.Action]) -> [[DBusValue]] {
        actions.compactMap { if case .updateJobView(path, let arguments) = $0 { arguments } else { nil } }
    }

    static func ends(_ actions: [Machine.Action]) -> [String] {
        actions.compactMap { if case .endJobView(let path) = $0 { path } else { nil } }
    }

    /// A machine linked to Plasma whose toast `id` is a job view at ``path``.
    static func withView(_ id: String = "p") throws -> Machine {
        var machine = PresenterMachineTests.linked(plasma)
        let asked = machine.handle(.show(progress(id, .fraction(0.1))))
        let call = try #require(requests(asked).first?.call)
        _ = machine.handle(.jobViewAnswered(id: id, call: call, .success(path)))
        return machine
    }

    /// A toast with progress and no actions becomes a view (no Notify), with the app's name and the first content;
    /// its updates go to the view; when its progress ends the view goes without a word and a notification shows the
    /// final toast; that is closed as any other.
    @Test func aProgressToastIsAJobViewUntilItsProgressEnds() throws {
        var machine = PresenterMachineTests.linked(Self.plasma)
        let asked = machine.handle(.show(Self.progress("p", .fraction(0.4))))
        #expect(asked.notifies.isEmpty, "\(asked)")
        let (call, request) = try #require(Self.requests(asked).first)
        #expect(request.destination == "org.kde.JobViewServer" && request.member == "requestView")
        #expect(request.arguments.count == 3 && request.arguments[1] == .int32(0), "neither cancel nor pause")
        let hints = String(describing: request.arguments[2])
        for expected in ["application-display-name", "tests", "immediate", "Fotos", "Copiando", "percent"] {
            #expect(hints.contains(expected), "\(expected) in \(hints)")
        }
        #expect(machine.handle(.awaitAccepted(id: "p", waiter: 1)).isEmpty, "waits for the view")
        let answered = machine.handle(.jobViewAnswered(id: "p", call: call, .success(Self.path)))
        #expect(answered == [.resume([1], .success(0))], "a view has no notification id")

        let updated = machine.handle(.show(Self.progress("p", .fraction(0.6), "Casi")))
        let update = try #require(Self.updates(updated).first)
        #expect(String(describing: update).contains("60") && String(describing: update).contains("Casi"), "\(update)")
        #expect(updated.notifies.isEmpty)
        let busy = machine.handle(.show(Self.progress("p", .indeterminate, "Buscando")))
        #expect(
            Self.updates(busy).first.map { !String(describing: $0).contains("percent") } == true, "a busy bar: \(busy)")

        let done = machine.handle(.show(Self.progress("p", nil, "Hecho")))
        #expect(Self.ends(done) == [Self.path], "\(done)")
        #expect(done.notifies.map(\.body) == ["Hecho"] && done.notifies.map(\.replacesID) == [0])
        let notified = try #require(done.notifyCall)
        _ = machine.handle(.notifyAnswered(id: "p", call: notified, PresenterMachineTests.reply(31)))
        #expect(machine.handle(.close(id: "p")).contains { if case .close(_, _, 31) = $0 { true } else { false } })
    }

    /// Closed while its view is asked for, or once it has one, the view ends; a detached presenter (or a new
    /// server) ends its views before the connection closes, since Plasma shows a view left open as a failed job.
    @Test func aViewEndsWithItsToastTheServerAndThePresenter() throws {
        var machine = PresenterMachineTests.linked(Self.plasma)
        let asked = machine.handle(.show(Self.progress("q", .fraction(0.4))))
        let call = try #require(Self.requests(asked).first?.call)
        #expect(machine.handle(.close(id: "q")).isEmpty, "the view is on its way")
        let answered = machine.handle(.jobViewAnswered(id: "q", call: call, .success(Self.path)))
        #expect(Self.ends(answered) == [Self.path])
        #expect(machine.trackedToastIDs.isEmpty && machine.isSettled)

        var closed = try Self.withView()
        #expect(Self.ends(closed.handle(.close(id: "p", expired: true))) == [Self.path])
        var detached = try Self.withView()
        #expect(Self.ends(detached.handle(.reset)) == [Self.path])
        var replaced = try Self.withView()
        let owner = replaced.handle(.ownerChanged(":1.77"))
        #expect(Self.ends(owner) == [Self.path] && owner.contains(.report(.reshowRequested)))
    }

    /// A notification that was the toast (adopted from `send`, or shown before the progress began) is closed
    /// first; the view is asked for once the close is answered.
    @Test func aNotificationBecomesAViewAfterItsClose() throws {
        var machine = PresenterMachineTests.linked(Self.plasma)
        _ = machine.handle(.adopt(serverID: 41, toastID: "p", onScreen: true))
        let closing = machine.handle(.show(Self.progress("p", .fraction(0.2))))
        guard case .close("p", let call, 41)? = closing.first, closing.count == 1 else {
            Issue.record("no close of 41 first: \(closing)")
            return
        }
        let asked = machine.handle(.closeAnswered(id: "p", call: call))
        #expect(Self.requests(asked).count == 1 && asked.notifies.isEmpty, "\(asked)")
    }

    /// What is not a view: a toast with actions (a view has no buttons), any toast where the job service is not on
    /// the bus, and a toast whose view was refused — that one is a notification with its bar in text, said once.
    @Test func toastsThatStayNotifications() throws {
        var machine = PresenterMachineTests.linked(Self.plasma)
        let action = PresentedAction(key: "open", actionID: "open", title: "Abrir", role: .trailing)
        let withActions = machine.handle(.show(Self.progress("a", .fraction(0.5), actions: [action])))
        #expect(withActions.notifies.count == 1 && Self.requests(withActions).isEmpty)

        var plain = Self.plasma
        plain.drawsJobViews = false
        var noService = PresenterMachineTests.linked(plain)
        let text = noService.handle(.show(Self.progress("b", .fraction(0.5))))
        #expect(text.notifies.first?.body.contains("▰▰▰▰▰▱▱▱▱▱ 50 %") == true, "\(text)")

        let asked = machine.handle(.show(Self.progress("c", .fraction(0.3))))
        let call = try #require(Self.requests(asked).first?.call)
        let refused = machine.handle(
            .jobViewAnswered(id: "c", call: call, .failure(PresentationError(.refused, reason: "no such method"))))
        #expect(refused.notifies.first?.body.contains("30 %") == true, "\(refused)")
        #expect(
            refused.reports.contains {
                if case .degraded("c", let reason) = $0 { reason.contains("no such method") } else { false }
            })
        let notified = try #require(refused.notifyCall)
        _ = machine.handle(.notifyAnswered(id: "c", call: notified, PresenterMachineTests.reply(8)))
        let later = machine.handle(.show(Self.progress("c", .fraction(0.9))))
        #expect(later.notifies.map(\.replacesID) == [8] && Self.requests(later).isEmpty, "it stays a notification")
    }

    /// A lost connection takes the views with it: the toast shown again asks for a new view, never an update of a
    /// path that is gone. A notification id adopted for a toast that is a view changes nothing.
    @Test func aViewGoesWithItsConnectionAndIsNotANotification() throws {
        var lost = try Self.withView()
        _ = lost.handle(.connectionLost(PresentationError(.busUnavailable, reason: "gone")))
        #expect(lost.trackedToastIDs.isEmpty, "nothing left of it")

        var adopted = try Self.withView()
        _ = adopted.handle(.adopt(serverID: 42, toastID: "p"))
        let again = adopted.handle(.show(Self.progress("p", .fraction(0.5))))
        #expect(Self.updates(again).count == 1 && again.count == 1, "the view is updated, nothing closed: \(again)")
    }
}
