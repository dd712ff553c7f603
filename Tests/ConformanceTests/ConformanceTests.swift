import DBus
import Foundation
import FreedesktopNotifications
import TestSupport
import Testing
import ToastModel

extension OneAtATime {
    /// The server conformance matrix (issue 6, §3): one suite of scenarios run against dunst, notification-daemon,
    /// xfce4-notifyd and mate-notification-daemon, each scenario on a fresh private desktop (bus + Xvfb + server).
    ///
    /// Every scenario asserts what a user would see — the `Notify`/`CloseNotification` calls and the server's signals
    /// on a bus monitor, the popup on screen, and the center's events. Where a server deviates, the scenario records a
    /// quirk and asserts ToastKit's fallback instead of skipping. The results go to `.build/conformance/results.md`
    /// (`scripts/update-conformance-table.sh` copies them into the README); failed checks still fail the test.
    ///
    /// The four servers run in parallel (each on its own display, so xdotool pointers never meet); a server's
    /// scenarios run one after another.
    @Suite(.timeLimit(.minutes(2)))
    struct ConformanceTests {
        @Test(arguments: Scenario.servers)
        func conformance(of server: NotificationServerKind) async throws {
            defer { try? ConformanceResults.shared.write() }
            if server != .dunst {
                _ = try Tools.require("xdotool", package: "xdotool")
            }
            _ = try Tools.require("import", package: "imagemagick")
            for scenario in Scenario.allCases {
                let record = ScenarioRecord(server: server, scenario: scenario)
                defer { ConformanceResults.shared.record(record) }
                let desktop: Desktop
                do {
                    desktop = try await Desktop.start(server)
                } catch {
                    // A missing server fails (with the package to install), it is never skipped. One issue is enough:
                    // the rest of its row fails with the same reason.
                    record.fail("cannot start \(server): \(error)")
                    for rest in Scenario.allCases.drop(while: { $0 != scenario }).dropFirst() {
                        let notStarted = ScenarioRecord(server: server, scenario: rest, reportsIssues: false)
                        notStarted.fail("cannot start \(server): \(error)")
                        ConformanceResults.shared.record(notStarted)
                    }
                    return
                }
                do {
                    try await run(scenario, on: desktop, record)
                } catch {
                    record.fail("\(error)")
                }
                desktop.saveTranscript(scenario)
                let leftovers = await desktop.stop()
                record.check(leftovers.isEmpty, "processes left after the desktop stopped: \(leftovers)")
            }
            try ConformanceResults.shared.write()
        }

        private func run(_ scenario: Scenario, on desktop: Desktop, _ record: ScenarioRecord) async throws {
            switch scenario {
            case .present: try await present(desktop, record)
            case .replace: try await replace(desktop, record)
            case .tap: try await tap(desktop, record)
            case .button: try await button(desktop, record)
            case .dismiss: try await dismiss(desktop, record)
            case .closeByCall: try await closeByCall(desktop, record)
            case .expiry: try await expiry(desktop, record)
            case .markup: try await markup(desktop, record)
            case .icon: try await icon(desktop, record)
            }
        }

        // MARK: - Scenarios

        /// Notify reaches the server with summary, body, app name, urgency and icon; the server assigns an id; the
        /// popup appears.
        private func present(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
            let capabilities = try await desktop.toasts.presenter.serverCapabilities()
            ConformanceResults.shared.record(desktop.kind, capabilities: capabilities)

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
            record.equal(arguments.expireTimeout, 30_000, "expire_timeout")
            record.check(notify.id > 0, "the server assigned no id")
            record.equal(try await desktop.toasts.presenter.accepted("present"), notify.id, "presenter's accepted id")
            record.equal(desktop.toasts.presenter.serverID(ofToast: "present"), notify.id, "serverID(ofToast:)")
            _ = try await desktop.toasts.events.next("shown event") { $0 == .shown(id: "present") }
            try await expectPopups(1, on: desktop, record, "after Notify")
        }

        /// Presenting the same ToastMessage id again sends replaces_id = the first id; the server keeps the id and one
        /// popup stays.
        private func replace(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
            let center = desktop.toasts.center
            center.present(ToastMessage(id: "sync", title: "Sincronizando…", duration: .indefinite))
            let first = try await desktop.bus.nextNotify()
            record.equal(first.arguments.replacesID, 0, "first replaces_id")
            try await expectPopups(1, on: desktop, record, "after the first Notify")

            center.present(ToastMessage(id: "sync", status: .success, title: "Sincronizado", message: "Todo al día."))
            let second = try await desktop.bus.nextNotify()
            record.equal(second.arguments.replacesID, first.id, "second replaces_id")
            record.equal(second.id, first.id, "the id the server answered the replacement with")
            record.equal(second.arguments.summary, "Sincronizado", "second summary")
            record.equal(second.arguments.hints["image-path"], .string("emblem-default"), "second image-path")
            record.equal(
                try await desktop.toasts.outcome(of: "sync").outcome, .replaced, "first presentation's outcome")
            record.equal(desktop.toasts.presenter.serverID(ofToast: "sync"), first.id, "serverID(ofToast:)")
            try await expectPopups(1, on: desktop, record, "after the replacement")
            let closed = desktop.bus.log.all.contains { $0.value.isClosed(first.id) }
            record.check(!closed, "the server closed the replaced notification instead of updating it")
        }

        /// The person taps the toast (the default action): the tap action's handler runs and the toast ends with its id.
        private func tap(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
            let log = CallLog()
            desktop.toasts.center.present(Self.anaToast(id: "tap", log: log))
            let notify = try await desktop.bus.nextNotify()
            record.equal(notify.arguments.actionList, ["default", "Abrir", "archive", "Archivar"], "actions")
            guard try await expectPopups(1, on: desktop, record, "before the tap") != nil else { return }

            try await desktop.invokeDefaultAction(notify.id, record)

            record.equal(try await desktop.bus.nextActionInvoked(of: notify.id), "default", "ActionInvoked key")
            record.equal(
                try await desktop.toasts.outcome(of: "tap").outcome, .actionInvoked(actionID: "open"), "outcome")
            record.equal(log.all, ["open tap"], "handlers that ran")
            try await expectClosedAfterAction(notify, on: desktop, record)
            record.equal(desktop.toasts.terminalEvents(of: "tap"), 1, "terminal events of the toast")
        }

        /// The person presses the "Archivar" button (the leading swipe action): its own handler runs.
        private func button(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
            let log = CallLog()
            desktop.toasts.center.present(Self.anaToast(id: "button", log: log))
            let notify = try await desktop.bus.nextNotify()
            guard try await expectPopups(1, on: desktop, record, "before the button") != nil else { return }

            try await desktop.invokeArchive(notify.id, record)

            record.equal(try await desktop.bus.nextActionInvoked(of: notify.id), "archive", "ActionInvoked key")
            record.equal(
                try await desktop.toasts.outcome(of: "button").outcome, .actionInvoked(actionID: "archive"), "outcome")
            record.equal(log.all, ["archive button"], "handlers that ran")
            try await expectClosedAfterAction(notify, on: desktop, record)
            record.equal(desktop.toasts.terminalEvents(of: "button"), 1, "terminal events of the toast")
        }

        /// The person closes the popup with the server's own control: the toast ends as dismissed (or as the server's
        /// reason says, recorded as a quirk).
        private func dismiss(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
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
        }

        /// `center.dismiss(id:)`: ToastKit sends CloseNotification with the server id, the popup goes, the toast ends
        /// once as closedByApp. The toast has a 3 s duration, so its expire_timeout is the safety net for a server that
        /// leaves the popup up after CloseNotification (notification-daemon).
        private func closeByCall(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
            let toasts = desktop.toasts
            toasts.center.present(ToastMessage(id: "upload", title: "Subiendo…", duration: 3))
            let notify = try await desktop.bus.nextNotify()
            let timeout = notify.arguments.expireTimeout
            record.check((2500...3000).contains(timeout), "expire_timeout \(timeout), expected 2500…3000 ms")
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

            // Barrier: a second toast closed by the server. Its end is reported from the presenter's signal stream, in
            // order, so once it has ended every signal about the first toast has been handled too.
            let log = CallLog()
            toasts.center.present(Self.anaToast(id: "barrier", log: log))
            let barrier = try await desktop.bus.nextNotify()
            guard try await expectPopups(1, on: desktop, record, "before the barrier's dismissal") != nil else {
                return
            }
            // The barrier's own quirks belong to the dismissal scenario; its failures count here.
            let barrierRecord = ScenarioRecord(server: desktop.kind, scenario: .closeByCall, reportsIssues: false)
            let barrierOutcome = try await desktop.dismissOnServer(barrier, barrierRecord)
            for failure in barrierRecord.failures { record.fail("barrier: \(failure)") }
            record.equal(try await toasts.outcome(of: "barrier").outcome, barrierOutcome, "barrier outcome")
            record.equal(toasts.terminalEvents(of: "upload"), 1, "terminal events of the closed toast")
        }

        /// A 1 s toast ends as expired within 0.5…2.5 s and leaves the server: the server expires it (reason 1), or
        /// ToastKit's client-side expiry closes it (CloseNotification, reason 3). A raw Notify (no ToastKit, so nobody
        /// closes it) first finds out whether the server expires anything by itself; where it does not, ToastKit's
        /// CloseNotification is required.
        private func expiry(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
            let probe = try await probeServerExpiry(desktop, record)

            let start = ContinuousClock.now
            desktop.toasts.center.present(ToastMessage(id: "copied", title: "Copiado", duration: 1))
            let notify = try await desktop.bus.nextNotify()
            record.check(
                (900...1000).contains(notify.arguments.expireTimeout),
                "expire_timeout \(notify.arguments.expireTimeout), expected 900…1000 ms")
            let (outcome, endedAt) = try await desktop.toasts.outcome(of: "copied")
            record.equal(outcome, .expired, "outcome")
            let elapsed = endedAt - start
            // A correctness check with a wide tolerance (two cores shared by four desktops), not a benchmark.
            record.check(
                elapsed >= .milliseconds(500) && elapsed <= .milliseconds(2500),
                "expired after \(elapsed), not 0.5…2.5 s")
            let closed = try await desktop.bus.nextClosed(of: notify.id)
            let closedByToastKit = desktop.bus.log.all.contains {
                $0.value.kind == .methodCall && $0.value.member == "CloseNotification"
                    && $0.value.body.first == .uint32(notify.id) && $0.value.sender == notify.caller
            }
            switch closed.reason {
            case 1:
                record.check(probe.expires, "NotificationClosed reason 1, though the server did not expire the probe")
            case 3:
                record.check(closedByToastKit, "NotificationClosed reason 3 without ToastKit's CloseNotification")
            default:
                record.fail("NotificationClosed reason \(closed.reason), expected 1 (server) or 3 (ToastKit)")
            }
            if !probe.expires {
                record.equal(
                    closed.reason, 3, "NotificationClosed reason (the server never expires: ToastKit closes it)")
                record.quirk(
                    probe.popupHidden
                        ? "hides the popup at expire_timeout but never sends NotificationClosed (P9); "
                            + "ToastKit's client-side expiry closed it"
                        : "never expires by itself (P9); ToastKit's client-side expiry closed it")
            }
            try await expectPopups(0, on: desktop, record, "after expiry")
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
                return (false, hidden)
            }
        }

        /// "a < b & c" is sent escaped to a server with body-markup and shown literally; screenshot in
        /// `.build/conformance/<server>.png`.
        private func markup(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
            let capabilities = try await desktop.toasts.presenter.serverCapabilities()
            desktop.toasts.center.present(ToastMessage(id: "markup", title: "Markup", message: "a < b & c"))
            let notify = try await desktop.bus.nextNotify()
            if capabilities.has("body-markup") {
                record.equal(notify.arguments.body, "a &lt; b &amp; c", "body for a server with body-markup")
            } else {
                record.equal(notify.arguments.body, "a < b & c", "body for a server without body-markup")
                record.quirk("no body-markup: the body is sent as plain text")
            }
            guard try await expectPopups(1, on: desktop, record, "with the markup toast") != nil else { return }
            let path = try await desktop.screenshot(named: desktop.kind.rawValue)
            expectPNG(at: path, record)

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

        /// `.system("exclamationmark.triangle")` goes out as the freedesktop name `dialog-warning` in `image-path` and
        /// `app_icon`; the server accepts and shows it (screenshot `.build/conformance/<server>-icon.png`).
        private func icon(_ desktop: Desktop, _ record: ScenarioRecord) async throws {
            desktop.toasts.center.present(
                ToastMessage(
                    id: "icon", title: "Icono", message: "exclamationmark.triangle",
                    icon: .system("exclamationmark.triangle")))
            let notify = try await desktop.bus.nextNotify()
            record.equal(notify.arguments.hints["image-path"], .string("dialog-warning"), "image-path hint")
            record.equal(notify.arguments.appIcon, "dialog-warning", "app_icon")
            record.check(notify.id > 0, "the server assigned no id")
            guard try await expectPopups(1, on: desktop, record, "with the icon toast") != nil else { return }
            let path = try await desktop.screenshot(named: "\(desktop.kind.rawValue)-icon")
            expectPNG(at: path, record)

            if desktop.kind == .dunst {
                desktop.toasts.center.dismiss(id: "icon")
                _ = try await desktop.bus.nextClosed(of: notify.id)
                let iconPath = try await desktop.dunstHistory(of: notify.id)?["icon_path"] as? String ?? ""
                record.check(iconPath.hasSuffix("/dialog-warning.png"), "dunst drew icon \(iconPath.debugDescription)")
            }
        }

        // MARK: - Shared checks

        /// The suite's toast with a tap action ("open", "Abrir") and a leading action ("archive", "Archivar"); the GTK
        /// servers' click offsets are measured for this shape.
        static func anaToast(id: String, log: CallLog) -> ToastMessage {
            ToastMessage(
                id: id, title: "Mensaje de Ana", message: "Nuevo mensaje",
                tapAction: ToastAction(id: "open", title: "Abrir") { toast in log.append("open \(toast.id)") },
                swipeActions: ToastSwipeActions(
                    leading: ToastAction(id: "archive", title: "Archivar") { toast in log.append("archive \(toast.id)")
                    }
                ))
        }

        /// Waits until `count` popups are visible; records a failure (naming what is visible) if they never are.
        @discardableResult
        private func expectPopups(
            _ count: Int, on desktop: Desktop, _ record: ScenarioRecord, _ when: String,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws -> [Popup]? {
            let popups = try await desktop.waitForPopups(count)
            if popups == nil {
                let now = try await desktop.visiblePopups()
                record.fail(
                    "\(when): \(now.count) popups visible \(now), expected \(count)", sourceLocation: sourceLocation)
            }
            return popups
        }

        /// After an action the notification must leave the screen: closed by the server itself (reason 2), or — for a
        /// server that keeps it — by ToastKit's CloseNotification (reason 3), recorded as a quirk.
        private func expectClosedAfterAction(_ notify: NotifySeen, on desktop: Desktop, _ record: ScenarioRecord)
            async throws
        {
            let closed = try await desktop.bus.nextClosed(of: notify.id)
            switch closed.reason {
            case 2:
                break
            case 3:
                let closedByToastKit = desktop.bus.log.all.contains {
                    $0.value.member == "CloseNotification" && $0.value.body.first == .uint32(notify.id)
                        && $0.value.sender == notify.caller
                }
                record.check(closedByToastKit, "closed with reason 3 without ToastKit's CloseNotification")
                record.quirk(
                    "stays open after the action (P3: `dunstctl action`/`context` do not close); "
                        + "ToastKit's CloseNotification closed it")
            default:
                record.fail("NotificationClosed reason \(closed.reason) after an action, expected 2 or 3")
            }
            try await expectPopups(0, on: desktop, record, "after the action")
        }

        private func expectPNG(at path: String, _ record: ScenarioRecord) {
            let data = FileManager.default.contents(atPath: path) ?? Data()
            record.check(
                data.starts(with: [0x89, 0x50, 0x4E, 0x47]) && data.count > 2_000, "no PNG screenshot at \(path)")
        }

        /// The text pango shows for markup: tags removed, the five entities decoded.
        static func plainText(ofPango markup: String) -> String {
            var text = ""
            var inTag = false
            for character in markup {
                if character == "<" {
                    inTag = true
                } else if character == ">" {
                    inTag = false
                } else if !inTag {
                    text.append(character)
                }
            }
            return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
                .replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    // MARK: - Driving each server
}

extension Desktop {
    /// The person invokes the default action: `dunstctl action 0` (dunst), a click on the body (notification-daemon,
    /// mate), or a click on the "Abrir" button xfce4-notifyd draws for it.
    func invokeDefaultAction(_ serverID: UInt32, _ record: ScenarioRecord) async throws {
        if kind == .xfce4Notifyd {
            record.quirk("no default action on the body: it is an \"Abrir\" button (P11), which the suite clicks")
        }
        try await environment.invokeAction("default", serverID: serverID, actionKeys: ["default", "archive"])
    }

    /// The person chooses "Archivar": in dunst's context menu (`dunstctl context`, scripted by dmenu-pick.sh), or with
    /// a click on the button.
    func invokeArchive(_ serverID: UInt32, _ record: ScenarioRecord) async throws {
        try await environment.invokeAction("archive", serverID: serverID, actionKeys: ["default", "archive"])
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

extension DBusMessage {
    /// Whether this is `NotificationClosed(id, …)`.
    func isClosed(_ id: UInt32) -> Bool {
        kind == .signal && member == "NotificationClosed" && body.first == .uint32(id)
    }
}
