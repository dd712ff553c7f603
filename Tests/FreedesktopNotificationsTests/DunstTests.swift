import DBus
import Foundation
import FreedesktopNotifications
import TestSupport
import Testing
import ToastModel

extension OneAtATime {
    /// The desktop presenter against a real notification server: dunst under Xvfb on a private bus.
    @Suite(.timeLimit(.minutes(1))) struct DunstTests {
        /// A desktop, a center on it, and a bus monitor; torn down after `body`.
        private func withDesktop(
            maxVisible: Int = 1,
            _ body: (NotificationEnvironment, DesktopHarness, BusWatcher) async throws -> Void
        ) async throws {
            let desktop = try await NotificationEnvironment.start()
            defer { desktop.stop() }
            let watcher = try await BusWatcher(bus: desktop.bus.address)
            defer { watcher.stop() }
            let harness = DesktopHarness(busAddress: desktop.bus.address, maxVisible: maxVisible)
            try await body(desktop, harness, watcher)
        }

        @Test func aPresentedToastIsOnTheServerWithItsArguments() async throws {
            try await withDesktop { desktop, harness, watcher in
                harness.center.present(.warning, title: "Poco espacio", message: "Libera espacio para continuar.")
                let (notify, id) = try await watcher.nextNotifyAndReply()
                #expect(id > 0)
                #expect(notify.appName == "toastkit-tests")
                #expect(notify.summary == "Poco espacio")
                #expect(notify.body == "Libera espacio para continuar.")
                #expect(notify.hints["urgency"] == .byte(1))
                #expect(notify.hints["image-path"] == .string("dialog-warning"))
                #expect(notify.expireTimeout == 30_000)
                #expect(try await desktop.totalCount() == 1)
                let capabilities = try await harness.presenter.serverCapabilities()
                #expect(capabilities.information?.name == "dunst")
                #expect(capabilities.has("actions"))
            }
        }

        @Test func replaceByIDKeepsTheServerID() async throws {
            try await withDesktop { desktop, harness, watcher in
                harness.center.present(ToastMessage(id: "sync", title: "Sincronizando…", duration: .indefinite))
                let (first, id) = try await watcher.nextNotifyAndReply()
                #expect(first.replacesID == 0)
                harness.center.present(ToastMessage(id: "sync", status: .success, title: "Sincronizado"))
                let (second, sameID) = try await watcher.nextNotifyAndReply()
                #expect(second.replacesID == id)
                #expect(sameID == id)
                #expect(second.summary == "Sincronizado")
                #expect(try await desktop.totalCount() == 1)
            }
        }

        @Test func tapRunsHandlerThenObserverThenEffect() async throws {
            try await withDesktop { desktop, harness, watcher in
                let log = CallLog()
                harness.center.onToastAction = { context in log.append("observer \(context.actionID)") }
                harness.center.onEvent = { event in
                    if case .ended(_, let outcome) = event { log.append("ended \(outcome)") }
                }
                harness.center.present(
                    ToastMessage(
                        id: "ana", title: "Mensaje de Ana",
                        tapAction: ToastAction(id: "open", title: "Abrir") { toast in log.append("handler \(toast.id)")
                        }))
                let (notify, id) = try await watcher.nextNotifyAndReply()
                #expect(notify.actionList == ["default", "Abrir"])
                try await desktop.waitUntilDisplayed(1)

                try await desktop.dunstctl("action", "0")

                #expect(try await harness.outcome(of: "ana") == .actionInvoked(actionID: "open"))
                #expect(log.all == ["handler ana", "observer open", "ended actionInvoked(actionID: \"open\")"])
                #expect(try await watcher.nextClose() == id, "the effect (dismiss) closes it on the server")
                _ = try await watcher.next { $0.member == "NotificationClosed" && $0.body.first == .uint32(id) }
                #expect(try await desktop.totalCount() == 0)
            }
        }

        @Test func aNonDefaultActionFromTheContextMenuRunsItsOwnHandler() async throws {
            try await withDesktop { desktop, harness, watcher in
                let log = CallLog()
                let archive = ToastAction(id: "archive", title: "Archivar", icon: .system("archivebox")) { _ in
                    log.append("archive")
                }
                harness.center.present(
                    ToastMessage(
                        id: "ana", title: "Mensaje de Ana",
                        tapAction: ToastAction(title: "Abrir") { _ in log.append("open") },
                        swipeActions: ToastSwipeActions(leading: archive, trailing: .later)))
                let (notify, id) = try await watcher.nextNotifyAndReply()
                #expect(notify.actionList == ["default", "Abrir", "archive", "Archivar", "later", "Later"])
                try await desktop.waitUntilDisplayed(1)

                try desktop.chooseInContextMenu("\\[\(id),archive\\]$")
                try await desktop.dunstctl("context")

                #expect(try await harness.outcome(of: "ana") == .actionInvoked(actionID: "archive"))
                #expect(log.all == ["archive"])
            }
        }

        @Test func closingItInDunstIsADismissal() async throws {
            try await withDesktop { desktop, harness, watcher in
                harness.center.present(ToastMessage(id: "x", title: "Ciérrame", duration: .indefinite))
                _ = try await watcher.nextNotifyAndReply()
                try await desktop.waitUntilDisplayed(1)
                try await desktop.dunstctl("close")
                #expect(try await harness.outcome(of: "x") == .dismissed)
            }
        }

        @Test func aOneSecondToastExpiresOnTimeAndLeavesTheServer() async throws {
            try await withDesktop { desktop, harness, watcher in
                let presentedAt = ContinuousClock.now
                harness.center.present(ToastMessage(id: "copied", title: "Copiado", duration: 1))
                let (notify, id) = try await watcher.nextNotifyAndReply()
                #expect(notify.expireTimeout == 1000)
                #expect(try await harness.outcome(of: "copied") == .expired)
                let elapsed = ContinuousClock.now - presentedAt
                // A correctness check with a wide tolerance, not a benchmark.
                #expect(elapsed > .milliseconds(500) && elapsed < .milliseconds(1500), "expired after \(elapsed)")
                // Gone from the server: closed by the center (reason 3) or, if dunst's own timer for the same second
                // fired first, by the safety net (reason 1); either way reported once, as expired.
                let closed = try await watcher.next {
                    $0.member == "NotificationClosed" && $0.body.first == .uint32(id)
                }
                #expect(closed.body.last == .uint32(3) || closed.body.last == .uint32(1))
                #expect(try await desktop.totalCount() == 0)
                #expect(harness.events.filter(\.isTerminal).count == 1)
            }
        }

        @Test func aConfirmationReplacesTheToast() async throws {
            try await withDesktop { desktop, harness, watcher in
                let archive = ToastAction(id: "archive", title: "Archivar", confirmation: "Archivado")
                harness.center.present(
                    ToastMessage(id: "ana", title: "Mensaje de Ana", swipeActions: ToastSwipeActions(leading: archive)))
                let (_, id) = try await watcher.nextNotifyAndReply()
                try await desktop.waitUntilDisplayed(1)
                try await desktop.dunstctl("action", "0")
                let (confirmation, sameID) = try await watcher.nextNotifyAndReply()
                #expect(confirmation.replacesID == id)
                #expect(sameID == id)
                #expect(confirmation.summary == "Archivado")
                #expect(confirmation.actions.isEmpty)
                #expect(confirmation.hints["transient"] == .boolean(true))
                #expect(try await harness.outcome(of: "ana") == .actionInvoked(actionID: "archive"))
                #expect(try await desktop.totalCount() == 1)
            }
        }

        /// Renders the statuses and an icon on dunst and saves a PNG for a person to look at (not compared pixel by
        /// pixel): `.build/screenshots/dunst-statuses.png`.
        @Test func screenshotOfStatusesAndAnIcon() async throws {
            try await withDesktop(maxVisible: 4) { desktop, harness, watcher in
                harness.center.present(.success, title: "Cambios guardados", message: "Todo está al día.")
                harness.center.present(.warning, title: "Poco espacio", message: "Libera espacio para continuar.")
                harness.center.present(.error, title: "Error al sincronizar", message: "Sin conexión con el servidor.")
                harness.center.present(
                    ToastMessage(
                        status: .notification, title: "Fotos nuevas", message: "12 fotos de hoy",
                        icon: .system("photo.on.rectangle"), duration: 6))
                for _ in 0..<4 { _ = try await watcher.nextNotifyAndReply() }
                try await desktop.waitUntilDisplayed(4)
                let folder = "\(NotificationEnvironment.repositoryRoot)/.build/screenshots"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let path = "\(folder)/dunst-statuses.png"
                try await desktop.screenshot(to: path)
                let data = try #require(FileManager.default.contents(atPath: path))
                #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG file")
                #expect(data.count > 10_000)
            }
        }
    }
}
