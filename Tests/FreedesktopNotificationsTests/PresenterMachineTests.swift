import DBus
import FreedesktopNotifications
import Testing
import ToastModel

/// The desktop presenter's state machine without a bus: events in, actions out (issue 10 §3).
@Suite struct PresenterMachineTests {
    typealias Machine = DesktopPresenterMachine
    static let server = ":1.5"
    static let dunst = ServerCapabilities(
        ["actions", "body", "body-markup", "icon-static"],
        information: ServerInformation(name: "dunst", vendor: "knopwob", version: "1.9.0", specificationVersion: "1.2"))

    /// A server that sends its signals to everyone (unlike dunst).
    static let xfce = ServerCapabilities(
        ["actions", "body"],
        information: ServerInformation(
            name: "xfce4-notifyd", vendor: "Xfce", version: "0.8.2", specificationVersion: "1.2"))

    /// The settings of most tests here: no update interval, so time can stand still (``handle(_:)``); the interval has
    /// tests of its own, with the time of each event.
    static let configuration = PresenterConfiguration(appName: "tests", minimumUpdateInterval: .zero)

    /// A toast snapshot as the center hands it over.
    static func presentation(
        _ id: String, _ title: String = "T", remaining: Duration? = .seconds(4), running: Bool = true,
        actions: [PresentedAction] = []
    ) -> ToastPresentation {
        let toast = PresentedToast(
            id: id, status: .normal, title: title, actions: actions, remaining: remaining, isTimerRunning: running)
        return ToastPresentation(toast: toast, request: ThemedToastStyle(theme: .standard).makeRequest(for: toast))
    }

    /// A machine whose link is up (generation 1) with `capabilities`, owned by `server`.
    static func linked(_ capabilities: ServerCapabilities = dunst) -> Machine {
        var machine = Machine(configuration: Self.configuration)
        #expect(machine.handle(.show(presentation("warm-up"))) == [.connect(generation: 1)])
        let sent = machine.handle(.linkReady(generation: 1, capabilities: capabilities, owner: server))
        let call = sent.notifyCall
        _ = machine.handle(.notifyAnswered(id: "warm-up", call: call!, .success(.init(serverID: 1, sender: server))))
        _ = machine.handle(.close(id: "warm-up"))
        _ = machine.handle(.closeAnswered(id: "warm-up", call: call! + 1))
        #expect(machine.trackedToastIDs.isEmpty)
        return machine
    }

    static func reply(_ serverID: UInt32, from sender: String? = server) -> Result<
        Machine.NotifyReply, PresentationError
    > {
        .success(Machine.NotifyReply(serverID: serverID, sender: sender))
    }

    // MARK: - Sending

    @Test func theFirstToastConnectsThenSendsWithTheTimersTimeout() throws {
        var machine = Machine(configuration: Self.configuration)
        #expect(machine.handle(.show(Self.presentation("a"))) == [.connect(generation: 1)])
        #expect(machine.handle(.show(Self.presentation("b", running: false))).isEmpty, "one link for both")
        let sent = machine.handle(.linkReady(generation: 1, capabilities: Self.dunst, owner: Self.server))
        #expect(sent.notifies.map(\.summary) == ["T", "T"])
        #expect(sent.notifies.map(\.expireTimeout) == [4000, 0], "a toast whose timer does not run never expires")
        #expect(sent.notifies.map(\.replacesID) == [0, 0])
        #expect(machine.handle(.awaitAccepted(id: "a", waiter: 7)).isEmpty, "waits for the reply")
        let answered = machine.handle(.notifyAnswered(id: "a", call: sent.calls[0], Self.reply(12)))
        #expect(answered == [.resume([7], .success(12))])
        #expect(machine.serverID(ofToast: "a") == 12)
        #expect(machine.handle(.awaitAccepted(id: "a", waiter: 8)) == [.resume([8], .success(12))])
    }

    @Test func latestWinsWhileANotifyIsOnItsWay() throws {
        var machine = Self.linked()
        let first = machine.handle(.show(Self.presentation("p", "0 %")))
        let call = try #require(first.notifyCall)
        for percent in 1...10_000 {
            #expect(machine.handle(.show(Self.presentation("p", "\(percent) %"))).isEmpty)
        }
        #expect(machine.notifyCallsInFlight == 1)
        let next = machine.handle(.notifyAnswered(id: "p", call: call, Self.reply(3)))
        #expect(next.notifies.map(\.summary) == ["10000 %"], "only the newest content goes out")
        #expect(next.notifies.map(\.replacesID) == [3])
        let done = machine.handle(.notifyAnswered(id: "p", call: try #require(next.notifyCall), Self.reply(3)))
        #expect(done.isEmpty)
    }

    @Test func aCloseAfterPendingUpdatesDropsThem() throws {
        var machine = Self.linked()
        let call = try #require(machine.handle(.show(Self.presentation("p", "one"))).notifyCall)
        _ = machine.handle(.show(Self.presentation("p", "two")))
        _ = machine.handle(.timer(id: "p", remaining: .seconds(2), isRunning: false))
        #expect(machine.handle(.close(id: "p")).isEmpty, "waits for the id")
        let after = machine.handle(.notifyAnswered(id: "p", call: call, Self.reply(9)))
        #expect(after == [.close(id: "p", call: call + 1, serverID: 9)])
        #expect(machine.handle(.awaitAccepted(id: "p", waiter: 1)).isEmpty, "the close is on its way")
        #expect(machine.handle(.closeAnswered(id: "p", call: call + 1)) == [.resume([1], .failure(.notPresented("p")))])
        #expect(machine.trackedToastIDs.isEmpty)
    }

    @Test func timerChangesAreSentAsReplacementsExceptWhereTheServerIgnoresTimeouts() throws {
        var machine = Self.linked()
        let call = try #require(machine.handle(.show(Self.presentation("t", remaining: .seconds(2)))).notifyCall)
        _ = machine.handle(.notifyAnswered(id: "t", call: call, Self.reply(4)))
        let paused = machine.handle(.timer(id: "t", remaining: .milliseconds(1500), isRunning: false))
        #expect(paused.notifies.map(\.expireTimeout) == [0])
        #expect(paused.notifies.map(\.replacesID) == [4])
        _ = machine.handle(.notifyAnswered(id: "t", call: try #require(paused.notifyCall), Self.reply(4)))
        let resumed = machine.handle(.timer(id: "t", remaining: .milliseconds(1500), isRunning: true))
        #expect(resumed.notifies.map(\.expireTimeout) == [1500])

        let gnome = ServerCapabilities(
            ["actions", "body"],
            information: ServerInformation(
                name: "gnome-shell", vendor: "GNOME", version: "43.9", specificationVersion: "1.2"))
        var shell = Self.linked(gnome)
        let shown = try #require(shell.handle(.show(Self.presentation("g"))).notifyCall)
        _ = shell.handle(.notifyAnswered(id: "g", call: shown, Self.reply(2)))
        #expect(shell.handle(.timer(id: "g", remaining: .seconds(1), isRunning: false)).isEmpty)
        let update = shell.handle(.show(Self.presentation("g", "new", remaining: .seconds(3), running: true)))
        #expect(update.notifies.map(\.expireTimeout) == [3000], "the next send carries the timer")
    }

    @Test func distinctToastsAreNeverCoalesced() throws {
        var machine = Self.linked()
        var sent: [NotifyCall] = []
        for index in 0..<100 { sent += machine.handle(.show(Self.presentation("t\(index)", "\(index)"))).notifies }
        #expect(sent.map(\.summary) == (0..<100).map { "\($0)" })
        #expect(machine.notifyCallsInFlight == 100)
    }

    @Test func aNotifyWaitsForTheCloseOnItsWay() throws {
        // swaync often never draws a Notify that arrives right behind a CloseNotification.
        var machine = Self.linked()
        let front = try #require(machine.handle(.show(Self.presentation("front"))).notifyCall)
        _ = machine.handle(.notifyAnswered(id: "front", call: front, Self.reply(3)))
        #expect(machine.handle(.close(id: "front")) == [.close(id: "front", call: front + 1, serverID: 3)])
        #expect(machine.handle(.show(Self.presentation("next"))).isEmpty, "held until the close is answered")
        let after = machine.handle(.closeAnswered(id: "front", call: front + 1))
        #expect(after.notifies.map(\.replacesID) == [0])
    }

    @Test func anIdenticalReplacementRefusedAsARepeatKeepsTheNotification() throws {
        // Plasma refuses a Notify identical to the one it shows (ExcessNotificationGeneration).
        var machine = Self.linked()
        let first = try #require(machine.handle(.show(Self.presentation("sync", "Sincronizando…"))).notifyCall)
        _ = machine.handle(.notifyAnswered(id: "sync", call: first, Self.reply(7)))
        let again = try #require(machine.handle(.show(Self.presentation("sync", "Sincronizando…"))).notifyCall)
        let repeated = PresentationError(
            DBusError(name: "org.freedesktop.Notifications.Error.ExcessNotificationGeneration", message: "too many"),
            timeout: .seconds(5))
        #expect(repeated.kind == .repeatedTooSoon)
        #expect(machine.handle(.notifyAnswered(id: "sync", call: again, .failure(repeated))).reports.isEmpty)
        #expect(machine.serverID(ofToast: "sync") == 7)
        // A new toast refused the same way has nothing on screen: that is a failure, with the reason.
        let fresh = try #require(machine.handle(.show(Self.presentation("other", "Sincronizando…"))).notifyCall)
        let failed = machine.handle(.notifyAnswered(id: "other", call: fresh, .failure(repeated)))
        #expect(failed.reports == [.failed(toastID: "other", reason: repeated.reason, recoverable: false)])
    }

    // MARK: - Signals

    @Test func aSignalBeforeTheNotifyReplyIsHeldAndReplayed() throws {
        var machine = Self.linked()
        let tap = PresentedAction(key: "default", actionID: "open", title: "Abrir", role: .tap)
        let call = try #require(machine.handle(.show(Self.presentation("m", actions: [tap]))).notifyCall)
        #expect(machine.handle(.signal(.activationToken(id: 21, token: "tok"), sender: Self.server)).isEmpty)
        #expect(machine.handle(.signal(.actionInvoked(id: 21, key: "default"), sender: Self.server)).isEmpty)
        let answered = machine.handle(.notifyAnswered(id: "m", call: call, Self.reply(21)))
        #expect(answered == [.report(.actionInvoked(toastID: "m", key: "default", activationToken: "tok"))])
    }

    @Test func heldSignalsAreBoundedAndDroppedOnceNothingIsOnItsWay() throws {
        var machine = Self.linked()
        let call = try #require(machine.handle(.show(Self.presentation("m"))).notifyCall)
        for id in 1...UInt32(Machine.orphanLimit + 500) {
            _ = machine.handle(.signal(.closed(id: 10_000 + id, reason: .expired), sender: Self.server))
        }
        #expect(machine.handle(.notifyAnswered(id: "m", call: call, Self.reply(10_001))).reports.count == 1)
        // With nothing on its way, a signal for an unknown id is not ours: it is dropped, not held.
        _ = machine.handle(.signal(.closed(id: 77, reason: .expired), sender: Self.server))
        let next = try #require(machine.handle(.show(Self.presentation("n"))).notifyCall)
        #expect(machine.handle(.notifyAnswered(id: "n", call: next, Self.reply(77))).reports.isEmpty)
    }

    @Test func onlyTheOwnerMaySpeakAndOnlyAboutOurIDs() throws {
        var machine = Self.linked()
        let call = try #require(machine.handle(.show(Self.presentation("a"))).notifyCall)
        _ = machine.handle(.notifyAnswered(id: "a", call: call, Self.reply(5)))
        #expect(machine.handle(.signal(.actionInvoked(id: 5, key: "default"), sender: ":1.66")).isEmpty)
        #expect(machine.handle(.signal(.closed(id: 5, reason: .dismissedByUser), sender: nil)).isEmpty)
        #expect(machine.handle(.signal(.closed(id: 6, reason: .dismissedByUser), sender: Self.server)).isEmpty)
        #expect(
            machine.handle(.signal(.closed(id: 5, reason: .dismissedByUser), sender: Self.server)) == [
                .report(.closed(toastID: "a", reason: .dismissedByUser))
            ])
        #expect(
            machine.handle(.signal(.closed(id: 5, reason: .closedByCall), sender: Self.server)).isEmpty,
            "a second close of the same notification (swaync sends 3, then 2) is not news")
    }

    @Test func aCloseByTheServerDropsPendingContentAndClosesWhatAReplyBrings() throws {
        var machine = Self.linked()
        let first = try #require(machine.handle(.show(Self.presentation("a", "one"))).notifyCall)
        _ = machine.handle(.notifyAnswered(id: "a", call: first, Self.reply(5)))
        let update = try #require(machine.handle(.show(Self.presentation("a", "two"))).notifyCall)
        _ = machine.handle(.show(Self.presentation("a", "three")))
        #expect(
            machine.handle(.signal(.closed(id: 5, reason: .dismissedByUser), sender: Self.server)) == [
                .report(.closed(toastID: "a", reason: .dismissedByUser))
            ])
        // The update on its way made the server show it again (it reuses the id): that is closed, "three" never sent.
        #expect(
            machine.handle(.notifyAnswered(id: "a", call: update, Self.reply(5))) == [
                .close(id: "a", call: update + 1, serverID: 5)
            ])
    }

    @Test func plasmaActionThenCloseIsReportedInOrderWithItsToken() throws {
        var machine = Self.linked()
        let call = try #require(machine.handle(.show(Self.presentation("a"))).notifyCall)
        _ = machine.handle(.notifyAnswered(id: "a", call: call, Self.reply(8)))
        var reports: [ToastPresenterReport] = []
        for signal: NotificationSignal in [
            .activationToken(id: 8, token: "kde-token"), .actionInvoked(id: 8, key: "archive"),
            .closed(id: 8, reason: .closedByCall),
        ] {
            reports += machine.handle(.signal(signal, sender: Self.server)).reports
        }
        #expect(
            reports == [
                .actionInvoked(toastID: "a", key: "archive", activationToken: "kde-token"),
                .closed(toastID: "a", reason: .closedByCall),
            ])
    }

    // MARK: - Servers and connections

    @Test func anOwnerChangeMidFlightForgetsTheOldServersIDs() throws {
        var machine = Self.linked()
        let old = try #require(machine.handle(.show(Self.presentation("a"))).notifyCall)
        let changed = machine.handle(.ownerChanged(":1.9"))
        #expect(changed == [.report(.reshowRequested)])
        // The old server's late answer maps nothing on the new one.
        #expect(machine.handle(.notifyAnswered(id: "a", call: old, Self.reply(3))).isEmpty)
        #expect(machine.serverID(ofToast: "a") == nil)
        #expect(machine.handle(.signal(.closed(id: 3, reason: .expired), sender: Self.server)).isEmpty)
        // The center shows it again: capabilities are read anew, then a fresh Notify (no replaces_id).
        #expect(machine.handle(.show(Self.presentation("a"))) == [.connect(generation: 2)])
        let sent = machine.handle(.linkReady(generation: 2, capabilities: Self.dunst, owner: ":1.9"))
        #expect(sent.notifies.map(\.replacesID) == [0])
        #expect(machine.handle(.ownerChanged(nil)).reports.map(\.isRecoverableFailure) == [true])
    }

    @Test func staleLinkAnswersAreIgnoredAndAFailedLinkFailsTheWaitingToasts() throws {
        var machine = Machine(configuration: Self.configuration)
        _ = machine.handle(.show(Self.presentation("a")))
        _ = machine.handle(.awaitAccepted(id: "a", waiter: 1))
        #expect(machine.handle(.linkReady(generation: 9, capabilities: Self.dunst, owner: nil)).isEmpty)
        let noServer = PresentationError(.noServer, reason: "no notification server is running")
        let failed = machine.handle(.linkFailed(generation: 1, noServer))
        #expect(failed.reports == [.failed(toastID: "a", reason: noServer.reason, recoverable: true)])
        #expect(failed.contains(.resume([1], .failure(noServer))))
        // Kept (a server may come): the center's next show tries again.
        #expect(machine.trackedToastIDs == ["a"])
        #expect(machine.handle(.show(Self.presentation("a"))) == [.connect(generation: 2)])
    }

    @Test func aToastEndedWhileTheLinkIsMadeTellsItsWaiterWhetherAServerWasThere() throws {
        // A silent server: the toast's time runs out while its capabilities are still being read.
        var machine = Machine(configuration: Self.configuration)
        _ = machine.handle(.show(Self.presentation("a")))
        _ = machine.handle(.awaitAccepted(id: "a", waiter: 1))
        #expect(machine.handle(.close(id: "a")).isEmpty, "the waiter waits for the link, not for the close")
        let silent = PresentationError(.timedOut, reason: "the notification server did not answer within 10 s")
        let failed = machine.handle(.linkFailed(generation: 1, silent))
        #expect(failed == [.resume([1], .failure(silent))], "no report: the center has ended it")
        #expect(machine.trackedToastIDs.isEmpty)
        // With a server that answers, a toast whose time ran out while the link was made still reaches the server
        // once (`notify-send -t 1` from a fresh process), and is closed as soon as it has its id.
        _ = machine.handle(.show(Self.presentation("b")))
        _ = machine.handle(.awaitAccepted(id: "b", waiter: 2))
        _ = machine.handle(.close(id: "b", expired: true))
        let ready = machine.handle(.linkReady(generation: 2, capabilities: Self.dunst, owner: Self.server))
        guard case .notify(id: "b", let call, let sent)? = ready.first else {
            Issue.record("the toast is sent once: \(ready)")
            return
        }
        #expect(sent.summary == "T")
        let answered = machine.handle(
            .notifyAnswered(id: "b", call: call, Self.reply(7)))
        #expect(
            answered.contains { if case .close(id: "b", _, serverID: 7) = $0 { true } else { false } }, "\(answered)")
    }

    @Test func aLostConnectionIsReportedOnceAndTheNextToastReconnects() throws {
        var machine = Self.linked()
        let call = try #require(machine.handle(.show(Self.presentation("a"))).notifyCall)
        let lost = PresentationError(.busUnavailable, reason: "the session bus connection was lost")
        let failed = machine.handle(.notifyAnswered(id: "a", call: call, .failure(lost)))
        #expect(failed.reports == [.failed(toastID: "a", reason: lost.reason, recoverable: false)])
        #expect(machine.trackedToastIDs.isEmpty, "a failure that cannot recover ends the toast")
        #expect(machine.handle(.awaitAccepted(id: "a", waiter: 3)) == [.resume([3], .failure(lost))])
        #expect(machine.handle(.connectionLost(lost)).isEmpty, "no toasts left to tell")
        #expect(machine.handle(.show(Self.presentation("b"))) == [.connect(generation: 2)])
    }

    @Test func invalidContentFailsThatToastAndClosesWhatItHadOnTheServer() throws {
        var machine = Self.linked()
        let call = try #require(machine.handle(.show(Self.presentation("a", "ok"))).notifyCall)
        _ = machine.handle(.notifyAnswered(id: "a", call: call, Self.reply(6)))
        let bad = machine.handle(.show(Self.presentation("a", "nul\u{0}byte")))
        #expect(bad.reports.count == 1)
        #expect(bad.reports.first?.isRecoverableFailure == false)
        #expect(bad.contains(.close(id: "a", call: call + 1, serverID: 6)))
    }

    @Test func aReplyForAForgottenToastIsClosedAndResetResumesWaiters() throws {
        var machine = Self.linked()
        let call = try #require(machine.handle(.show(Self.presentation("a"))).notifyCall)
        _ = machine.handle(.awaitAccepted(id: "a", waiter: 4))
        #expect(machine.handle(.reset) == [.resume([4], .failure(.notPresented("(detached)")))])
        #expect(machine.handle(.notifyAnswered(id: "a", call: call, Self.reply(2))) == [.discard(serverID: 2)])
    }

    @Test func adoptedIDsAreReplacedAndTheScreenSaverPauses() throws {
        var machine = Self.linked()
        _ = machine.handle(.adopt(serverID: 41, toastID: "sync"))
        #expect(machine.handle(.show(Self.presentation("sync"))).notifies.map(\.replacesID) == [41])
        #expect(machine.handle(.screenSaverChanged(active: true)) == [.report(.pauseRequested)])
        #expect(machine.handle(.screenSaverChanged(active: false)) == [.report(.resumeRequested)])
    }

    /// Issue 39: an id is adopted only from the server that owns the name now — before the link (checked when it is
    /// up) and after. A restarted server may have given the number to another application's notification.
    @Test func anIDFromAnotherServerIsNeverAdopted() throws {
        var linked = Self.linked()
        _ = linked.handle(.adopt(serverID: 41, toastID: "old", server: ":1.2"))
        _ = linked.handle(.adopt(serverID: 42, toastID: "same", server: Self.server))
        #expect(linked.handle(.show(Self.presentation("old"))).notifies.map(\.replacesID) == [0])
        #expect(linked.handle(.show(Self.presentation("same"))).notifies.map(\.replacesID) == [42])
        // Adopted before the link: checked when the link reads the owner.
        var fresh = Machine(configuration: Self.configuration)
        _ = fresh.handle(.adopt(serverID: 41, toastID: "old", onScreen: true, server: ":1.2"))
        _ = fresh.handle(.adopt(serverID: 42, toastID: "same", server: Self.server))
        #expect(fresh.handle(.show(Self.presentation("old"))) == [.connect(generation: 1)])
        _ = fresh.handle(.show(Self.presentation("same")))
        let sent = fresh.handle(.linkReady(generation: 1, capabilities: Self.dunst, owner: Self.server))
        #expect(sent.notifies.map(\.replacesID).sorted() == [0, 42], "old shown anew, not as an update of 41")
    }

    /// A notification another process showed (the hand-over, decision 0007) is taken over as it is: its first show
    /// is not sent again, its waiters get its id, and what comes after (an update, a close) goes to it as to any
    /// toast's. On dunst, which signals only the last sender, it is sent once more, in place.
    @Test(arguments: [false, true])
    func aNotificationAdoptedOnScreenIsNotSentAgainExceptToASenderOnlyServer(senderOnly: Bool) throws {
        var machine = Self.linked(senderOnly ? Self.dunst : Self.xfce)
        _ = machine.handle(.adopt(serverID: 41, toastID: "h", onScreen: true))
        let shown = machine.handle(.show(Self.presentation("h", "Hola")))
        if senderOnly {
            #expect(shown.notifies.map(\.replacesID) == [41], "once more, in place")
            let call = try #require(shown.notifyCall)
            _ = machine.handle(.notifyAnswered(id: "h", call: call, Self.reply(41)))
        } else {
            #expect(shown.notifies.isEmpty, "already on screen")
        }
        #expect(machine.handle(.awaitAccepted(id: "h", waiter: 3)) == [.resume([3], .success(41))])
        // An update is sent, in place.
        let updated = machine.handle(.show(Self.presentation("h", "Adiós")))
        #expect(updated.notifies.map(\.summary) == ["Adiós"] && updated.notifies.map(\.replacesID) == [41])
        let call = try #require(updated.notifyCall)
        _ = machine.handle(.notifyAnswered(id: "h", call: call, Self.reply(41)))
        // And a close closes it.
        #expect(machine.handle(.close(id: "h")).contains { if case .close(_, _, 41) = $0 { true } else { false } })
    }

    /// A taken-over notification whose time ran out while the link was being made is closed once the link is ready,
    /// never sent first (on dunst neither).
    @Test(arguments: [false, true])
    func aNotificationAdoptedOnScreenWhoseTimeRanOutIsClosedWhenTheLinkIsReady(dunst: Bool) throws {
        let capabilities = dunst ? Self.dunst : Self.xfce
        var machine = Machine(configuration: Self.configuration)
        _ = machine.handle(.adopt(serverID: 41, toastID: "h", onScreen: true))
        #expect(machine.handle(.show(Self.presentation("h"))) == [.connect(generation: 1)])
        #expect(machine.handle(.close(id: "h", expired: true)).notifies.isEmpty)
        let ready = machine.handle(.linkReady(generation: 1, capabilities: capabilities, owner: Self.server))
        #expect(ready.notifies.isEmpty, "not sent again")
        #expect(ready.contains { if case .close(_, _, 41) = $0 { true } else { false } }, "\(ready)")
    }

    /// A notification another process left on screen, closed before this presenter shows anything (the agent closes a
    /// saved toast whose time ran out while no agent ran): the close waits for the link, then goes out, and nothing
    /// is sent first. Sent on no link, it was lost, and the notification stayed.
    @Test(arguments: [false, true])
    func aNotificationAdoptedAndClosedBeforeTheLinkIsClosedOnceTheLinkIsReady(dunst: Bool) throws {
        var machine = Machine(configuration: Self.configuration)
        _ = machine.handle(.adopt(serverID: 41, toastID: "old", onScreen: true))
        #expect(machine.handle(.close(id: "old", expired: true)) == [.connect(generation: 1)])
        #expect(!machine.isSettled, "its close waits for the link")
        let ready = machine.handle(
            .linkReady(generation: 1, capabilities: dunst ? Self.dunst : Self.xfce, owner: Self.server))
        #expect(ready.notifies.isEmpty, "not shown again")
        guard case .close(id: "old", let call, serverID: 41)? = ready.first, ready.count == 1 else {
            Issue.record("no close of 41: \(ready)")
            return
        }
        _ = machine.handle(.closeAnswered(id: "old", call: call))
        #expect(machine.isSettled && machine.trackedToastIDs.isEmpty)
    }

    /// With no server to link to, such a close is given up, and nothing waits for it.
    @Test func aCloseOfAnAdoptedNotificationIsGivenUpWhenNoLinkCanBeMade() throws {
        var machine = Machine(configuration: Self.configuration)
        _ = machine.handle(.adopt(serverID: 41, toastID: "old", onScreen: true))
        _ = machine.handle(.close(id: "old", expired: true))
        let failed = machine.handle(
            .linkFailed(generation: 1, PresentationError(.noServer, reason: "no notification server")))
        #expect(failed.isEmpty, "the center never showed it: nothing to report\(failed)")
        #expect(machine.isSettled && machine.trackedToastIDs.isEmpty, "its id is no longer followed")
    }

    /// GNOME Shell 43 leaves a notification that waited behind a banner in its queue when that banner is closed: after
    /// the close is answered, every other live notification goes again, in place (nothing of the sort on dunst).
    @Test(arguments: [true, false])
    func afterACloseOnGNOMETheOtherLiveNotificationsGoAgainInPlace(gnome: Bool) throws {
        let capabilities =
            gnome
            ? ServerCapabilities(
                ["actions", "body"],
                information: ServerInformation(
                    name: "gnome-shell", vendor: "GNOME", version: "43.9", specificationVersion: "1.2"))
            : Self.dunst
        var machine = Self.linked(capabilities)
        for (id, serverID) in [("a", UInt32(20)), ("b", 21)] {
            let call = try #require(machine.handle(.show(Self.presentation(id))).notifyCall)
            _ = machine.handle(.notifyAnswered(id: id, call: call, Self.reply(serverID)))
        }
        let closing = machine.handle(.close(id: "a"))
        guard case .close(_, let call, serverID: 20)? = closing.first else {
            Issue.record("no close: \(closing)")
            return
        }
        let answered = machine.handle(.closeAnswered(id: "a", call: call))
        #expect(answered.notifies.map(\.replacesID) == (gnome ? [21] : []), "\(answered)")
        // A close by the person too.
        if gnome {
            let again = try #require(answered.notifyCall)
            _ = machine.handle(.notifyAnswered(id: "b", call: again, Self.reply(21)))
            let c = try #require(machine.handle(.show(Self.presentation("c"))).notifyCall)
            _ = machine.handle(.notifyAnswered(id: "c", call: c, Self.reply(22)))
            let dismissed = machine.handle(.signal(.closed(id: 21, reason: .dismissedByUser), sender: Self.server))
            #expect(dismissed.notifies.map(\.replacesID) == [22], "\(dismissed)")
        }
    }

    /// `notify-send -r 41 -t 8 …` in a fresh agent: the toast adopts 41 and its time runs out while the link is made;
    /// it still replaces 41 once (as notify-send's does), and is closed when the server has answered.
    @Test func anAdoptedToastEndedBeforeTheLinkIsReadyIsSentOnceThenClosed() throws {
        var machine = Machine(configuration: Self.configuration)
        _ = machine.handle(.adopt(serverID: 41, toastID: "osd"))
        #expect(
            machine.handle(.show(Self.presentation("osd", remaining: .milliseconds(8)))) == [.connect(generation: 1)])
        #expect(machine.handle(.close(id: "osd", expired: true)).isEmpty, "nothing to close on the server yet")
        #expect(machine.wantedToastIDs.isEmpty, "the center no longer wants it")
        let ready = machine.handle(.linkReady(generation: 1, capabilities: Self.dunst, owner: Self.server))
        #expect(ready.notifies.map(\.replacesID) == [41])
        #expect(ready.notifies.map(\.expireTimeout) == [8])
        let answered = machine.handle(.notifyAnswered(id: "osd", call: try #require(ready.notifyCall), Self.reply(41)))
        #expect(answered.contains { if case .close(id: "osd", _, serverID: 41) = $0 { true } else { false } })
    }

    // MARK: - The update interval (issue 22 §3)

    /// A linked machine with the default update interval (25 ms); `now` is the time of its last event.
    static func pacedMachine(at now: Duration = .seconds(1)) -> Machine {
        var machine = Machine(configuration: PresenterConfiguration(appName: "tests"))
        _ = machine.handle(.show(presentation("warm-up")), now: now)
        let sent = machine.handle(.linkReady(generation: 1, capabilities: dunst, owner: server), now: now)
        _ = machine.handle(.notifyAnswered(id: "warm-up", call: sent.notifyCall!, reply(1)), now: now)
        _ = machine.handle(.close(id: "warm-up"), now: now)
        _ = machine.handle(.closeAnswered(id: "warm-up", call: sent.notifyCall! + 1), now: now)
        return machine
    }

    @Test func updatesOfAToastGoOutAtMostOncePerIntervalAndTheLastAlways() throws {
        var machine = Self.pacedMachine()
        let start = Duration.seconds(1)
        #expect(PresenterConfiguration().minimumUpdateInterval == .milliseconds(25))
        let first = machine.handle(.show(Self.presentation("p", "0 %")), now: start)
        #expect(first.notifies.map(\.summary) == ["0 %"], "the first Notify never waits")
        #expect(machine.waitingUpdate(ofToast: "p") == nil, "no id yet: a first show is waited for")
        _ = machine.handle(.notifyAnswered(id: "p", call: try #require(first.notifyCall), Self.reply(7)), now: start)
        // 10,000 updates in 20 ms, answered at once: none is sent before the interval is up, and one wake-up is asked.
        var actions: [Machine.Action] = []
        for percent in 1...10_000 {
            let now = start + .microseconds(percent * 2)
            actions += machine.handle(.show(Self.presentation("p", "\(percent) %")), now: now)
        }
        #expect(actions == [.wake(at: start + .milliseconds(25))])
        #expect(!machine.isSettled, "an update waits")
        #expect(machine.waitingUpdate(ofToast: "p") == 7, "the notification it will replace")
        #expect(machine.handle(.awaitAccepted(id: "p", waiter: 1), now: start + .milliseconds(20)).isEmpty)
        #expect(
            machine.handle(.tick, now: start + .milliseconds(24)) == [.wake(at: start + .milliseconds(25))],
            "too early: it asks again")
        let due = machine.handle(.tick, now: start + .milliseconds(25))
        #expect(due.notifies.map(\.summary) == ["10000 %"], "the newest content, once")
        #expect(due.notifies.map(\.replacesID) == [7], "in place")
        let answered = machine.handle(
            .notifyAnswered(id: "p", call: try #require(due.notifyCall), Self.reply(7)), now: start + .milliseconds(26))
        #expect(answered == [.resume([1], .success(7))], "whoever waited learns it is on the server")
        #expect(machine.waitingUpdate(ofToast: "p") == nil, "nothing waits")
        #expect(machine.isSettled)
        // Later, after a quiet spell, an update goes out at once.
        let later = machine.handle(.show(Self.presentation("p", "listo")), now: start + .milliseconds(60))
        #expect(later.notifies.map(\.summary) == ["listo"])
    }

    @Test func anUpdateWaitingForItsIntervalIsDroppedByAClose() throws {
        var machine = Self.pacedMachine()
        let start = Duration.seconds(1)
        let first = machine.handle(.show(Self.presentation("p", "1")), now: start)
        _ = machine.handle(.notifyAnswered(id: "p", call: try #require(first.notifyCall), Self.reply(7)), now: start)
        #expect(
            machine.handle(.show(Self.presentation("p", "2")), now: start) == [.wake(at: start + .milliseconds(25))])
        let closed = machine.handle(.close(id: "p"), now: start + .milliseconds(1))
        #expect(closed == [.close(id: "p", call: try #require(first.notifyCall) + 1, serverID: 7)], "closed at once")
        #expect(machine.handle(.tick, now: start + .milliseconds(25)).isEmpty, "the held update is gone")
        _ = machine.handle(
            .closeAnswered(id: "p", call: try #require(first.notifyCall) + 1), now: start + .milliseconds(26))
        #expect(machine.trackedToastIDs.isEmpty)
        #expect(machine.isSettled)
    }

    @Test func eachToastHasItsOwnIntervalAndANewServerGetsItsToastAtOnce() throws {
        var machine = Self.pacedMachine()
        let start = Duration.seconds(1)
        let a = machine.handle(.show(Self.presentation("a", "a1")), now: start)
        _ = machine.handle(.notifyAnswered(id: "a", call: try #require(a.notifyCall), Self.reply(7)), now: start)
        #expect(machine.handle(.show(Self.presentation("a", "a2")), now: start + .milliseconds(5)).count == 1)
        let b = machine.handle(.show(Self.presentation("b", "b1")), now: start + .milliseconds(10))
        #expect(b.notifies.map(\.summary) == ["b1"], "another toast is not held by the first one's interval")
        _ = machine.handle(
            .notifyAnswered(id: "b", call: try #require(b.notifyCall), Self.reply(8)), now: start + .milliseconds(10))
        #expect(
            machine.handle(.show(Self.presentation("b", "b2")), now: start + .milliseconds(12)) == [
                .wake(at: start + .milliseconds(35))
            ])
        // The first wake-up sends a's update and asks again for b's.
        let woke = machine.handle(.tick, now: start + .milliseconds(25))
        #expect(woke.notifies.map(\.summary) == ["a2"])
        #expect(woke.last == .wake(at: start + .milliseconds(35)))
        // The server restarts: its notifications are gone, so b's content goes to the new one without waiting.
        _ = machine.handle(.ownerChanged(nil), now: start + .milliseconds(30))
        _ = machine.handle(.ownerChanged(":1.9"), now: start + .milliseconds(30))
        let reshown = machine.handle(.show(Self.presentation("b", "b2")), now: start + .milliseconds(31))
        #expect(reshown == [.connect(generation: 2)], "the center's show-again goes to the new server at once")
        #expect(machine.handle(.tick, now: start + .milliseconds(35)).isEmpty, "nothing waits for an interval")
    }

    @Test func anUpdateWaitingForItsIntervalFailsForNowWhenTheServerLeavesAndGoesToTheNextAtOnce() throws {
        for next in [nil, ":1.9"] as [String?] {
            var machine = Self.pacedMachine()
            let start = Duration.seconds(1)
            let first = machine.handle(.show(Self.presentation("p", "1")), now: start)
            _ = machine.handle(
                .notifyAnswered(id: "p", call: try #require(first.notifyCall), Self.reply(7)), now: start)
            _ = machine.handle(.show(Self.presentation("p", "2")), now: start + .milliseconds(5))
            #expect(machine.handle(.awaitAccepted(id: "p", waiter: 1), now: start + .milliseconds(5)).isEmpty)
            let changed = machine.handle(.ownerChanged(next), now: start + .milliseconds(10))
            if next == nil {
                let left = PresentationError(.noServer, reason: Machine.serverLeft)
                #expect(
                    changed == [
                        .report(.failed(toastID: "p", reason: Machine.serverLeft, recoverable: true)),
                        .resume([1], .failure(left)),
                        .report(.failed(toastID: nil, reason: Machine.serverLeft, recoverable: true)),
                    ], "never left waiting for a wake-up that sends nothing")
                #expect(machine.isSettled)
            } else {
                #expect(changed == [.connect(generation: 2), .report(.reshowRequested)])
                let sent = machine.handle(
                    .linkReady(generation: 2, capabilities: Self.dunst, owner: next), now: start + .milliseconds(11))
                #expect(sent.notifies.map(\.summary) == ["2"], "the new server gets it at once")
                #expect(sent.notifies.map(\.replacesID) == [0], "as a new notification")
            }
        }
    }

    @Test func whoWaitsForAToastEndedWhileTheLinkWasMadeLearnsWhenTheServerLeaves() throws {
        var machine = Machine(configuration: Self.configuration)
        _ = machine.handle(.ownerChanged(Self.server))
        #expect(machine.handle(.show(Self.presentation("u"))) == [.connect(generation: 1)])
        #expect(machine.handle(.awaitAccepted(id: "u", waiter: 1)).isEmpty)
        #expect(machine.handle(.close(id: "u")).isEmpty, "its waiter waits for the link's outcome")
        #expect(machine.handle(.awaitAccepted(id: "u", waiter: 2)).isEmpty, "and so does one who comes after")
        let left = machine.handle(.ownerChanged(nil))
        #expect(left.contains(.resume([1, 2], .failure(PresentationError(.noServer, reason: Machine.serverLeft)))))
        #expect(machine.trackedToastIDs.isEmpty)
    }

    @Test func aDetachedMachineNeverTakesALateAnswerOfBeforeForOneOfAfter() throws {
        var machine = Self.linked()
        let before = try #require(machine.handle(.show(Self.presentation("x"))).notifyCall)
        _ = machine.handle(.reset)
        #expect(machine.handle(.show(Self.presentation("x"))) == [.connect(generation: 2)], "a new link, numbered on")
        #expect(machine.handle(.linkReady(generation: 1, capabilities: Self.dunst, owner: Self.server)).isEmpty)
        let after = try #require(
            machine.handle(.linkReady(generation: 2, capabilities: Self.dunst, owner: Self.server)).notifyCall)
        #expect(after != before)
        let late = machine.handle(
            .notifyAnswered(id: "x", call: before, .failure(PresentationError(.busUnavailable, reason: "gone"))))
        #expect(late.isEmpty, "the old connection's failure is not the new toast's")
        #expect(machine.notifyCallsInFlight == 1)
    }

    // MARK: - Every event in every state

    /// The states one toast can be in, each reached from a linked machine.
    enum ToastState: String, CaseIterable {
        case unknown, waitingForLink, notifyOnItsWay, onServer, closeOnItsWay
    }

    static func machine(in state: ToastState) -> (Machine, call: UInt64) {
        var machine = state == .waitingForLink ? Machine(configuration: Self.configuration) : linked()
        var call: UInt64 = 0
        switch state {
        case .unknown: break
        case .waitingForLink: _ = machine.handle(.show(presentation("x")))
        case .notifyOnItsWay: call = machine.handle(.show(presentation("x"))).notifyCall ?? 0
        case .onServer, .closeOnItsWay:
            call = machine.handle(.show(presentation("x"))).notifyCall ?? 0
            _ = machine.handle(.notifyAnswered(id: "x", call: call, reply(30)))
            if state == .closeOnItsWay {
                _ = machine.handle(.close(id: "x"))
                call += 1
            }
        }
        return (machine, call)
    }

    static func events(call: UInt64) -> [(String, Machine.Event)] {
        [
            ("show", .show(presentation("x", "new"))),
            ("timer", .timer(id: "x", remaining: .seconds(1), isRunning: false)),
            ("close", .close(id: "x")), ("adopt", .adopt(serverID: 31, toastID: "x")),
            ("await", .awaitAccepted(id: "x", waiter: 99)),
            ("linkReady", .linkReady(generation: 1, capabilities: dunst, owner: server)),
            ("linkFailed", .linkFailed(generation: 1, PresentationError(.noServer, reason: "none"))),
            ("notifyOK", .notifyAnswered(id: "x", call: call, reply(30))),
            ("notifyError", .notifyAnswered(id: "x", call: call, .failure(.init(.refused, reason: "no")))),
            ("closeAnswered", .closeAnswered(id: "x", call: call)),
            ("action", .signal(.actionInvoked(id: 30, key: "default"), sender: server)),
            ("closed", .signal(.closed(id: 30, reason: .expired), sender: server)),
            ("ownerChanged", .ownerChanged(":1.77")), ("ownerGone", .ownerChanged(nil)),
            ("lost", .connectionLost(.init(.busUnavailable, reason: "lost"))), ("reset", .reset), ("tick", .tick),
        ]
    }

    @Test(arguments: ToastState.allCases)
    func everyEventInEveryStateKeepsTheRules(state: ToastState) throws {
        for (name, event) in Self.events(call: Self.machine(in: state).call) {
            var (machine, call) = Self.machine(in: state)
            let inFlightBefore = machine.notifyCallsInFlight
            let actions = machine.handle(event)
            let notifies = actions.notifies.count
            // At most one call per toast on its way: a new Notify only when none was.
            #expect(notifies <= 1, "\(state) + \(name): \(actions)")
            if state == .notifyOnItsWay || state == .closeOnItsWay, name != "notifyOK", name != "notifyError",
                name != "closeAnswered", name != "reset"
            {
                #expect(notifies == 0, "\(state) + \(name) sent while a call was on its way: \(actions)")
            }
            #expect(machine.notifyCallsInFlight >= 0 && machine.notifyCallsInFlight <= inFlightBefore + 1)
            // Every waiter is resumed exactly once, now or after the answers that follow (the state's own call on
            // its way included: answered twice when the event answered it already, which must change nothing).
            var pending = actions
            switch state {
            case .waitingForLink: pending.append(.connect(generation: 1))
            case .notifyOnItsWay: pending.append(.notify(id: "x", call: call, NotifyCall(appName: "", summary: "")))
            case .closeOnItsWay: pending.append(.close(id: "x", call: call, serverID: 30))
            case .unknown, .onServer: break
            }
            var resumed = actions.resumed
            for _ in 0..<4 {
                var next: [Machine.Action] = []
                for action in pending {
                    switch action {
                    case .notify(let id, let call, let arguments):
                        next += machine.handle(
                            .notifyAnswered(
                                id: id, call: call, Self.reply(arguments.replacesID == 0 ? 40 : arguments.replacesID)))
                    case .close(let id, let call, _): next += machine.handle(.closeAnswered(id: id, call: call))
                    case .connect(let generation):
                        next += machine.handle(
                            .linkReady(generation: generation, capabilities: Self.dunst, owner: Self.server))
                    default: break
                    }
                }
                resumed += next.resumed
                pending = next
            }
            let waiting = machine.handle(.awaitAccepted(id: "x", waiter: 1000))
            #expect(waiting.resumed == [1000], "\(state) + \(name): settles after its answers, \(waiting)")
            if name == "await" { #expect(resumed.filter { $0 == 99 }.count == 1, "\(state) + await: \(resumed)") }
        }
    }
}

extension [DesktopPresenterMachine.Action] {
    var notifies: [NotifyCall] {
        compactMap { if case .notify(_, _, let call) = $0 { call } else { nil } }
    }
    var calls: [UInt64] {
        compactMap { if case .notify(_, let call, _) = $0 { call } else { nil } }
    }
    var notifyCall: UInt64? { calls.first }
    var reports: [ToastPresenterReport] {
        compactMap { if case .report(let report) = $0 { report } else { nil } }
    }
    var resumed: [DesktopPresenterMachine.WaiterID] {
        flatMap { action -> [DesktopPresenterMachine.WaiterID] in
            if case .resume(let ids, _) = action { return ids }
            return []
        }
    }
}

extension ToastPresenterReport {
    var isRecoverableFailure: Bool? {
        if case .failed(_, _, let recoverable) = self { return recoverable }
        return nil
    }
}
