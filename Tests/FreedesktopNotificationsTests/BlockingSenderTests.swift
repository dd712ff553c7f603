import DBus
import FreedesktopNotifications
import TestSupport
import Testing
import ToastModel

/// The sender for processes that hand over a toast and exit (`toastkit send` without `--wait`).
@Suite(.timeLimit(.minutes(1))) struct BlockingSenderTests {
    static func configuration(_ bus: PrivateBus) -> PresenterConfiguration {
        PresenterConfiguration(appName: "toastkit-tests", bus: .address(bus.address), callTimeout: .seconds(5))
    }

    static let request = ToastRequest(
        summary: "Copia terminada", body: "3 archivos <b>listos</b>", icon: .system("checkmark.circle.fill"),
        urgency: .low, category: "transfer.complete", actions: [.init(key: "default", label: "Abrir")],
        hints: ["x-extra": .string("sí")])

    /// `request` as the front toast with 4 s left and its timer running.
    static func presentation(_ request: ToastRequest = request) -> ToastPresentation {
        ToastPresentation(
            toast: PresentedToast(
                id: "t", status: .normal, title: request.summary, remaining: .seconds(4), isTimerRunning: true),
            request: request)
    }

    @Test func aToastIsSentAsThePresenterMapsItAndComesBackWithTheServersID() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus, options: .init(firstID: 41))
        defer { server.stop() }
        let configuration = Self.configuration(bus)
        let (shown, owner, capabilities) = try await onOwnThread {
            let sender = try BlockingNotificationSender(configuration: configuration)
            return (try sender.show(Self.presentation()), sender.server, sender.capabilities)
        }
        #expect(owner == server.connection.uniqueName)
        #expect(capabilities.has("body-markup"))
        #expect(capabilities.information?.name == "fake-notifications")
        let notification = try await server.nextNotification()
        #expect(shown.serverID == 41)
        #expect(shown.degradations.isEmpty)
        #expect(notification.id == 41)
        let expected = try NotificationMapping.notify(
            Self.presentation(), replacesID: 0, capabilities: capabilities, configuration: configuration)
        let call = expected.call
        #expect(notification.appName == call.appName)
        #expect(notification.appIcon == call.appIcon)
        #expect(notification.summary == call.summary)
        #expect(notification.body == call.body)
        #expect(notification.actionList == call.actionList)
        #expect(notification.hints == call.hints)
        #expect(notification.expireTimeout == call.expireTimeout)
        #expect(notification.body == "3 archivos &lt;b&gt;listos&lt;/b&gt;")
        #expect(notification.hints["image-path"] == .string("emblem-default"))
    }

    @Test func replacingUpdatesInPlaceAndCloseClosesIt() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let configuration = Self.configuration(bus)
        let (first, second) = try await onOwnThread {
            let sender = try BlockingNotificationSender(configuration: configuration)
            let first = try sender.show(Self.presentation(ToastRequest(summary: "Sincronizando…")))
            let second = try sender.show(
                Self.presentation(ToastRequest(summary: "Sincronizado")), replacing: first.serverID)
            try sender.close(serverID: second.serverID)
            return (first.serverID, second.serverID)
        }
        #expect(try await server.nextNotification().replacesID == 0)
        let update = try await server.nextNotification()
        #expect(update.replacesID == first)
        #expect(update.summary == "Sincronizado")
        #expect(second == first, "the server kept the id")
        #expect(server.closeRequests == [first])
        #expect(server.liveIDs.isEmpty)
    }

    @Test func whatTheServerCannotDoIsReportedAsDegradations() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus, options: .init(capabilities: ["icon-static"]))
        defer { server.stop() }
        let configuration = Self.configuration(bus)
        let shown = try await onOwnThread {
            try BlockingNotificationSender(configuration: configuration).show(Self.presentation())
        }
        #expect(
            shown.degradations == [
                "the server shows no message body: the message was folded into the title",
                "the server does not support actions: 1 dropped (default)",
            ])
        #expect(try await server.nextNotification().actions.isEmpty)
    }

    @Test func inputNoServerCanTakeIsRefusedBeforeAnythingIsSent() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let configuration = Self.configuration(bus)
        let error = try await onOwnThread { () -> PresentationError? in
            let sender = try BlockingNotificationSender(configuration: configuration)
            do throws(PresentationError) {
                _ = try sender.show(Self.presentation(ToastRequest(summary: "Hola\0mundo")))
                return nil
            } catch {
                return error
            }
        }
        #expect(error?.kind == .invalidInput)
        #expect(error?.reason.contains("title") == true, "\(String(describing: error))")
        #expect(server.notifications.isEmpty)
    }

    @Test func noServerASlowServerAndWrongAnswersEachSayWhat() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let configuration = Self.configuration(bus)
        func attempt(
            _ configuration: PresenterConfiguration
        ) async throws -> PresentationError? {
            try await onOwnThread {
                do throws(PresentationError) {
                    _ = try BlockingNotificationSender(configuration: configuration).show(
                        Self.presentation(ToastRequest(summary: "Hola")))
                    return nil
                } catch {
                    return error
                }
            }
        }
        let none = try await attempt(configuration)
        #expect(none?.kind == .noServer)
        #expect(none?.reason == "no notification server is running (org.freedesktop.Notifications has no owner)")

        let slow = try await FakeNotificationServer.start(on: bus, options: .init(notifyDelay: .seconds(3)))
        var impatient = configuration
        impatient.callTimeout = .milliseconds(300)
        let late = try await attempt(impatient)
        slow.stop()
        #expect(late?.kind == .timedOut)
        #expect(late?.reason == "the notification server did not answer within 0.3 seconds")

        let broken = try await FakeNotificationServer.start(on: bus, options: .init(misbehavior: .errorReplies))
        let refused = try await attempt(configuration)
        broken.stop()
        #expect(refused?.kind == .refused)
        #expect(refused?.reason.contains("broken server") == true, "\(String(describing: refused))")

        var nowhere = configuration
        nowhere.bus = .address("unix:path=/nonexistent/toastkit-test-bus")
        let unreachable = try await attempt(nowhere)
        #expect(unreachable?.kind == .busUnavailable)
        #expect(unreachable?.reason.hasPrefix("cannot reach the session bus: ") == true)
    }

    /// A server that quits with our Notify unanswered left the bus: it did not time out, and a new server could
    /// take the toast (`noServer`, the kind the center recovers from).
    @Test func aServerThatLeavesMidCallIsReportedAsGoneNotAsSlow() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus, options: .init(notifyDelay: .seconds(600)))
        // A call timeout beyond the suite's time limit: "slow" would be a timeout (and a failed test), "gone" is
        // the kind below.
        var slow = Self.configuration(bus)
        slow.callTimeout = .seconds(300)
        let configuration = slow
        let sending = Task {
            try await onOwnThread { () -> PresentationError? in
                do throws(PresentationError) {
                    _ = try BlockingNotificationSender(configuration: configuration).show(
                        Self.presentation(ToastRequest(summary: "Hola")))
                    return nil
                } catch {
                    return error
                }
            }
        }
        _ = try await server.nextNotification()
        server.stop()
        let error = try await sending.value
        #expect(error?.kind == .noServer)
        #expect(error?.reason == "the notification server left the bus without answering")
    }
}
