import DBus
import FreedesktopNotifications
import Synchronization
import TestSupport
import Testing
import ToastKitTesting
import ToastModel

extension OneAtATime {
    /// What must hold when the server or the bus misbehaves, or input is hostile: every presented toast ends with
    /// exactly one terminal event, nothing crashes or hangs, and the error says what happened.
    @Suite(.timeLimit(.minutes(1))) struct FaultInjectionTests {
        private func failure(_ outcome: ToastOutcome) -> String? {
            if case .failed(.presenter(let reason)) = outcome { return reason }
            if case .failed(.invalid(let error)) = outcome { return error.description }
            return nil
        }

        @Test func aServerThatAnswersTooLateFailsTheToastWithTheReason() async throws {
            let bus = try await PrivateBus.start()
            defer { bus.stop() }
            let server = try await FakeNotificationServer.start(on: bus, options: .init(notifyDelay: .seconds(3)))
            defer { server.stop() }
            let harness = DesktopHarness(busAddress: bus.address) { $0.callTimeout = .milliseconds(300) }
            harness.center.present(ToastMessage(id: "slow", title: "Lento"))
            let outcome = try await harness.outcome(of: "slow")
            #expect(failure(outcome) == "the notification server did not answer within 0.3 seconds")
        }

        @Test(arguments: [FakeNotificationServer.Options.Misbehavior.wrongSignatures, .errorReplies])
        func aServerThatAnswersWronglyFailsTheToastWithTheReason(
            _ misbehavior: FakeNotificationServer.Options.Misbehavior
        ) async throws {
            let bus = try await PrivateBus.start()
            defer { bus.stop() }
            let server = try await FakeNotificationServer.start(on: bus, options: .init(misbehavior: misbehavior))
            defer { server.stop() }
            let harness = DesktopHarness(busAddress: bus.address)
            harness.center.present(ToastMessage(id: "broken", title: "Roto"))
            let reason = try #require(failure(try await harness.outcome(of: "broken")))
            switch misbehavior {
            case .wrongSignatures:
                #expect(reason.contains("has signature \"sx\", expected \"as\""), "\(reason)")
            case .errorReplies:
                #expect(reason.contains("org.toastkit.Test.Error.Broken: broken server"), "\(reason)")
            case .silent:
                Issue.record("not an argument of this test")
            }
            #expect(harness.events.filter(\.isTerminal).count == 1)
        }

        @Test func killingTheBusEndsEveryLiveToastWithAReason() async throws {
            let bus = try await PrivateBus.start()
            defer { bus.stop() }
            let server = try await FakeNotificationServer.start(on: bus)
            let harness = DesktopHarness(busAddress: bus.address, maxVisible: 3)
            for index in 0..<3 {
                harness.center.present(ToastMessage(id: "t\(index)", title: "Toast \(index)", duration: .indefinite))
            }
            for _ in 0..<3 { _ = try await server.nextNotification() }
            bus.kill()
            var reasons: [String: String] = [:]
            for _ in 0..<3 {
                let event = try await harness.next { $0.isTerminal }
                if case .ended(let id, let outcome) = event { reasons[id] = failure(outcome) }
            }
            #expect(Set(reasons.keys) == ["t0", "t1", "t2"])
            #expect(reasons.values.allSatisfy { $0.hasPrefix("the session bus connection was lost: ") }, "\(reasons)")
        }

        @Test func tenThousandPresentsFromSixteenTasksEndExactlyOnceEach() async throws {
            let bus = try await PrivateBus.start()
            defer { bus.stop() }
            let server = try await FakeNotificationServer.start(on: bus)
            defer { server.stop() }
            let total = 10_000
            let harness = DesktopHarness(busAddress: bus.address, maxVisible: total)
            let ended = Mutex<[String: Int]>([:])
            let allEnded = AsyncStream<Void>.makeStream()
            harness.center.onEvent = { event in
                guard case .ended(let id, _) = event else { return }
                let count = ended.withLock { state -> Int in
                    state[id, default: 0] += 1
                    return state.count
                }
                if count == total { allEnded.continuation.yield() }
            }
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        for index in stride(from: worker, to: total, by: 16) {
                            harness.center.present(
                                ToastMessage(id: "n\(index)", title: "N \(index)", duration: .indefinite))
                        }
                    }
                }
            }
            // Every toast reached the server before it is dismissed, so every Notify has its CloseNotification.
            var notified = 0
            for await event in server.events {
                if case .notify = event { notified += 1 }
                if notified == total { break }
            }
            harness.center.dismissAll()
            for await _ in allEnded.stream { break }
            let counts = ended.withLock { $0 }
            #expect(counts.count == total)
            #expect(counts.values.allSatisfy { $0 == 1 })
            #expect(Set(server.notifications.map(\.id)).count == total)
        }

        @Test func hostileInputIsRefusedOrReducedAndSaidSo() async throws {
            let bus = try await PrivateBus.start()
            defer { bus.stop() }
            let server = try await FakeNotificationServer.start(on: bus)
            defer { server.stop() }
            let harness = DesktopHarness(busAddress: bus.address, maxVisible: 10)

            harness.center.present(ToastMessage(id: "nul", title: "a\u{0}b"))
            let nul = try await harness.outcome(of: "nul")
            #expect(
                nul
                    == .failed(
                        .invalid(ToastValidationError(field: "title", reason: "text must not contain a NUL character")))
            )

            harness.center.present(
                ToastMessage(id: "image", title: "x", icon: .image(width: 4, height: 4, rgba: [0, 1, 2])))
            let image = try #require(failure(try await harness.outcome(of: "image")))
            #expect(image.contains("needs 64 bytes, got 3"), "\(image)")

            let huge = String(repeating: "ñ", count: 4 * 1024 * 1024)  // 8 MiB of UTF-8
            harness.center.present(ToastMessage(id: "huge", title: "Enorme", message: huge, duration: .indefinite))
            let notification = try await server.nextNotification()
            #expect(notification.body.utf8.count <= 64 * 1024)
            #expect(notification.body.hasSuffix("…"))
            let degraded = try await harness.next { if case .degraded("huge", _) = $0 { true } else { false } }
            #expect(
                degraded
                    == .degraded(id: "huge", reason: "message cut from 8388608 to 65535 bytes (the limit is 65536)"))

            let deep = String(repeating: "<b>", count: 20_000) + "x" + String(repeating: "</b>", count: 20_000)
            harness.center.present(ToastMessage(id: "deep", title: "Profundo", message: deep, duration: .indefinite))
            let escaped = try await server.nextNotification()
            #expect(escaped.body.hasPrefix("&lt;b&gt;&lt;b&gt;"))
            #expect(harness.events.filter { $0.toastID == "deep" && $0.isTerminal }.isEmpty)
        }

        @Test func twoHundredActionsFromACustomStyleReachTheServer() async throws {
            struct ManyActions: ToastStyle {
                func makeRequest(for toast: PresentedToast) -> ToastRequest {
                    var request = PlainToastStyle().makeRequest(for: toast)
                    request.actions = (0..<200).map { ToastRequest.Action(key: "a\($0)", label: "Acción \($0)") }
                    request.hints["x-many"] = .bool(true)
                    return request
                }
            }
            let bus = try await PrivateBus.start()
            defer { bus.stop() }
            let server = try await FakeNotificationServer.start(on: bus)
            defer { server.stop() }
            let harness = DesktopHarness(busAddress: bus.address)
            harness.center.toastStyle(ManyActions())
            harness.center.present(ToastMessage(id: "many", title: "Muchas"))
            let notification = try await server.nextNotification()
            #expect(notification.actions.count == 200)
            #expect(notification.actions.last?.label == "Acción 199")
            #expect(notification.hints["x-many"] == .boolean(true))
            // Keys the center never offered are not actions of the toast: ignored, and the toast lives on.
            try server.emitActionInvoked(id: notification.id, key: "a150")
            try server.emitClosed(id: notification.id, reason: 2)
            #expect(try await harness.outcome(of: "many") == .dismissed)
        }
    }
}
