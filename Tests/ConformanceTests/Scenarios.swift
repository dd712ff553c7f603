import DBus
import Foundation
import FreedesktopNotifications
import TestSupport
import Testing
import ToastModel

/// The scenarios of the matrix. Each runs on a fresh desktop and records into its ``ScenarioRecord``.
extension OneAtATime.ConformanceTests {
    // MARK: - Content

    /// Notify reaches the server with summary, body, app name, urgency and icon; the server assigns an id; the
    /// popup appears (with the title, where the server tells what it shows).
    func present(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let capabilities = try await desktop.toasts.presenter.serverCapabilities()
        ConformanceResults.shared.record(desktop.server, capabilities: capabilities)

        desktop.toasts.center.present(
            ToastMessage(id: "present", status: .warning, title: "Poco espacio", message: "Libera espacio ahora."))
        let notify = try await desktop.bus.nextNotify()
        let arguments = notify.arguments
        record.equal(arguments.appName, "toastkit-conformance", "app_name")
        record.equal(arguments.replacesID, 0, "replaces_id")
        record.equal(arguments.summary, "Poco espacio", "summary")
        record.equal(arguments.body, "Libera espacio ahora.", "body")
        record.equal(arguments.hints["urgency"], .byte(1), "urgency hint")
        record.equal(arguments.hints["image-path"], .string("dialog-warning"), "image-path hint (the status icon)")
        record.equal(arguments.appIcon, "dialog-warning", "app_icon")
        // 30 s on the wire, or what the server needs to close no earlier (lxqt-notificationd: 5 % more).
        let wire = try await desktop.toasts.presenter.serverCapabilities().wireTimeout(for: .seconds(30))
        record.equal(arguments.expireTimeout, wire, "expire_timeout")
        record.check(notify.id > 0, "the server assigned no id")
        record.equal(try await desktop.toasts.presenter.accepted("present"), notify.id, "presenter's accepted id")
        record.equal(desktop.toasts.presenter.serverID(ofToast: "present"), notify.id, "serverID(ofToast:)")
        _ = try await desktop.toasts.events.next("shown event") { $0 == .shown(id: "present") }
        try await expectShown(title: "Poco espacio", on: desktop, record, "after Notify")
    }

    /// Presenting the same ToastMessage id again sends replaces_id = the first id; the server keeps the id and one
    /// popup stays, showing the new text.
    func replace(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let center = desktop.toasts.center
        center.present(ToastMessage(id: "sync", title: "Sincronizando…", duration: .indefinite))
        let first = try await desktop.bus.nextNotify()
        record.equal(first.arguments.replacesID, 0, "first replaces_id")
        try await expectShown(title: "Sincronizando…", on: desktop, record, "after the first Notify")

        center.present(ToastMessage(id: "sync", status: .success, title: "Sincronizado", message: "Todo al día."))
        let second = try await desktop.bus.nextNotify()
        record.equal(second.arguments.replacesID, first.id, "second replaces_id")
        record.equal(second.id, first.id, "the id the server answered the replacement with")
        record.equal(second.arguments.summary, "Sincronizado", "second summary")
        record.equal(second.arguments.hints["image-path"], .string("emblem-default"), "second image-path")
        record.equal(try await desktop.toasts.outcome(of: "sync").outcome, .replaced, "first presentation's outcome")
        record.equal(desktop.toasts.presenter.serverID(ofToast: "sync"), first.id, "serverID(ofToast:)")
        try await expectShown(title: "Sincronizado", on: desktop, record, "after the replacement")
        let closed = desktop.bus.log.all.contains { $0.value.isClosed(first.id) }
        record.check(!closed, "the server closed the replaced notification instead of updating it")
        _ = try await desktop.screenshot(named: "\(desktop.server.name)-replaced")
    }

    /// "a < b & c" is sent escaped to a server with body-markup and shown literally; screenshot in
    /// `.build/conformance/<server>-markup.png`. GNOME Shell tells the text it draws, dunst keeps it in its history.
    func markup(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let capabilities = try await desktop.toasts.presenter.serverCapabilities()
        desktop.toasts.center.present(ToastMessage(id: "markup", title: "Markup", message: "a < b & c"))
        let notify = try await desktop.bus.nextNotify()
        if capabilities.has("body-markup") {
            record.equal(notify.arguments.body, "a &lt; b &amp; c", "body for a server with body-markup")
        } else {
            record.equal(notify.arguments.body, "a < b & c", "body for a server without body-markup")
            record.quirk("no body-markup: the body is sent as plain text")
        }
        guard let popups = try await expectShown(title: "Markup", on: desktop, record, "with the markup toast") else {
            return
        }
        let path = try await desktop.screenshot(named: "\(desktop.server.name)-markup")
        expectPNG(at: path, record)
        if desktop.kind == .gnomeShell {
            record.equal(popups.first?.body, "a < b & c", "the text GNOME Shell's banner shows")
        }
        if desktop.kind == .dunst {
            // dunst keeps what it drew (its pango markup) in its history once the notification is closed.
            desktop.toasts.center.dismiss(id: "markup")
            _ = try await desktop.bus.nextClosed(of: notify.id)
            let entry = try await desktop.dunstHistory(of: notify.id)
            let drawn = entry?["message"] as? String ?? ""
            record.check(drawn.contains("a &lt; b &amp; c"), "dunst drew \(drawn.debugDescription)")
            record.equal(Self.plainText(ofPango: drawn).contains("a < b & c"), true, "text dunst shows")
        }
    }

    /// The five statuses one after the other on the same toast id (replaced in place), then an SF Symbol icon: each
    /// `Notify` carries the status's icon (`image-path` and `app_icon`) and urgency; one popup all along; a
    /// screenshot of each (`.build/conformance/<server>-status-<status>.png`, `<server>-icon.png`).
    func statuses(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let steps: [(ToastStatus, String, String, String, UInt8)] = [
            (.normal, "Cambios guardados", "Tu documento está a salvo.", "dialog-information", 1),
            (.success, "Sincronizado", "Todo al día.", "emblem-default", 1),
            (.warning, "Poco espacio", "Libera espacio para continuar.", "dialog-warning", 1),
            (.error, "Error al sincronizar", "Sin conexión con el servidor.", "dialog-error", 2),
            (.notification, "Fotos nuevas", "12 fotos de hoy", "preferences-system-notifications", 1),
        ]
        var serverID: UInt32?
        var missingIcons: [String] = []
        for (status, title, message, icon, urgency) in steps {
            desktop.toasts.center.present(
                ToastMessage(id: "status", status: status, title: title, message: message, duration: .indefinite))
            let notify = try await desktop.bus.nextNotify()
            record.equal(notify.arguments.hints["image-path"], .string(icon), "\(status) image-path")
            record.equal(notify.arguments.appIcon, icon, "\(status) app_icon")
            record.equal(notify.arguments.hints["urgency"], .byte(urgency), "\(status) urgency")
            record.equal(notify.arguments.replacesID, serverID ?? 0, "\(status) replaces_id")
            if let serverID { record.equal(notify.id, serverID, "\(status) keeps the server id") }
            serverID = notify.id
            guard let popups = try await expectShown(title: title, on: desktop, record, "with the \(status) toast")
            else { return }
            expectPNG(at: try await desktop.screenshot(named: "\(desktop.server.name)-status-\(status)"), record)
            // Where the layout is known, look whether an icon was drawn (a plain area has one or two colours).
            if popups.last?.title == nil,
                let region = desktop.environment.iconRegion(of: try await desktop.environment.newestPopup()),
                try await desktop.environment.colours(in: region) <= 4
            {
                missingIcons.append("`\(icon)` (.\(status))")
            }
        }
        if !missingIcons.isEmpty {
            switch desktop.kind {
            case .plasma:
                record.quirk(
                    "draws no icon for \(missingIcons.joined(separator: ", ")): its Breeze theme lacks that standard "
                        + "name (it has only `emblem-default-symbolic`)")
            case .lxqtNotificationd where desktop.environment.modern != nil:
                record.quirk(
                    "draws no icon for \(missingIcons.joined(separator: ", ")): in the Debian 13 chroot it runs without "
                        + "LXQt's platform theme (lxqt-qtplugin is not in the chroot), so Qt finds no icon theme")
            case .lxqtNotificationd:
                record.quirk(
                    "draws no icon for \(missingIcons.joined(separator: ", ")): lxqt-notificationd 1.2 reads a theme "
                        + "icon only from app_icon, and shows none when the image-path hint (which ToastKit sets to the "
                        + "same name) is there")
            default:
                record.quirk("draws no icon for \(missingIcons.joined(separator: ", "))")
            }
        }

        desktop.toasts.center.present(
            ToastMessage(
                id: "status", title: "Icono", message: "exclamationmark.triangle",
                icon: .system("exclamationmark.triangle"), duration: .indefinite))
        let notify = try await desktop.bus.nextNotify()
        record.equal(notify.arguments.hints["image-path"], .string("dialog-warning"), "icon image-path")
        record.equal(notify.arguments.appIcon, "dialog-warning", "icon app_icon")
        guard try await expectShown(title: "Icono", on: desktop, record, "with the icon toast") != nil else { return }
        expectPNG(at: try await desktop.screenshot(named: "\(desktop.server.name)-icon"), record)
        if desktop.kind == .dunst {
            desktop.toasts.center.dismiss(id: "status")
            _ = try await desktop.bus.nextClosed(of: notify.id)
            let iconPath = try await desktop.dunstHistory(of: notify.id)?["icon_path"] as? String ?? ""
            record.check(iconPath.hasSuffix("/dialog-warning.png"), "dunst drew icon \(iconPath.debugDescription)")
        }
    }

    /// What the server can do is read once (and matches what it answers); a toast that uses everything the mapping
    /// can degrade — actions with icons, a body, opt-in markup with bold and a link — goes out in the richest form
    /// the server takes, and whatever is left out is reported as `degraded`, never dropped silently.
    func capabilities(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let connection = try await desktop.environment.bus.connect()
        defer { connection.close() }
        let answered = Set(try await NotificationsClient(connection: connection, timeout: .seconds(5)).capabilities())
        let toasts = ToastHarness(busAddress: desktop.environment.bus.address, markup: .basic)
        defer { toasts.stop() }
        let read = try await toasts.presenter.serverCapabilities()
        record.equal(read.capabilities, answered, "the capabilities ToastKit read")

        toasts.center.present(
            ToastMessage(
                id: "caps", title: "Capacidades",
                message: #"<b>Negrita</b> y <a href="https://example.org/">enlace</a>"#,
                tapAction: ToastAction(id: "open", title: "Abrir") { _ in },
                swipeActions: ToastSwipeActions(
                    leading: ToastAction(id: "archive", title: "Archivar", icon: .system("archivebox")) { _ in },
                    trailing: ToastAction(id: "delete", title: "Borrar", icon: .system("trash")) { _ in })))
        let notify = try await desktop.bus.nextNotify()
        let arguments = notify.arguments
        var expectedDegradations = 0
        if read.has("actions") {
            if read.has("action-icons") {
                record.equal(
                    arguments.actionList, ["default", "Abrir", "mail-archive", "Archivar", "user-trash", "Borrar"],
                    "actions (icon names as keys, for action-icons)")
                record.equal(arguments.hints["action-icons"], .boolean(true), "action-icons hint")
            } else {
                record.equal(
                    arguments.actionList, ["default", "Abrir", "archive", "Archivar", "delete", "Borrar"],
                    "actions (labelled buttons: no action-icons)")
                record.equal(arguments.hints["action-icons"], nil, "action-icons hint")
            }
        } else {
            record.equal(arguments.actionList, [], "actions for a server without actions")
            expectedDegradations += 1
        }
        if read.has("body-markup"), read.has("body-hyperlinks") {
            record.equal(
                arguments.body, #"<b>Negrita</b> y <a href="https://example.org/">enlace</a>"#, "body (kept markup)")
        } else if read.has("body-markup") {
            // A server without body-hyperlinks draws `<a>` as text: the link's text stays, the tag goes.
            record.equal(arguments.body, "<b>Negrita</b> y enlace", "body (kept markup, the link as text)")
            expectedDegradations += 1
        } else {
            record.equal(arguments.body, "Negrita y enlace", "body (markup stripped)")
            expectedDegradations += 1
        }
        _ = try await expectShown(title: "Capacidades", on: desktop, record, "with the capabilities toast")
        _ = try await desktop.screenshot(named: "\(desktop.server.name)-capabilities")
        let degraded = toasts.events.all.filter {
            if case .degraded("caps", _) = $0.value { true } else { false }
        }
        record.equal(degraded.count, expectedDegradations, "degraded events (\(degraded.map(\.value)))")

    }

    // MARK: - Actions

    /// The person taps the toast (the default action): the tap action's handler runs and the toast ends with its id.
    func tap(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        try await invoke("default", expecting: "open", on: desktop, record)
    }

    /// The person presses the "Archivar" button (the leading swipe action): its own handler runs.
    func button(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        try await invoke("archive", expecting: "archive", on: desktop, record)
    }

    /// A toast first shown without actions is updated in place with its tap and button; the click then runs the
    /// tap action's handler. (GNOME Shell keeps the click handler of a notification's first Notify: ToastKit puts
    /// `default` on every Notify to it, so the tap an update adds still arrives.)
    func tapAddedByUpdate(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        try await invoke("default", expecting: "open", on: desktop, record, afterUpdate: true)
    }

    private func invoke(
        _ key: String, expecting actionID: String, on desktop: Desktop, _ record: ScenarioRecord,
        afterUpdate: Bool = false
    ) async throws {
        let toastID = afterUpdate ? "late-tap" : key == "default" ? "tap" : "button"
        let log = CallLog()
        var first: NotifySeen?
        if afterUpdate {
            desktop.toasts.center.present(ToastMessage(id: toastID, title: "Subiendo…", duration: .indefinite))
            let plain = try await desktop.bus.nextNotify()
            if desktop.kind == .gnomeShell {
                record.equal(plain.arguments.actionList, ["default", ""], "the first Notify's click handler")
                record.quirk(
                    "keeps the first Notify's click handler (issue 18): ToastKit sends `default` on every Notify to it")
            }
            guard try await expectPopups(1, on: desktop, record, "before the update") != nil else { return }
            first = plain
        }
        desktop.toasts.center.present(Self.anaToast(id: toastID, log: log))
        let notify = try await desktop.bus.nextNotify()
        if let first {
            record.equal(notify.arguments.replacesID, first.id, "the update's replaces_id")
            record.equal(notify.id, first.id, "updated in place")
            record.equal(
                try await desktop.toasts.outcome(of: toastID).outcome, .replaced, "the first presentation's outcome")
        }
        record.equal(notify.arguments.actionList, ["default", "Abrir", "archive", "Archivar"], "actions")
        guard try await expectPopups(1, on: desktop, record, "before the action") != nil else { return }

        try await desktop.invokeAction(key, notify.id, record)

        record.equal(try await desktop.bus.nextActionInvoked(of: notify.id), key, "ActionInvoked key")
        let event = try await desktop.toasts.actionEvent(of: toastID)
        record.equal(event.actionID, actionID, "the action event's action")
        var expectedLog = "\(actionID) \(toastID)"
        if desktop.kind == .plasma || desktop.server == .modern(.swaync011) {
            // Plasma (P12, P20) and swaync 0.11 send ActivationToken before ActionInvoked; the handler gets it.
            let token = try await desktop.bus.nextActivationToken(of: notify.id)
            record.equal(event.token, token, "the activation token handed to the handler")
            expectedLog += " with a token"
            record.quirk("sends ActivationToken first; the handler gets it")
        } else {
            record.equal(event.token, nil, "activation token (this server sends none)")
        }
        record.equal(
            try await desktop.toasts.outcome(of: toastID).outcome, .actionInvoked(actionID: actionID), "outcome")
        record.equal(log.all, [expectedLog], "handlers that ran")
        try await expectClosedAfterAction(notify, on: desktop, record)
        try await expectOneOutcome(
            of: toastID, serverID: notify.id, on: desktop, record, presentations: afterUpdate ? 2 : 1)
    }

    /// The person closes the popup with the server's own control: the toast ends as dismissed (or as the server's
    /// reason says, recorded as a quirk).
    func dismiss(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let log = CallLog()
        desktop.toasts.center.present(Self.anaToast(id: "dismiss", log: log))
        let notify = try await desktop.bus.nextNotify()
        guard try await expectPopups(1, on: desktop, record, "before the dismissal") != nil else { return }

        let outcome = try await desktop.dismissOnServer(notify, record)
        record.equal(try await desktop.toasts.outcome(of: "dismiss").outcome, outcome, "outcome")
        record.equal(log.all, [], "handlers that ran")
        let invoked = desktop.bus.log.all.contains { $0.value.member == "ActionInvoked" }
        record.check(!invoked, "the server reported an action for a dismissal")
        try await expectPopups(0, on: desktop, record, "after the dismissal")
        try await expectOneOutcome(of: "dismiss", serverID: notify.id, on: desktop, record)
    }

    // MARK: - Lifecycle

    /// `center.dismiss(id:)`: ToastKit sends CloseNotification with the server id from the connection that sent
    /// Notify, the popup goes, the toast ends once as closedByApp — whatever the server sends back (GNOME: twice;
    /// swaync: 3 then 2). A barrier toast closed by the server proves no late signal made a second outcome. The toast
    /// has a 3 s duration, so its expire_timeout is the safety net for a server that leaves the popup up after
    /// CloseNotification (notification-daemon).
    func closeByApp(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let toasts = desktop.toasts
        toasts.center.present(ToastMessage(id: "upload", title: "Subiendo…", duration: 3))
        let notify = try await desktop.bus.nextNotify()
        let timeout = notify.arguments.expireTimeout
        let capabilities = try await desktop.toasts.presenter.serverCapabilities()
        let expected = capabilities.wireTimeout(for: .milliseconds(2500))...capabilities.wireTimeout(for: .seconds(3))
        record.check(expected.contains(timeout), "expire_timeout \(timeout), expected \(expected) ms")
        try await expectPopups(1, on: desktop, record, "before the close")

        toasts.center.dismiss(id: "upload")
        record.equal(try await toasts.outcome(of: "upload").outcome, .closedByApp, "outcome")
        let close = try await desktop.bus.nextClose(of: notify.id)
        record.equal(close.value.sender, notify.caller, "CloseNotification sender (the presenter's connection)")
        record.equal(try await desktop.bus.nextClosed(of: notify.id).reason, 3, "NotificationClosed reason")
        if try await desktop.waitForPopups(0, within: .seconds(1)) == nil {
            let deadline = notify.at + .milliseconds(Int(timeout)) + .milliseconds(1500)
            if try await desktop.waitForPopups(0, within: deadline - .now) != nil {
                record.quirk(
                    "the popup stays after CloseNotification (NotificationClosed 3 is sent) until its expire_timeout, "
                        + "which ToastKit always sends for a timed toast")
            } else {
                try await expectPopups(0, on: desktop, record, "after CloseNotification and expire_timeout")
            }
        }
        try await expectOneOutcome(of: "upload", serverID: notify.id, on: desktop, record)
        if desktop.toasts.presentations(of: "barrier") == 0 { try await barrier(desktop, record) }
        record.equal(toasts.terminalEvents(of: "upload"), 1, "terminal events of the closed toast")
    }

    /// A 1 s toast ends as expired within 0.5…2.5 s and leaves the server: the server expires it (reason 1), or
    /// ToastKit's client-side expiry closes it (CloseNotification, reason 3). A raw Notify (no ToastKit, so nobody
    /// closes it) first finds out whether the server expires anything by itself; where it does not, ToastKit's
    /// CloseNotification is required.
    func expiry(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let probe = try await probeServerExpiry(desktop, record)

        let start = ContinuousClock.now
        desktop.toasts.center.present(ToastMessage(id: "copied", title: "Copiado", duration: 1))
        let notify = try await desktop.bus.nextNotify()
        let capabilities = try await desktop.toasts.presenter.serverCapabilities()
        let expected = capabilities.wireTimeout(for: .milliseconds(900))...capabilities.wireTimeout(for: .seconds(1))
        record.check(
            expected.contains(notify.arguments.expireTimeout),
            "expire_timeout \(notify.arguments.expireTimeout), expected \(expected) ms")
        let (outcome, endedAt) = try await desktop.toasts.outcome(of: "copied")
        record.equal(outcome, .expired, "outcome")
        let elapsed = endedAt - start
        // A correctness check with a wide tolerance (two cores shared by several desktops), not a benchmark.
        record.check(
            elapsed >= .milliseconds(500) && elapsed <= .milliseconds(2500), "expired after \(elapsed), not 0.5…2.5 s")
        let closed = try await desktop.bus.nextClosed(of: notify.id)
        let closedByToastKit = desktop.bus.closedByClientFirst(notify.id, caller: notify.caller)
        switch closed.reason {
        case 1:
            record.check(probe.expires, "NotificationClosed reason 1, though the server did not expire the probe")
        case 3:
            record.check(closedByToastKit, "NotificationClosed reason 3 without ToastKit's CloseNotification")
        default:
            record.fail("NotificationClosed reason \(closed.reason), expected 1 (server) or 3 (ToastKit)")
        }
        if !probe.expires {
            record.equal(closed.reason, 3, "NotificationClosed reason (the server never expires: ToastKit closes it)")
            switch desktop.kind {
            case .gnomeShell:
                record.quirk(
                    "ignores expire_timeout: the banner stays while the person is idle (P18); ToastKit's client-side "
                        + "expiry closed it")
            case .swaync:
                record.quirk(
                    "moves an expired popup into its control center without any signal (P22); ToastKit's "
                        + "client-side expiry closed it")
            default:
                record.quirk(
                    probe.popupHidden
                        ? "hides the popup at expire_timeout but never sends NotificationClosed (P9); "
                            + "ToastKit's client-side expiry closed it"
                        : "never expires by itself (P9); ToastKit's client-side expiry closed it")
            }
        }
        try await expectPopups(0, on: desktop, record, "after expiry")
        try await expectOneOutcome(of: "copied", serverID: notify.id, on: desktop, record)
    }

    /// Sends a raw 1 s Notify (no ToastKit, so nobody closes it) and finds out whether the server closes it with
    /// reason 1 within 2.5 s, and, if not, whether its popup is still up; then closes it.
    private func probeServerExpiry(_ desktop: Desktop, _ record: ScenarioRecord) async throws -> (
        expires: Bool, popupHidden: Bool
    ) {
        let connection = try await desktop.environment.bus.connect()
        defer { connection.close() }
        let client = NotificationsClient(connection: connection, timeout: .seconds(5))
        let probe = try await client.notify(
            NotifyCall(appName: "conformance-probe", summary: "Probe", body: "1 s", expireTimeout: 1000))
        // Claim the probe's Notify on the monitor, so the scenario's next Notify is ToastKit's.
        record.equal(try await desktop.bus.nextNotify().id, probe.id, "the probe's id on the monitor")
        do {
            let closed = try await desktop.bus.nextClosed(of: probe.id, within: .milliseconds(2500))
            record.equal(closed.reason, 1, "the probe's NotificationClosed reason")
            return (closed.reason == 1, true)
        } catch is MissedEvent {
            let hidden = try await desktop.visiblePopups().isEmpty
            try await client.closeNotification(id: probe.id)
            let closed = try await desktop.bus.nextClosed(of: probe.id)
            record.equal(closed.reason, 3, "the probe's NotificationClosed reason after CloseNotification")
            // GNOME Shell shows one banner at a time: wait until the probe's has gone before the real toast.
            try await expectPopups(0, on: desktop, record, "after closing the probe")
            return (false, hidden)
        }
    }

    /// Three toasts of one center at once (issue 43, `maxVisible` 3): all three reach the server and stay there;
    /// the newest is in front with the only running time, and the covered ones are closed neither by the server nor by
    /// ToastKit before their turn, so they end newest first, each after its own full 1.5 s.
    func stack(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let toasts = [("uno", "Uno"), ("dos", "Dos"), ("tres", "Tres")]
        for (id, title) in toasts {
            desktop.toasts.center.present(ToastMessage(id: id, title: title, duration: 1.5))
        }
        // Each is shown once; a covered one may be sent again in place (told never to expire).
        var serverIDs: [String: UInt32] = [:]
        while serverIDs.count < 3 {
            let notify = try await desktop.bus.nextNotify()
            if let known = serverIDs[notify.arguments.summary] {
                record.equal(notify.arguments.replacesID, known, "\(notify.arguments.summary) sent again in place")
            } else {
                record.equal(notify.arguments.replacesID, 0, "\(notify.arguments.summary)'s first replaces_id")
                serverIDs[notify.arguments.summary] = notify.id
            }
        }
        if try await desktop.waitForPopups(3, within: .seconds(1)) == nil {
            let visible = try await desktop.visiblePopups()
            record.quirk("shows \(visible.count) of three notifications at once; the others are in its list")
        }
        _ = try await desktop.screenshot(named: "\(desktop.server.name)-stack")
        // The front's turn counts from its own `shown` (the presenter's link is not the toast's time).
        var previous = try await desktop.toasts.events.next("\"tres\" shown") { $0 == .shown(id: "tres") }.at
        for (id, title) in toasts.reversed() {
            let (outcome, endedAt) = try await desktop.toasts.outcome(of: id, within: .seconds(10))
            record.equal(outcome, .expired, "\(id)'s outcome")
            let turn = endedAt - previous
            // A correctness check with a wide tolerance (two cores shared by several desktops), not a benchmark.
            record.check(
                turn >= .milliseconds(1200) && turn <= .milliseconds(4000),
                "\(id) ended \(turn) after the one in front of it, not 1.2…4 s (its own 1.5 s once in front)")
            previous = endedAt
            guard let serverID = serverIDs[title] else { continue }
            let closed = try await desktop.bus.nextClosed(of: serverID)
            record.check(
                closed.at >= endedAt - .milliseconds(300),
                "\(id) was closed on the server (reason \(closed.reason)) \(endedAt - closed.at) before its turn ended")
        }
        try await expectPopups(0, on: desktop, record, "after all three ended")
    }

    /// The server stops (SIGTERM) while a toast is on screen and a new one starts on the same bus: ToastKit reports
    /// that the server left (the toast is kept, not ended), shows it again on the new server with its remaining time
    /// (a new `Notify`, `replaces_id` 0: the old id means nothing to the new server), and the toast still ends once.
    func restart(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let toasts = desktop.toasts
        toasts.center.present(
            ToastMessage(id: "live", title: "Copia en curso", message: "Quedan 3 archivos", duration: 30))
        let first = try await desktop.bus.nextNotify()
        _ = try await toasts.events.next("first shown event") { $0 == .shown(id: "live") }
        try await expectShown(title: "Copia en curso", on: desktop, record, "before the restart")

        try await desktop.environment.restartServer()

        let failed = try await toasts.events.next("presenterFailed (the server left)", within: .seconds(10)) {
            if case .presenterFailed = $0 { true } else { false }
        }
        record.check("\(failed.value)".contains("left the bus"), "what ToastKit reported: \(failed.value)")
        // Either the toast comes back on the new server (a Notify), or it ends: whichever comes first.
        let comesBack = await withTaskGroup(of: Result<NotifySeen, any Error>?.self) { group in
            group.addTask {
                do { return .success(try await desktop.bus.nextNotify(within: .seconds(15))) } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                guard
                    let ended = try? await toasts.events.next(
                        "end of \"live\"", within: .seconds(15), where: { $0.isEnd(of: "live") })
                else { return nil }
                return .failure(MissedEvent(description: "\(ended.value)"))
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let next { return next }
            }
            return .failure(MissedEvent(description: "neither a Notify nor the toast's end within 15 s"))
        }
        let again: NotifySeen
        switch comesBack {
        case .success(let notify):
            again = notify
        case .failure(let error):
            // (GNOME's proxy answering UnknownMethod before it exports its object was a ToastKit defect once: the
            // presenter now asks again; see ServerLink.readCapabilities.)
            record.fail("the toast did not come back on the new server: \(error)")
            return
        }
        record.equal(again.arguments.summary, "Copia en curso", "the summary shown again")
        record.equal(again.arguments.replacesID, 0, "replaces_id on the new server")
        record.check(
            again.arguments.expireTimeout < first.arguments.expireTimeout && again.arguments.expireTimeout > 15_000,
            "expire_timeout \(again.arguments.expireTimeout) on the new server: the remaining time, below "
                + "\(first.arguments.expireTimeout)")
        record.check(again.server != first.server, "the new Notify went to the new server (\(again.server))")
        _ = try await toasts.events.next("shown again") { $0 == .shown(id: "live") }
        record.equal(toasts.terminalEvents(of: "live"), 0, "terminal events while the server restarted")
        try await expectShown(title: "Copia en curso", on: desktop, record, "after the restart")
        // The bus monitor may see the server's answer before the presenter has read it: await the acceptance.
        record.equal(try await desktop.toasts.presenter.accepted("live"), again.id, "the id accepted after restart")
        record.equal(desktop.toasts.presenter.serverID(ofToast: "live"), again.id, "serverID(ofToast:) after restart")

        toasts.center.dismiss(id: "live")
        record.equal(try await toasts.outcome(of: "live").outcome, .closedByApp, "outcome")
        _ = try await desktop.bus.nextClose(of: again.id)
        record.equal(try await desktop.bus.nextClosed(of: again.id).reason, 3, "NotificationClosed reason")
        if try await desktop.waitForPopups(0) == nil {
            if desktop.kind == .notificationDaemon {
                record.quirk("the popup stays after CloseNotification until its expire_timeout (see close by the app)")
            } else {
                try await expectPopups(0, on: desktop, record, "after the close")
            }
        }
        try await expectOneOutcome(of: "live", serverID: again.id, on: desktop, record)
    }

    // MARK: - Helpers

    /// Waits for one popup and, where the server tells what it shows (GNOME Shell, mako), for it to show `title`.
    @discardableResult
    func expectShown(
        title: String, on desktop: Desktop, _ record: ScenarioRecord, _ when: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [Popup]? {
        let deadline = ContinuousClock.now + NotificationEnvironment.popupLimit
        while true {
            let popups = try await desktop.visiblePopups()
            if popups.count == 1, popups[0].title == nil || popups[0].title == title { return popups }
            if ContinuousClock.now >= deadline {
                record.fail(
                    "\(when): \(popups.count) popups visible \(popups), expected 1 showing \"\(title)\"",
                    sourceLocation: sourceLocation)
                return nil
            }
            try await Task.sleep(for: desktop.environment.pollInterval)
        }
    }
    // MARK: - Progress and Do Not Disturb

    /// A step of a task (60 %), then its end on the same toast: the step is the `value` hint, an int32, where the
    /// server draws a bar (dunst, mako, swaync; xfce4-notifyd only for a toast without a message, whose text its
    /// gauge hides), a view of Plasma's job service on Plasma (its one bar), and a text bar that ends the message
    /// elsewhere; the end is a normal toast in place, with neither (on Plasma: the view ends, and the toast is a
    /// notification). A screenshot of the step: `.build/conformance/<server>-progress.png`.
    func progress(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let capabilities = try await desktop.toasts.presenter.serverCapabilities()
        let center = desktop.toasts.center
        center.present(
            ToastMessage(
                id: "copy", title: "Copiando", message: "fotos.tar", duration: .indefinite, progress: .fraction(0.6)))
        if capabilities.drawsJobViews {
            try await progressInAJobView(desktop, record)
            return
        }
        record.equal(desktop.kind == .plasma, false, "Plasma's job service was found")
        let step = try await desktop.bus.nextNotify()
        if capabilities.drawsProgressValue(withBody: true) {
            record.equal(step.arguments.hints["value"], .int32(60), "value hint (an int32)")
            record.equal(step.arguments.body, "fotos.tar", "the step's message")
        } else {
            record.equal(step.arguments.hints["value"], nil, "value hint (the server draws no bar)")
            record.equal(step.arguments.body, "fotos.tar\n▰▰▰▰▰▰▱▱▱▱ 60 %", "the step's message with a text bar")
            record.quirk("draws no `value` bar under a message: the bar is text at the end of the message")
        }
        try await expectShown(title: "Copiando", on: desktop, record, "with the step")
        let path = try await desktop.screenshot(named: "\(desktop.server.name)-progress")
        expectPNG(at: path, record)

        center.present(ToastMessage(id: "copy", status: .success, title: "Copiado", message: "fotos.tar"))
        let done = try await desktop.bus.nextNotify()
        record.equal(done.arguments.replacesID, step.id, "the end replaces the step")
        record.equal(done.arguments.hints["value"], nil, "value hint at the end")
        record.equal(done.arguments.body, "fotos.tar", "the end's message, without a bar")
        try await expectShown(title: "Copiado", on: desktop, record, "at the end")
    }

    /// The progress scenario on Plasma, whose notifications draw no bar: the step is a job view (title, message,
    /// percent), updated in place; the end ends the view without a word and is a notification of its own.
    private func progressInAJobView(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let (properties, path) = try await desktop.bus.nextJobView()
        let asked = String(describing: properties)
        for expected in ["\"Copiando\"", "\"fotos.tar\"", "uint32(60)"] {
            record.equal(asked.contains(expected), true, "the view is asked with \(expected)")
        }
        record.quirk("draws progress only in a view of its job service (org.kde.JobViewServer): ToastKit uses one")
        try await expectShown(title: "Copiando", on: desktop, record, "with the step")
        let screenshot = try await desktop.screenshot(named: "\(desktop.server.name)-progress")
        expectPNG(at: screenshot, record)

        let center = desktop.toasts.center
        center.present(
            ToastMessage(
                id: "copy", title: "Copiando", message: "fotos.tar", duration: .indefinite, progress: .fraction(0.9)))
        // Updates may merge, and a timer's change may come first: the step's own is awaited.
        _ = try await desktop.bus.nextJobViewCall("update", of: path) {
            String(describing: $0.body).contains("uint32(90)")
        }

        center.present(ToastMessage(id: "copy", status: .success, title: "Copiado", message: "fotos.tar"))
        let end = try await desktop.bus.nextJobViewCall("terminate", of: path)
        record.equal(end.body.first, .uint32(1), "the view ends without a word (ERR_USER_CANCELED)")
        let done = try await desktop.bus.nextNotify()
        record.equal(done.arguments.replacesID, 0, "the end is a notification of its own")
        record.equal(done.arguments.body, "fotos.tar", "the end's message, without a bar")
        try await expectShown(title: "Copiado", on: desktop, record, "at the end")
    }

    /// Do Not Disturb turned on with the server's own control, before the app links: where ToastKit reads it
    /// (dunst's pause, Plasma's `Inhibit`, SwayNotificationCenter's `--dnd-on`, mako's `do-not-disturb` mode; GNOME's
    /// and MATE's GSettings keys and LXQt's settings file) a toast is held in the center — a `suppressed` event, held,
    /// naming the source — nothing reaches the server, and the toast is shown once the server's control turns it off.
    /// Elsewhere the cell says why it is not read. The settings are written where the presenter reads them (GSettings
    /// in a keyfile of the test's own, LXQt's file in a folder of its own); the server itself runs with other settings
    /// and is not in Do Not Disturb.
    func doNotDisturb(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        var plasmaInhibitor: DBusConnection?
        defer { plasmaInhibitor?.close() }
        let off: () async throws -> Void
        var settings = desktop.environment.environment
        settings["GSETTINGS_BACKEND"] = "keyfile"
        settings["XDG_CONFIG_HOME"] = "\(desktop.environment.directory)/do-not-disturb"
        let environment = settings
        func gsettings(_ schema: String, _ key: String, _ value: String) async throws {
            let result = try await onOwnThread {
                try Tools.run("gsettings", ["set", schema, key, value], environment: environment)
            }
            guard result.status == 0 else { throw TestEnvironmentError("gsettings set \(key): \(result.error)") }
        }
        switch desktop.kind {
        case .dunst:
            try await desktop.run("dunstctl", ["set-paused", "true"])
            off = { try await desktop.run("dunstctl", ["set-paused", "false"]) }
        case .plasma:
            let inhibitor = try await desktop.environment.bus.connect()
            plasmaInhibitor = inhibitor
            _ = try await inhibitor.call(
                DBusMethodCall(
                    destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                    interface: "org.freedesktop.Notifications", member: "Inhibit",
                    arguments: [.string("toastkit-conformance"), .string("a test"), .variantDictionary([])]))
            off = { inhibitor.close() }
        case .swaync:
            try await desktop.run("swaync-client", ["--dnd-on", "--skip-wait"])
            off = { try await desktop.run("swaync-client", ["--dnd-off", "--skip-wait"]) }
        case .mako:
            try await desktop.run("makoctl", ["mode", "-a", "do-not-disturb"])
            off = { try await desktop.run("makoctl", ["mode", "-r", "do-not-disturb"]) }
        case .xfce4Notifyd:
            return record.notTestable(
                "its Do Not Disturb is the xfconf property /do-not-disturb, and the suite runs no xfconfd to set it "
                    + "(ToastKit reads it over D-Bus and follows its PropertyChanged)")
        case .gnomeShell:
            try await gsettings("org.gnome.desktop.notifications", "show-banners", "false")
            off = { try await gsettings("org.gnome.desktop.notifications", "show-banners", "true") }
        case .mateNotificationDaemon:
            try await gsettings("org.mate.NotificationDaemon", "do-not-disturb", "true")
            off = { try await gsettings("org.mate.NotificationDaemon", "do-not-disturb", "false") }
        case .lxqtNotificationd:
            let folder = "\(environment["XDG_CONFIG_HOME"]!)/lxqt"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let file = "\(folder)/notifications.conf"
            try "[General]\ndoNotDisturb=true\n".write(toFile: file, atomically: true, encoding: .utf8)
            off = { try "[General]\ndoNotDisturb=false\n".write(toFile: file, atomically: true, encoding: .utf8) }
        case .notificationDaemon:
            return record.notTestable("has no Do Not Disturb")
        }
        // A center that links now reads the state before it hands anything over.
        let toasts = ToastHarness(busAddress: desktop.environment.bus.address, settingsEnvironment: environment)
        defer { toasts.stop() }
        toasts.center.present(ToastMessage(id: "quiet", title: "En silencio", duration: 30))
        let held = try await toasts.events.next("the held toast's suppressed event", within: .seconds(10)) {
            if case .suppressed(id: "quiet", _) = $0 { true } else { false }
        }
        if case .suppressed(_, let suppression) = held.value {
            record.equal(suppression.kind, .held, "how Do Not Disturb took the toast")
            record.check(!suppression.source.isEmpty, "the suppressed event names no source")
        }
        record.check(
            !desktop.bus.log.all.contains { $0.value.member == "Notify" },
            "a Notify reached the server while Do Not Disturb was on")
        try await off()
        let shown = try await desktop.bus.nextNotify(within: .seconds(10))
        record.equal(shown.arguments.summary, "En silencio", "the held toast, once Do Not Disturb is off")
        _ = try await toasts.events.next("the held toast's shown event", within: .seconds(10)) {
            $0 == .shown(id: "quiet")
        }
        try await expectShown(title: "En silencio", on: desktop, record, "after Do Not Disturb")
        toasts.center.dismissAll()
        await toasts.center.flush()
    }

    // MARK: - Sound

    /// A toast with a sound, then an update of it with the same sound, then one with another: the server is sent the
    /// `sound-name` hint where it really plays sounds (GNOME Shell), and ToastKit plays it itself everywhere else,
    /// through the player the test points the presenter at (a script that writes its file to a FIFO); never both, and
    /// nothing for the update with the same sound. GNOME Shell and MATE's daemon play through libcanberra: their ALSA
    /// default device is a file here, and the samples are checked — GNOME's for the name, MATE's for a sound file,
    /// the only kind it plays.
    /// A reply action. Plasma draws the field in the toast (`inline-reply`, with the placeholder): the person types
    /// there, and `NotificationReplied` brings the text. Elsewhere it is a button, and choosing it runs the prompt
    /// program — here a stand-in for the dialog (the documented seam, TOASTKIT_REPLY_PROMPT's), which answers
    /// what the person would type. Either way the handler gets the text, once.
    func reply(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let text = "Voy a las dos"
        let toasts = ToastHarness(
            busAddress: desktop.environment.bus.address,
            replyPrompter: .command(["/bin/sh", "-c", "printf '%s\\n' \"$1\"", "prompt", text]))
        defer { toasts.stop() }
        let log = CallLog()
        let answer = ToastAction.reply(title: "Responder", placeholder: "Escribe…") { context in
            log.append("reply \(context.reply ?? "nil")")
        }
        toasts.center.present(
            ToastMessage(
                id: "reply", title: "Ana", message: "¿Comemos?", duration: .indefinite,
                swipeActions: ToastSwipeActions(leading: answer)))
        let notify = try await desktop.bus.nextNotify()
        // Plasma and swaync 0.11 draw a reply field (inline-reply).
        let native = desktop.kind == .plasma || desktop.server == .modern(.swaync011)
        // GNOME Shell gets `default` on every Notify (its click handler is the first Notify's, issue 18).
        let clickOnGNOME = desktop.kind == .gnomeShell ? ["default", ""] : []
        record.equal(
            notify.arguments.actionList, [native ? "inline-reply" : "reply", "Responder"] + clickOnGNOME,
            native ? "the reply field's action" : "the reply button")
        record.equal(
            notify.arguments.hints["x-kde-reply-placeholder-text"], native ? .string("Escribe…") : nil,
            "the placeholder hint")
        guard try await expectShown(title: "Ana", on: desktop, record, "before the reply") != nil else { return }
        if desktop.server == .modern(.swaync011) {
            throw NotSupportedOnServer(
                "swaync 0.11 draws the reply field (inline-reply) in its popup, and headless sway has no keyboard or "
                    + "pointer to type there with")
        }
        if native {
            try await desktop.environment.typeInlineReply(text)
            record.quirk("draws the reply field in the toast (inline-reply); the text comes in NotificationReplied")
        } else {
            try await desktop.environment.invokeAction("reply", serverID: notify.id, actionKeys: ["reply"])
            record.quirk("no reply field: a button, and ToastKit's prompt asks for the text")
        }
        record.equal(try await toasts.outcome(of: "reply").outcome, .actionInvoked(actionID: "reply"), "outcome")
        record.equal(log.all, ["reply \(text)"], "the handler got the text")
        record.check(
            toasts.events.all.contains { $0.value == .replied(id: "reply", actionID: "reply", text: text) },
            "the replied event")
        record.equal(
            toasts.events.all.filter { $0.value.isReplyPrompt }.count, native ? 0 : 1,
            native ? "no prompt: the server drew the field" : "one prompt")
        try await expectClosedAfterAction(notify, on: desktop, record)
    }

    func sound(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
        let folder = desktop.environment.directory
        let fifo = "\(folder)/sound-played"
        record.check(mkfifo(fifo, 0o600) == 0, "mkfifo \(fifo)")
        let player = "\(folder)/sound-player"
        try "#!/bin/sh\necho \"$@\" > \(fifo)\n".write(toFile: player, atomically: true, encoding: .utf8)
        chmod(player, 0o755)
        // The server's own sound card: ALSA reads $XDG_CONFIG_HOME/alsa/asoundrc when the server first plays.
        let config = "\(folder)/\(desktop.kind == .gnomeShell ? "gnome" : desktop.kind.rawValue)/config/alsa"
        let samples = "\(config)/played.raw"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try #"pcm.!default { type file; slave.pcm "null"; file "\#(samples)"; format "raw" }"#.write(
            toFile: "\(config)/asoundrc", atomically: true, encoding: .utf8)
        // Run by /bin/sh, not executed itself: a child another test thread forks meanwhile may still hold the script
        // open for writing, and executing it would fail (ETXTBSY).
        let toasts = ToastHarness(
            busAddress: desktop.environment.bus.address, soundPlayer: .command(["/bin/sh", player]))
        defer { toasts.stop() }
        let capabilities = try await toasts.presenter.serverCapabilities()
        let stereo = "/usr/share/sounds/freedesktop/stereo"
        let sound = ToastSound.named("complete")

        toasts.center.present(ToastMessage(id: "sound", title: "Copia lista", duration: .indefinite, sound: sound))
        let notify = try await desktop.bus.nextNotify()
        try await expectShown(title: "Copia lista", on: desktop, record, "with the sound's toast")
        toasts.center.present(ToastMessage(id: "sound", title: "Copia verificada", duration: .indefinite, sound: sound))
        let update = try await desktop.bus.nextNotify()
        record.equal(update.arguments.hints["sound-name"], nil, "sound-name on the update")
        if capabilities.playsSound(sound) {
            record.equal(notify.arguments.hints["sound-name"], .string("complete"), "sound-name hint")
            let played = try await Self.samples(at: samples)
            record.check(played.count > 10_000, "the server played \(played.count) bytes of samples")
            record.check(played.contains { $0 != 0 }, "the server's samples are silence")
            record.quirk("plays the `sound-name` hint itself (libcanberra), once the banner shows")
        } else {
            record.equal(notify.arguments.hints["sound-name"], nil, "sound-name hint (the server plays none)")
            let line = try await firstLine(ofFIFO: fifo, within: 20)
            record.equal(line, "\(stereo)/complete.oga", "the sound ToastKit played, once")
        }
        // An update that asks for another sound plays it; ToastKit's next line is that one, so it played nothing for
        // the first update (nor for the hint, where the server played).
        let bellFile = ToastSound.file("\(stereo)/bell.oga")
        toasts.center.present(ToastMessage(id: "sound", title: "Campana", duration: .indefinite, sound: bellFile))
        let bell = try await desktop.bus.nextNotify()
        if capabilities.playsSound(bellFile) {
            record.equal(bell.arguments.hints["sound-file"], .string(bellFile.text), "sound-file of the last update")
            let played = try await Self.samples(at: samples)
            record.check(played.count > 10_000, "the server played \(played.count) bytes of samples")
            if !capabilities.playsSound(sound) {
                record.quirk("lists the `sound` capability but plays only sound files: ToastKit plays a theme's sound")
            }
        } else {
            record.equal(
                try await firstLine(ofFIFO: fifo, within: 20), bellFile.text,
                "the next sound ToastKit played (none for the first update)")
            if capabilities.has("sound") {
                record.quirk("lists the `sound` capability but plays no sound: ToastKit plays it")
            }
        }
        toasts.center.dismissAll()
        await toasts.center.flush()
    }

    /// The samples ALSA writes to `path` once the server plays (it writes as it plays: read once the size holds).
    static func samples(at path: String) async throws -> Data {
        let deadline = ContinuousClock.now + .seconds(20)
        var last = -1
        while ContinuousClock.now < deadline {
            let data = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
            if !data.isEmpty, data.count == last { return data }
            last = data.count
            try await Task.sleep(for: .milliseconds(200))
        }
        return (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
    }
}

extension Desktop {
    /// The person invokes action `key` (`default`: a click on the body, or on the "Abrir" button of a server that
    /// draws `default` as a button).
    func invokeAction(_ key: String, _ serverID: UInt32, _ record: ScenarioRecord) async throws {
        if key == "default", kind == .xfce4Notifyd || kind == .lxqtNotificationd {
            record.quirk("no default action on the body: it is an \"Abrir\" button (P11, P24), which the suite clicks")
        }
        try await environment.invokeAction(key, serverID: serverID, actionKeys: ["default", "archive"])
    }

    /// The person closes the popup with the server's control — `dunstctl close`, the "x", or (xfce4-notifyd, which
    /// has no "x") a click on the body — and the server reports it. Returns the outcome ToastKit must report for the
    /// reason the server gave.
    func dismissOnServer(_ notify: NotifySeen, _ record: ScenarioRecord) async throws -> ToastOutcome {
        if kind == .xfce4Notifyd { record.quirk("no close button: a click on the body dismisses it (P11)") }
        try await environment.dismiss(serverID: notify.id)
        let reason = try await bus.nextClosed(of: notify.id).reason
        switch reason {
        case 2:
            return .dismissed
        case 1:
            record.quirk("its \"x\" reports reason 1 (expired), so ToastKit reports .expired, not .dismissed (P11)")
            return .expired
        default:
            record.fail("NotificationClosed reason \(reason) for a dismissal, expected 2")
            return .dismissed
        }
    }
}

extension ToastEvent {
    /// Whether this is a reply prompt's start.
    var isReplyPrompt: Bool {
        if case .replyAsked = self { true } else { false }
    }

    /// Whether this is the end of toast `id`.
    func isEnd(of id: String) -> Bool {
        if case .ended(id, _) = self { true } else { false }
    }
}

extension DBusMessage {
    /// Whether this is `NotificationClosed(id, …)`.
    func isClosed(_ id: UInt32) -> Bool {
        kind == .signal && member == "NotificationClosed" && body.first == .uint32(id)
    }

}
