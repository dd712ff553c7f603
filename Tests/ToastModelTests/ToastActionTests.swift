import Testing
import ToastKitTesting
import ToastModel

@Suite("M5 actions", .timeLimit(.minutes(1)))
struct ToastActionTests {
    @Test("order: handler → onToastAction observer → effect (close, then the terminal event)")
    func exactOrder() throws {
        let h = Harness()
        let trace = Trace()
        let presenter = h.presenter
        h.center.onToastAction = { context in
            trace.append("observer \(context.actionID) onScreen=\(presenter.onScreen.map(\.id))")
        }
        let log = h.log
        h.center.onEvent = { event in
            log.append(event)
            switch event {
            case .actionInvoked(let id, let actionID, _): trace.append("event actionInvoked \(id) \(actionID)")
            case .ended(let id, let outcome): trace.append("event ended \(id) \(outcome)")
            default: break
            }
        }
        let open = ToastAction(title: "Abrir") { toast in
            trace.append("handler \(toast.id) onScreen=\(presenter.onScreen.map(\.id))")
        }
        h.center.present(ToastMessage(id: "M", title: "Mensaje de Ana", tapAction: open))
        try h.presenter.invokeAction(ToastActionRole.tapKey, on: "M")

        #expect(
            trace.all == [
                "handler M onScreen=[\"M\"]",
                "observer Abrir onScreen=[\"M\"]",
                "event actionInvoked M Abrir",
                "event ended M actionInvoked(actionID: \"Abrir\")",
            ])
        #expect(h.presenter.commandSummaries == ["show M", "close M actionCompleted"])
    }

    @Test("the tap action goes to the presenter as \"default\"; events report its own id; swipe keys are ids")
    func tapKeyIsDefault() throws {
        let h = Harness()
        let archive = ToastAction(id: "archive", title: "Archivar", icon: .system("archivebox"))
        h.center.present(
            ToastMessage(
                id: "M", title: "Mensaje de Ana", tapAction: ToastAction(id: "open", title: "Abrir"),
                swipeActions: ToastSwipeActions(leading: archive, trailing: .later)))
        let shown = h.presenter.presentation(of: "M")!
        #expect(
            shown.toast.actions == [
                PresentedAction(key: "default", actionID: "open", title: "Abrir", role: .tap),
                PresentedAction(
                    key: "archive", actionID: "archive", title: "Archivar", icon: .system("archivebox"),
                    role: .leading),
                PresentedAction(key: "later", actionID: "later", title: "Later", role: .trailing),
            ])
        #expect(shown.request.actions.map(\.key) == ["default", "archive", "later"])
        try h.presenter.invokeAction("default", on: "M", activationToken: "token-1")
        #expect(h.log.events.contains(.actionInvoked(id: "M", actionID: "open", activationToken: "token-1")))
        #expect(h.log.terminal == [.ended(id: "M", outcome: .actionInvoked(actionID: "open"))])
    }

    @Test("the handler receives the toast; a context handler also gets the activation token")
    func handlerArguments() throws {
        let h = Harness()
        let trace = Trace()
        let withToken = ToastAction.withContext(id: "raise", title: "Raise") { context in
            trace.append("\(context.toast.title) \(context.actionID) \(context.activationToken ?? "-")")
        }
        h.center.present(ToastMessage(id: "M", title: "T", swipeActions: ToastSwipeActions(leading: withToken)))
        try h.presenter.invokeAction("raise", on: "M", activationToken: "xdg-token")
        #expect(trace.all == ["T raise xdg-token"])
    }

    @Test("confirmation: the toast is updated in place with the text for a short time, then closed; one terminal")
    func confirmationStep() async throws {
        let h = Harness()
        let archived = Trace()
        let archive = ToastAction(
            id: "archive", title: "Archivar", icon: .system("archivebox"), confirmation: "Archivado"
        ) { toast in archived.append(toast.id) }
        h.center.present(
            ToastMessage(id: "M", title: "Mensaje de Ana", swipeActions: ToastSwipeActions(leading: archive)))
        h.center.present(ToastMessage(id: "N", title: "Next"))
        try await h.clock.sleepers(count: 1)
        await h.advance(to: 1)
        try h.presenter.invokeAction("archive", on: "M")

        #expect(archived.all == ["M"])
        #expect(h.presenter.commandSummaries == ["show M", "update M"])
        let confirmation = h.presenter.presentation(of: "M")!
        #expect(confirmation.toast.title == "Archivado")
        #expect(confirmation.toast.isConfirmation)
        #expect(confirmation.toast.actions.isEmpty)
        #expect(confirmation.toast.status == .success)
        #expect(confirmation.toast.remaining == .milliseconds(1500))
        #expect(confirmation.request.isTransient)
        #expect(h.log.terminal == [.ended(id: "M", outcome: .actionInvoked(actionID: "archive"))])

        try await h.clock.sleepers(count: 1)
        await h.advance(to: 2.5)
        await h.log.waitFor(.shown(id: "N"))
        #expect(h.presenter.commandSummaries == ["show M", "update M", "close M actionCompleted", "show N"])
        #expect(h.log.terminal == [.ended(id: "M", outcome: .actionInvoked(actionID: "archive"))])
        #expect(h.presenter.presentation(of: "N")?.toast.remaining == seconds(4))
    }

    @Test("re-presenting the id during a confirmation replaces it silently (the toast already ended)")
    func representDuringConfirmation() throws {
        let h = Harness()
        let done = ToastAction(id: "done", title: "Hecho", confirmation: "¡Hecho!")
        h.center.present(ToastMessage(id: "M", title: "T", tapAction: done))
        try h.presenter.invokeAction("default", on: "M")
        h.center.present(ToastMessage(id: "M", title: "Otra vez"))
        #expect(h.presenter.commandSummaries == ["show M", "update M", "update M"])
        #expect(h.log.terminal == [.ended(id: "M", outcome: .actionInvoked(actionID: "done"))])
        h.center.dismiss(id: "M")
        #expect(h.log.terminal.count == 2)
    }

    @Test("a handler may call back into the center; the effect then leaves the new presentation alone")
    func reentrantHandler() throws {
        let h = Harness()
        let center = h.center
        let retry = ToastAction(id: "retry", title: "Reintentar") { toast in
            center.present(ToastMessage(id: toast.id, title: "Reintentando…", duration: .indefinite))
        }
        center.present(ToastMessage(id: "S", title: "Error al sincronizar", tapAction: retry))
        try h.presenter.invokeAction("default", on: "S")
        #expect(h.log.terminal == [.ended(id: "S", outcome: .actionInvoked(actionID: "retry"))])
        #expect(h.presenter.onScreen.map(\.toast.title) == ["Reintentando…"])
        #expect(center.liveToastIDs == ["S"])
    }

    @Test("a second report while an action runs, and unknown keys or ids, change nothing")
    func spuriousReports() throws {
        let h = Harness()
        let count = Trace()
        let presenter = h.presenter
        let action = ToastAction(id: "a", title: "A") { toast in
            count.append("handler")
            presenter.reportActionInvoked(key: "a", on: toast.id)  // a double click arriving while the handler runs
            presenter.dismissByUser(toast.id)  // the server's NotificationClosed after ActionInvoked
        }
        h.center.present(ToastMessage(id: "T", title: "T", swipeActions: ToastSwipeActions(leading: action)))
        h.presenter.reportActionInvoked(key: "nope", on: "T")
        h.presenter.reportActionInvoked(key: "a", on: "unknown")
        #expect(h.log.terminal.isEmpty)
        try h.presenter.invokeAction("a", on: "T")
        #expect(count.all == ["handler"])
        #expect(h.log.terminal == [.ended(id: "T", outcome: .actionInvoked(actionID: "a"))])
    }

    @Test("a question never waits for a room, so its tap works at once; a tap reported after it ended is ignored")
    func questionActionsAndLateReports() {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "A"))
        h.center.present(ToastMessage(id: "B", title: "B", tapAction: ToastAction(title: "Open")))
        #expect(h.presenter.onScreen.map(\.id) == ["A", "B"], "shown at once in a room of its own")
        h.center.dismiss(id: "B")
        h.presenter.reportActionInvoked(key: "default", on: "B")
        #expect(h.log.terminal == [.ended(id: "B", outcome: .closedByApp)], "the late tap does nothing")
    }

    @Test("the built-in Dismiss action ends the toast with its id")
    func builtInDismiss() throws {
        let h = Harness(labels: ToastLabels(language: .spanish))
        h.center.present(ToastMessage(id: "A", title: "A", swipeActions: ToastSwipeActions(trailing: .dismiss)))
        #expect(h.presenter.presentation(of: "A")?.toast.actions.map(\.title) == ["Descartar"])
        try h.presenter.invokeAction("dismiss", on: "A")
        #expect(h.log.terminal == [.ended(id: "A", outcome: .actionInvoked(actionID: "dismiss"))])
    }

    @Test("the person's close and the server's expiry are reported as dismissed and expired")
    func closesFromPresenter() {
        let h = Harness(maxVisible: 3)
        for id in ["A", "B", "C"] { h.center.present(ToastMessage(id: id, title: id)) }
        h.presenter.dismissByUser("A")
        h.presenter.closeByServer("B", reason: .expired)
        h.presenter.closeByServer("C", reason: .other("closed by another client"))
        #expect(
            h.log.terminal == [
                .ended(id: "A", outcome: .dismissed), .ended(id: "B", outcome: .expired),
                .ended(id: "C", outcome: .dismissed),
            ])
        h.presenter.dismissByUser("A")
        #expect(h.log.terminal.count == 3)
    }
}
