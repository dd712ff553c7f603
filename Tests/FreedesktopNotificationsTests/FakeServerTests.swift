import DBus
import Foundation
import FreedesktopNotifications
import TestSupport
import Testing
import ToastKitTesting
import ToastModel

/// What dunst cannot do on demand, with a server written on our own D-Bus layer.
@Suite(.timeLimit(.minutes(1))) struct FakeServerTests {
    @Test func activationTokenComesBeforeTheActionAndReachesTheHandler() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let harness = DesktopHarness(busAddress: bus.address)
        let log = CallLog()
        let open = ToastAction.withContext(id: "open", title: "Abrir") { context in
            log.append("handler token=\(context.activationToken ?? "nil")")
        }
        harness.center.present(ToastMessage(id: "mail", title: "Mensaje de Ana", tapAction: open))
        let notification = try await server.nextNotification()
        #expect(notification.actionList == ["default", "Abrir"])

        try server.emitActivationToken(id: notification.id, token: "xdg-token-42")
        try server.emitActionInvoked(id: notification.id, key: "default")
        let event = try await harness.next { if case .actionInvoked = $0 { true } else { false } }
        #expect(event == .actionInvoked(id: "mail", actionID: "open", activationToken: "xdg-token-42"))
        #expect(try await harness.outcome(of: "mail") == .actionInvoked(actionID: "open"))
        #expect(log.all == ["handler token=xdg-token-42"])
    }

    /// GNOME Shell keeps Do Not Disturb in GSettings; with dconf, a change comes as dconf's `Notify` signal. The
    /// presenter reads the key again on a `Notify` for its folder and tells the center, which holds the next toast;
    /// a `Notify` for another folder is nothing. (The key is in a keyfile here, which itself tells nobody: only the
    /// signal can make the presenter read it again while it is off.)
    @Test func aDconfChangeToGNOMEsBannersIsReadAgain() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus, options: .init(name: "gnome-shell"))
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-dconf-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let settings = [
            "PATH": "/usr/bin:/bin", "HOME": folder, "XDG_CONFIG_HOME": "\(folder)/config",
            "GSETTINGS_BACKEND": "keyfile",
        ]
        func banners(_ value: String) throws {
            let result = try Tools.run(
                "gsettings", ["set", "org.gnome.desktop.notifications", "show-banners", value], environment: settings)
            #expect(result.status == 0, "gsettings: \(result.error)")
        }
        let harness = DesktopHarness(busAddress: bus.address) { $0.settingsEnvironment = settings }
        harness.center.present(ToastMessage(id: "a", title: "Primero"))
        _ = try await server.nextNotification()

        let dconf = try await DBusConnection.connect(to: .address(bus.address))
        defer { dconf.close() }
        #expect(try await dconf.bus.requestName("ca.desrt.dconf", flags: .doNotQueue) == .primaryOwner)
        func notify(_ prefix: String) throws {
            try dconf.emitSignal(
                path: "/ca/desrt/dconf/Writer/user", interface: "ca.desrt.dconf.Writer", member: "Notify",
                arguments: [.string(prefix), .strings([""]), .string("tag")])
        }
        try banners("false")
        try notify("/org/gnome/desktop/interface/")
        try notify("/org/gnome/desktop/notifications/show-banners")
        let changed = try await harness.next("the center's Do Not Disturb event") {
            if case .doNotDisturbChanged = $0 { true } else { false }
        }
        guard case .doNotDisturbChanged(let state) = changed else { return }
        #expect(state.isOn)
        #expect(state.source == "GNOME Shell: gsettings org.gnome.desktop.notifications show-banners = false")
        harness.center.present(ToastMessage(id: "b", title: "Segundo"))
        let held = try await harness.next("b's suppressed event") {
            if case .suppressed(id: "b", _) = $0 { true } else { false }
        }
        if case .suppressed(_, let suppression) = held { #expect(suppression.kind == .held) }
    }

    /// A server with a reply field of its own (`inline-reply`, as Plasma): the reply action is sent under that key,
    /// and `NotificationReplied` brings the text to the handler; the same signal for a notification sent without a
    /// field, or from another connection, is nothing.
    @Test func theServersReplyFieldBringsTheTextToTheHandler() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(
            on: bus, options: .init(capabilities: ["actions", "body", "inline-reply"], name: "plasma-like"))
        defer { server.stop() }
        let harness = DesktopHarness(busAddress: bus.address, maxVisible: 2)
        let log = CallLog()
        let answer = ToastAction.reply(title: "Responder", placeholder: "Escribe…") { context in
            log.append("reply \(context.reply ?? "nil")")
        }
        harness.center.present(ToastMessage(id: "plain", title: "Sin respuesta"))
        let plain = try await server.nextNotification()
        harness.center.present(
            ToastMessage(
                id: "ana", title: "Ana", message: "¿Comemos?", swipeActions: ToastSwipeActions(leading: answer)))
        let notification = try await server.nextNotification()
        #expect(notification.actions.map(\.key) == ["inline-reply"])
        #expect(notification.arguments.hints["x-kde-reply-placeholder-text"] == .string("Escribe…"))

        try server.emitReplied(id: plain.id, text: "¿a quién?")
        try server.emitReplied(id: notification.id, text: "Voy")
        #expect(try await harness.outcome(of: "ana") == .actionInvoked(actionID: "reply"))
        #expect(log.all == ["reply Voy"])
        #expect(harness.center.entryState(of: "plain") != nil, "a reply to a toast without a field is nothing")
    }

    /// A server without a field: the reply action is a button, and choosing it runs the prompt program; its text
    /// reaches the handler.
    @Test func withoutAFieldThePromptProgramAsksForTheText() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let harness = DesktopHarness(busAddress: bus.address) { configuration in
            configuration.replyPrompter = .command([
                "/bin/sh", "-c", #"printf '%s|%s|%s\n' "Voy" "$TOASTKIT_REPLY_TITLE" "$TOASTKIT_REPLY_PLACEHOLDER""#,
            ])
        }
        let log = CallLog()
        let answer = ToastAction.reply(title: "Responder", placeholder: "Escribe…") { context in
            log.append("reply \(context.reply ?? "nil")")
        }
        harness.center.present(ToastMessage(id: "ana", title: "Ana", swipeActions: ToastSwipeActions(leading: answer)))
        let notification = try await server.nextNotification()
        #expect(notification.actions.map(\.key) == ["reply"])
        try server.emitActionInvoked(id: notification.id, key: "reply")
        #expect(try await harness.outcome(of: "ana") == .actionInvoked(actionID: "reply"))
        #expect(log.all == ["reply Voy|Ana|Escribe…"])
    }

    @Test func aServerWithoutActionsBodyOrMarkupGetsLessAndItIsReported() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(
            on: bus, options: .init(capabilities: ["icon-static"], name: "minimal"))
        defer { server.stop() }
        let harness = DesktopHarness(busAddress: bus.address)
        harness.center.present(
            ToastMessage(
                id: "ana", title: "Mensaje de Ana", message: "<b>¿Comemos?</b>",
                tapAction: ToastAction(title: "Abrir"),
                swipeActions: ToastSwipeActions(leading: ToastAction(id: "archive", title: "Archivar"))))
        let notification = try await server.nextNotification()
        #expect(notification.actions.isEmpty)
        #expect(notification.summary == "Mensaje de Ana: <b>¿Comemos?</b>")
        #expect(notification.body == "")
        let first = try await harness.next { if case .degraded = $0 { true } else { false } }
        let second = try await harness.next { if case .degraded = $0 { true } else { false } }
        #expect(
            Set([first, second]) == [
                .degraded(
                    id: "ana", reason: "the server shows no message body: the message was folded into the title"),
                .degraded(id: "ana", reason: "the server does not support actions: 2 dropped (default, archive)"),
            ])
    }

    @Test func flushReturnsOnceTheServerHasAnsweredEveryToast() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus, options: .init(notifyDelay: .milliseconds(300)))
        defer { server.stop() }
        let harness = DesktopHarness(busAddress: bus.address)
        harness.center.present(ToastMessage(id: "a", title: "Uno", duration: .indefinite))
        harness.center.present(ToastMessage(id: "b", title: "Dos", duration: .indefinite))
        harness.center.present(ToastMessage(id: "a", title: "Uno, otra vez", duration: .indefinite))
        await harness.center.flush()
        // Every answer is in: the server ids are known without waiting any further.
        #expect(harness.presenter.serverID(ofToast: "a") != nil)
        #expect(server.notifications.last { $0.summary.hasPrefix("Uno") }?.summary == "Uno, otra vez")
    }

    /// `flush()` returns once the failure has been delivered as an event. Read through `onEvent`, which the center
    /// calls as it delivers: the harness's log takes events from a stream, on a task of its own that may not have run
    /// yet when `flush()` returns (read there, this failed once in a loaded fresh-clone run).
    @Test func flushReturnsWhenThereIsNoServerAndTheFailureIsReported() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let harness = DesktopHarness(busAddress: bus.address)
        let failures = CallLog()
        harness.center.onEvent = { event in
            if case .presenterFailed(let id, _) = event { failures.append(id ?? "none") }
        }
        harness.center.present(ToastMessage(id: "a", title: "Nadie escucha"))
        await harness.center.flush()
        #expect(failures.all == ["a"])
    }

    @Test func markupCharactersArriveEscaped() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let harness = DesktopHarness(busAddress: bus.address)
        harness.center.present(.warning, title: "1 < 2 & 3 > 2", message: "<i>x</i> & y")
        let notification = try await server.nextNotification()
        #expect(notification.body == "&lt;i&gt;x&lt;/i&gt; &amp; y")
        #expect(notification.summary == "1 < 2 & 3 > 2")
        #expect(notification.hints["urgency"] == .byte(1))
        #expect(notification.hints["image-path"] == .string("dialog-warning"))
        _ = harness
    }

    @Test func aForgedActionFromAnotherConnectionIsIgnored() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus, options: .init(unicastSignals: false))
        defer { server.stop() }
        let forger = try await bus.connect()
        defer { forger.close() }
        let harness = DesktopHarness(busAddress: bus.address)
        let log = CallLog()
        harness.center.present(
            ToastMessage(
                id: "pay", title: "¿Pagar 500 €?", duration: .indefinite,
                tapAction: ToastAction(id: "confirm", title: "Pagar") { _ in log.append("paid") }))
        let notification = try await server.nextNotification()

        // A look-alike signal from another connection, broadcast and unicast, for the live id.
        try server.emitActionInvoked(id: notification.id, key: "default", from: forger)
        let presenterName = notification.sender
        try forger.emitSignal(
            path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications",
            member: "ActionInvoked", arguments: [.uint32(notification.id), .string("default")],
            destination: BusName(validating: presenterName))
        try server.emitClosed(id: notification.id, reason: 2, from: forger)
        // Signals for ids this presenter never made, from the real server.
        try server.emitActionInvoked(id: notification.id + 100, key: "default")
        // Then the real one: it must be the first action the center sees.
        try server.emitClosed(id: notification.id, reason: 1)
        #expect(try await harness.outcome(of: "pay") == .expired)
        #expect(log.all.isEmpty)
        #expect(!harness.events.contains { if case .actionInvoked = $0 { true } else { false } })
    }

    @Test func closeReasonsFromTheServer() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let harness = DesktopHarness(busAddress: bus.address)
        harness.center.present(ToastMessage(id: "a", title: "A"))
        try server.emitClosed(id: try await server.nextNotification().id, reason: 2)
        #expect(try await harness.outcome(of: "a") == .dismissed)
        harness.center.present(ToastMessage(id: "b", title: "B"))
        try server.emitClosed(id: try await server.nextNotification().id, reason: 1)
        #expect(try await harness.outcome(of: "b") == .expired)
        harness.center.present(ToastMessage(id: "c", title: "C"))
        try server.emitClosed(id: try await server.nextNotification().id, reason: 77)
        #expect(try await harness.outcome(of: "c") == .dismissed)
    }

    @Test func expiryClosesOnTheServerAndIsReportedOnce() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let clock = ManualClock()
        let harness = DesktopHarness(busAddress: bus.address, clock: clock)
        harness.center.present(ToastMessage(id: "copied", title: "Copiado", duration: 2))
        let notification = try await server.nextNotification()
        #expect(notification.expireTimeout == 2000, "the safety net carries the duration")
        try await clock.sleepers(count: 1)
        clock.advance(by: .seconds(2))
        #expect(try await harness.outcome(of: "copied") == .expired)
        for await event in server.events {
            if case .close(let id) = event {
                #expect(id == notification.id)
                break
            }
        }
        #expect(harness.events.filter(\.isTerminal).count == 1)
    }

    @Test func withNoServerTheToastWaitsAndAppearsWhenOneStarts() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let harness = DesktopHarness(busAddress: bus.address)
        harness.center.present(ToastMessage(id: "late", title: "Sin servidor", duration: .indefinite))
        let failure = try await harness.next { if case .presenterFailed = $0 { true } else { false } }
        #expect(
            failure
                == .presenterFailed(
                    id: "late", reason: "no notification server is running (org.freedesktop.Notifications has no owner)"
                ))

        let server = try await FakeNotificationServer.start(on: bus)
        defer { server.stop() }
        let notification = try await server.nextNotification()
        #expect(notification.summary == "Sin servidor")
        #expect(harness.events.filter(\.isTerminal).isEmpty)
    }

    @Test func aRestartedServerGetsTheLiveToastsWithTheirRemainingTime() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let first = try await FakeNotificationServer.start(on: bus)
        let clock = ManualClock()
        let harness = DesktopHarness(busAddress: bus.address, clock: clock)
        harness.center.present(ToastMessage(id: "sync", title: "Sincronizando…", duration: 10))
        #expect(try await first.nextNotification().expireTimeout == 10_000)
        try await clock.sleepers(count: 1)
        clock.advance(by: .seconds(3))

        first.stop()
        let gone = try await harness.next { if case .presenterFailed("sync", _) = $0 { true } else { false } }
        #expect(
            gone
                == .presenterFailed(
                    id: "sync", reason: "the notification server left the bus; toasts come back when a server starts"))
        let second = try await FakeNotificationServer.start(on: bus, options: .init(firstID: 50))
        defer { second.stop() }
        let again = try await second.nextNotification()
        #expect(again.summary == "Sincronizando…")
        #expect(again.replacesID == 0)
        #expect(again.expireTimeout == 7000)
        #expect(harness.events.filter(\.isTerminal).isEmpty)
    }

    @Test func appCodeNeverRunsOnTheConnectionsThread() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let server = try await FakeNotificationServer.start(on: bus, options: .init(capabilities: ["icon-static"]))
        defer { server.stop() }
        let harness = DesktopHarness(busAddress: bus.address)
        let threads = CallLog()
        harness.center.onEvent = { event in
            if case .degraded("b", _) = event { threads.append("event on \(currentThreadName())") }
        }
        // The first toast opens the connection; the second one's queue then runs on the connection's thread.
        harness.center.present(ToastMessage(id: "a", title: "A", duration: .indefinite))
        _ = try await server.nextNotification()
        harness.center.dismiss(id: "a")
        harness.center.present(
            ToastMessage(id: "b", title: "B", message: "with a body the server cannot show", duration: .indefinite))
        _ = try await server.nextNotification()
        _ = try await harness.next { if case .degraded("b", _) = $0 { true } else { false } }
        #expect(threads.all.count == 1)
        #expect(threads.all.allSatisfy { !$0.hasSuffix("dbus-io") }, "\(threads.all)")
    }
}

private func currentThreadName() -> String {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
}
