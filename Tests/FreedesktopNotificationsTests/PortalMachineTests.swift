import DBus
import FreedesktopNotifications
import Testing
import ToastModel

/// The portal presenter's state machine without a bus: events in (with the time), actions out (issue 14).
@Suite struct PortalMachineTests {
    typealias Machine = PortalPresenterMachine
    static let portal = ":1.4"
    static let settle = Duration.milliseconds(500)

    static func presentation(
        _ id: String, _ title: String = "T", actions: [PresentedAction] = [], icon: ToastIcon? = nil
    ) -> ToastPresentation {
        let toast = PresentedToast(
            id: id, status: .normal, title: title, icon: icon, actions: actions, remaining: .seconds(4),
            isTimerRunning: true)
        return ToastPresentation(toast: toast, request: ThemedToastStyle(theme: .standard).makeRequest(for: toast))
    }

    static func show(_ id: String, _ title: String = "T", actions: [PresentedAction] = []) -> Machine.Event {
        .show(presentation(id, title, actions: actions), iconFile: nil)
    }

    static let tap = PresentedAction(key: "default", actionID: "open", title: "Abrir", role: .tap)
    static let archive = PresentedAction(key: "archive", actionID: "archive", title: "Archivar", role: .leading)

    /// A machine whose link is up (generation 1, version `version`), owned by `portal`, at time 0.
    static func linked(version: UInt32 = 1) -> Machine {
        var machine = Machine(
            configuration: PresenterConfiguration(appName: "tests"), idPrefix: "p", settleTime: settle)
        #expect(machine.handle(show("warm-up"), now: .zero) == [.connect(generation: 1)])
        let sent = machine.handle(.linkReady(generation: 1, version: version, owner: portal), now: .zero)
        #expect(sent.adds.map(\.portalID) == ["p1"])
        _ = machine.handle(.addAnswered(id: "warm-up", call: 1, .success(portal)), now: .zero)
        _ = machine.handle(.close(id: "warm-up"), now: .zero)
        #expect(machine.trackedToastIDs.isEmpty)
        #expect(machine.handle(.tick, now: settle) == [.remove(portalID: "p1")])
        _ = machine.handle(.removeAnswered(portalID: "p1"), now: settle)
        return machine
    }

    static let t0 = Duration.seconds(1)

    /// A toast ended while the link was made keeps its waiters until the link's outcome is known; a portal that
    /// leaves meanwhile is that outcome.
    @Test func whoWaitsForAToastEndedWhileTheLinkWasMadeLearnsWhatBecameOfIt() throws {
        for leaves in [false, true] {
            var machine = Machine(configuration: .init(appName: "tests"), idPrefix: "p", settleTime: Self.settle)
            _ = machine.handle(.ownerChanged(Self.portal), now: Self.t0)
            #expect(machine.handle(Self.show("u"), now: Self.t0) == [.connect(generation: 1)])
            #expect(machine.handle(.awaitAccepted(id: "u", waiter: 1), now: Self.t0).isEmpty)
            #expect(machine.handle(.close(id: "u"), now: Self.t0).isEmpty)
            let outcome: [Machine.Action]
            let error: PresentationError
            if leaves {
                outcome = machine.handle(.ownerChanged(nil), now: Self.t0)
                error = PresentationError(.noServer, reason: Machine.portalLeft)
            } else {
                error = PresentationError(.noServer, reason: "no portal")
                outcome = machine.handle(.linkFailed(generation: 1, error), now: Self.t0)
            }
            #expect(outcome.contains(.resume([1], .failure(error))), "\(outcome)")
            #expect(machine.trackedToastIDs.isEmpty)
            #expect(machine.isSettled)
        }
    }

    @Test func aDetachedMachineNeverAddsAnIDTwice() throws {
        var machine = Self.linked()
        _ = machine.handle(.reset, now: Self.t0)
        #expect(machine.handle(Self.show("a"), now: Self.t0) == [.connect(generation: 2)])
        let sent = machine.handle(.linkReady(generation: 2, version: 1, owner: Self.portal), now: Self.t0)
        #expect(sent.adds.map(\.portalID) == ["p2"], "p1 was added (and removed) before the detach")
    }

    // MARK: - Adding and replacing

    @Test func theFirstToastConnectsThenAddsUnderAFreshID() throws {
        var machine = Machine(
            configuration: .init(appName: "tests"), idPrefix: "toastkit-ab12-", settleTime: Self.settle)
        #expect(machine.handle(Self.show("a", "Hola"), now: .zero) == [.connect(generation: 1)])
        #expect(machine.handle(Self.show("b"), now: .zero).isEmpty, "one link for both")
        let sent = machine.handle(.linkReady(generation: 1, version: 1, owner: Self.portal), now: .zero)
        #expect(sent.adds.map(\.portalID) == ["toastkit-ab12-1", "toastkit-ab12-2"])
        #expect(sent.adds.first?.notification.fields["title"] == .string("Hola"))
        #expect(machine.handle(.awaitAccepted(id: "a", waiter: 7), now: .zero).isEmpty, "waits for the answer")
        let answered = machine.handle(.addAnswered(id: "a", call: sent.adds[0].call, .success(Self.portal)), now: .zero)
        #expect(answered == [.resume([7], .success("toastkit-ab12-1"))])
        #expect(machine.portalID(ofToast: "a") == "toastkit-ab12-1")
    }

    @Test func replacingAddsANewIDAndRemovesTheOldOneNeverReaddingAnID() throws {
        var machine = Self.linked()
        let first = try #require(machine.handle(Self.show("sync", "Sincronizando…"), now: Self.t0).adds.first)
        _ = machine.handle(.addAnswered(id: "sync", call: first.call, .success(Self.portal)), now: Self.t0)
        let later = Self.t0 + .seconds(2)
        let replaced = machine.handle(Self.show("sync", "Sincronizado"), now: later)
        #expect(replaced.adds.map(\.portalID) == ["p3"])
        #expect(replaced.adds.first?.notification.fields["title"] == .string("Sincronizado"))
        #expect(replaced.removes == [first.portalID], "the old id goes")
        // First: GNOME Shell 43 leaves the new one in its queue when the old banner is removed after it arrived.
        #expect(replaced.firstIndex { if case .remove = $0 { true } else { false } }! == 0, "\(replaced)")
    }

    @Test func newContentForAnIDThatHasNotSettledWaitsAndTheLatestWins() throws {
        var machine = Self.linked()
        let first = try #require(machine.handle(Self.show("p", "0 %"), now: Self.t0).adds.first)
        _ = machine.handle(.addAnswered(id: "p", call: first.call, .success(Self.portal)), now: Self.t0)
        // The portal answered before its backend has the notification: removing p2 now could leave it on screen.
        #expect(
            machine.handle(Self.show("p", "1 %"), now: Self.t0 + .milliseconds(10)) == [
                .wake(at: Self.t0 + Self.settle)
            ])
        for percent in 2...100 {
            #expect(machine.handle(Self.show("p", "\(percent) %"), now: Self.t0 + .milliseconds(20)).isEmpty)
        }
        #expect(machine.handle(.tick, now: Self.t0 + .milliseconds(499)).adds.isEmpty, "not yet")
        let next = machine.handle(.tick, now: Self.t0 + Self.settle)
        #expect(next.adds.map(\.notification.fields["title"]) == [.string("100 %")], "only the newest goes out")
        #expect(next.removes == [first.portalID])
    }

    @Test func updatesWhileAnAddIsOnItsWayCollapseIntoTheNewest() throws {
        var machine = Self.linked()
        let first = try #require(machine.handle(Self.show("p", "one"), now: Self.t0).adds.first)
        #expect(machine.handle(Self.show("p", "two"), now: Self.t0).isEmpty)
        #expect(machine.handle(Self.show("p", "three"), now: Self.t0).isEmpty)
        #expect(machine.addCallsInFlight == 1)
        let answered = machine.handle(.addAnswered(id: "p", call: first.call, .success(Self.portal)), now: Self.t0)
        #expect(answered == [.wake(at: Self.t0 + Self.settle)])
        let next = machine.handle(.tick, now: Self.t0 + Self.settle)
        #expect(next.adds.map(\.notification.fields["title"]) == [.string("three")])
    }

    @Test func distinctToastsAreNeverCoalescedOrHeldForEachOther() throws {
        var machine = Self.linked()
        var ids: [String] = []
        for index in 0..<50 { ids += machine.handle(Self.show("t\(index)"), now: Self.t0).adds.map(\.portalID) }
        #expect(ids.count == 50)
        #expect(Set(ids).count == 50)
        #expect(machine.addCallsInFlight == 50)
    }

    // MARK: - Closing

    @Test func aCloseOfASettledToastRemovesAtOnceAndAYoungOneWhenItSettles() throws {
        var machine = Self.linked()
        let old = try #require(machine.handle(Self.show("a"), now: Self.t0).adds.first)
        _ = machine.handle(.addAnswered(id: "a", call: old.call, .success(Self.portal)), now: Self.t0)
        #expect(machine.handle(.close(id: "a"), now: Self.t0 + .seconds(4)) == [.remove(portalID: old.portalID)])
        #expect(machine.trackedToastIDs.isEmpty)

        let t1 = Self.t0 + .seconds(5)
        let young = try #require(machine.handle(Self.show("b"), now: t1).adds.first)
        _ = machine.handle(.addAnswered(id: "b", call: young.call, .success(Self.portal)), now: t1)
        #expect(machine.handle(.close(id: "b"), now: t1 + .milliseconds(100)) == [.wake(at: t1 + Self.settle)])
        #expect(machine.trackedToastIDs.isEmpty, "closed for the center at once")
        #expect(machine.retiringPortalIDs == [young.portalID])
        #expect(machine.handle(.tick, now: t1 + Self.settle) == [.remove(portalID: young.portalID)])
        #expect(machine.retiringPortalIDs.isEmpty)
    }

    @Test func aCloseWhileTheAddIsOnItsWayRemovesOnceAnsweredAndSettled() throws {
        var machine = Self.linked()
        let add = try #require(machine.handle(Self.show("a"), now: Self.t0).adds.first)
        #expect(machine.handle(.close(id: "a"), now: Self.t0).isEmpty, "waits for the answer")
        #expect(machine.handle(.awaitAccepted(id: "a", waiter: 1), now: Self.t0).isEmpty)
        let answered = machine.handle(.addAnswered(id: "a", call: add.call, .success(Self.portal)), now: Self.t0)
        #expect(answered == [.wake(at: Self.t0 + Self.settle), .resume([1], .failure(.notPresented("a")))])
        #expect(machine.handle(.tick, now: Self.t0 + Self.settle) == [.remove(portalID: add.portalID)])
    }

    @Test func aRefusedAddFailsTheToastForGoodAndRemovesWhatItHad() throws {
        var machine = Self.linked()
        let add = try #require(machine.handle(Self.show("a"), now: Self.t0).adds.first)
        _ = machine.handle(.addAnswered(id: "a", call: add.call, .success(Self.portal)), now: Self.t0)
        let update = try #require(machine.handle(Self.show("a", "new"), now: Self.t0 + .seconds(1)).adds.first)
        let refused = PresentationError(.refused, reason: "invalid notification: markup-body not valid key")
        let failed = machine.handle(
            .addAnswered(id: "a", call: update.call, .failure(refused)), now: Self.t0 + .seconds(1))
        #expect(failed == [.report(.failed(toastID: "a", reason: refused.reason, recoverable: false))])
        #expect(machine.trackedToastIDs.isEmpty)
        #expect(
            machine.handle(.awaitAccepted(id: "a", waiter: 2), now: Self.t0 + .seconds(1)) == [
                .resume([2], .failure(refused))
            ])
    }

    @Test func invalidContentFailsThatToastAndRemovesWhatItHadOnThePortal() throws {
        var machine = Self.linked()
        let add = try #require(machine.handle(Self.show("a", "ok"), now: Self.t0).adds.first)
        _ = machine.handle(.addAnswered(id: "a", call: add.call, .success(Self.portal)), now: Self.t0)
        let bad = machine.handle(Self.show("a", "nul\u{0}byte"), now: Self.t0 + .seconds(1))
        #expect(bad.reports.map(\.isRecoverableFailure) == [false])
        #expect(bad.removes == [add.portalID])
        #expect(bad.adds.isEmpty)
    }

    // MARK: - Actions

    @Test func actionsComeBackAsThePresenterKeysOnlyFromThePortalForTheCurrentID() throws {
        var machine = Self.linked()
        let add = try #require(
            machine.handle(Self.show("ana", actions: [Self.tap, Self.archive]), now: Self.t0).adds.first)
        #expect(add.notification.fields["default-action"] == .string("default"))
        _ = machine.handle(.addAnswered(id: "ana", call: add.call, .success(Self.portal)), now: Self.t0)
        func invoke(_ id: String, _ action: String, from sender: String?, _ parameter: [DBusValue] = [])
            -> [Machine.Action]
        {
            machine.handle(
                .actionInvoked(PortalActionInvoked(id: id, action: action, parameter: parameter), sender: sender),
                now: Self.t0)
        }
        #expect(invoke(add.portalID, "archive", from: ":1.66").isEmpty, "a look-alike from another connection")
        #expect(invoke(add.portalID, "archive", from: nil).isEmpty)
        #expect(invoke("someone-elses", "archive", from: Self.portal).isEmpty, "not our id")
        #expect(invoke(add.portalID, "delete", from: Self.portal).isEmpty, "not an action we gave it")
        #expect(
            invoke(add.portalID, "default", from: Self.portal) == [
                .report(.actionInvoked(toastID: "ana", key: "default", activationToken: nil))
            ])
        let platform: DBusValue = .variantDictionary(["activation-token": .string("tok-1")])
        #expect(
            invoke(add.portalID, "archive", from: Self.portal, [platform]) == [
                .report(.actionInvoked(toastID: "ana", key: "archive", activationToken: "tok-1"))
            ])
        // Once replaced, the old notification's actions are not the toast's any more.
        _ = machine.handle(Self.show("ana", "Archivado"), now: Self.t0 + .seconds(1))
        #expect(invoke(add.portalID, "archive", from: Self.portal).isEmpty)
    }

    @Test func actionNamesThePortalCannotCarryAreRenamedAndMappedBack() throws {
        var machine = Self.linked()
        let odd = PresentedAction(key: "app.delete", actionID: "app.delete", title: "Borrar", role: .leading)
        let spaced = PresentedAction(key: "open file", actionID: "open file", title: "Abrir", role: .trailing)
        let add = try #require(machine.handle(Self.show("x", actions: [odd, spaced]), now: Self.t0).adds.first)
        let names = add.notification.fields["buttons"]?.arrayValue?.compactMap {
            $0.variantDictionaryValue?["action"]?.stringValue
        }
        #expect(names == ["toastkit-action-0", "toastkit-action-1"])
        _ = machine.handle(.addAnswered(id: "x", call: add.call, .success(Self.portal)), now: Self.t0)
        let invoked = machine.handle(
            .actionInvoked(PortalActionInvoked(id: add.portalID, action: "toastkit-action-1"), sender: Self.portal),
            now: Self.t0)
        #expect(invoked == [.report(.actionInvoked(toastID: "x", key: "open file", activationToken: nil))])
    }

    @Test func theMachineNeverReportsACloseTheCenterEndsToastsOnItsOwnTime() throws {
        var machine = Self.linked()
        let add = try #require(machine.handle(Self.show("a"), now: Self.t0).adds.first)
        var all = machine.handle(.addAnswered(id: "a", call: add.call, .success(Self.portal)), now: Self.t0)
        all += machine.handle(.tick, now: Self.t0 + .seconds(60))
        #expect(!all.reports.contains { if case .closed = $0 { true } else { false } })
        #expect(machine.wantedToastIDs == ["a"], "still live: nothing says the person closed it")
    }

    // MARK: - Portals and connections

    @Test func theVersionDecidesWhichKeysGoOut() throws {
        var request = Self.presentation("v").request
        request.category = "im.received"
        request.isTransient = true
        let toast = Self.presentation("v").toast
        for version: UInt32 in [1, 2] {
            var machine = Self.linked(version: version)
            let add = try #require(
                machine.handle(
                    .show(ToastPresentation(toast: toast, request: request), iconFile: nil), now: Self.t0
                ).adds.first)
            let keys = Set(add.notification.fields.keys)
            if version == 1 {
                #expect(keys.isSubset(of: ["title", "body", "icon", "priority", "default-action", "buttons"]))
            } else {
                #expect(add.notification.fields["category"] == .string("im.received"))
                #expect(add.notification.fields["display-hint"] == .strings(["transient"]))
            }
        }
    }

    @Test func aNewPortalOwnerIsAskedForItsVersionAndTheToastsAreShownAgain() throws {
        var machine = Self.linked()
        let old = try #require(machine.handle(Self.show("a"), now: Self.t0).adds.first)
        _ = machine.handle(.addAnswered(id: "a", call: old.call, .success(Self.portal)), now: Self.t0)
        let later = Self.t0 + .seconds(1)
        #expect(machine.handle(.ownerChanged(":1.9"), now: later) == [.report(.reshowRequested)])
        #expect(machine.version == nil, "read again for the new portal")
        #expect(machine.handle(Self.show("a"), now: later) == [.connect(generation: 2)])
        let sent = machine.handle(.linkReady(generation: 2, version: 2, owner: ":1.9"), now: later)
        #expect(sent.adds.count == 1)
        #expect(sent.removes == [old.portalID], "the old portal's backend may still show it")
        // Only the new owner may speak now.
        let new = try #require(sent.adds.first)
        _ = machine.handle(.addAnswered(id: "a", call: new.call, .success(":1.9")), now: later)
        #expect(
            machine.handle(
                .actionInvoked(PortalActionInvoked(id: new.portalID, action: "default"), sender: Self.portal),
                now: later
            ).isEmpty)
        #expect(
            machine.handle(.ownerChanged(nil), now: later).reports.map(\.isRecoverableFailure) == [true],
            "no portal: the center keeps the toasts until one starts")
    }

    @Test func anAnswerFromAReplacedPortalIsRemovedNotShown() throws {
        var machine = Self.linked()
        let add = try #require(machine.handle(Self.show("a"), now: Self.t0).adds.first)
        _ = machine.handle(.ownerChanged(":1.9"), now: Self.t0)
        let answered = machine.handle(.addAnswered(id: "a", call: add.call, .success(Self.portal)), now: Self.t0)
        #expect(answered == [.wake(at: Self.t0 + Self.settle)])
        #expect(machine.portalID(ofToast: "a") == nil)
        #expect(machine.handle(.tick, now: Self.t0 + Self.settle).removes == [add.portalID])
    }

    @Test func staleLinkAnswersAreIgnoredAndAFailedLinkFailsTheWaitingToasts() throws {
        var machine = Machine(configuration: .init(appName: "tests"), idPrefix: "p", settleTime: Self.settle)
        _ = machine.handle(Self.show("a"), now: .zero)
        _ = machine.handle(.awaitAccepted(id: "a", waiter: 1), now: .zero)
        #expect(machine.handle(.linkReady(generation: 9, version: 1, owner: nil), now: .zero).isEmpty)
        let noPortal = PresentationError(.noServer, reason: "no desktop portal is running")
        let failed = machine.handle(.linkFailed(generation: 1, noPortal), now: .zero)
        #expect(failed.reports == [.failed(toastID: "a", reason: noPortal.reason, recoverable: true)])
        #expect(failed.contains(.resume([1], .failure(noPortal))))
        #expect(machine.trackedToastIDs == ["a"], "kept: a portal may come")
        #expect(machine.handle(Self.show("a"), now: .zero) == [.connect(generation: 2)])
    }

    @Test func aLostConnectionEndsEveryToastOnceAndForgetsWhatWasToBeRemoved() throws {
        var machine = Self.linked()
        let a = try #require(machine.handle(Self.show("a"), now: Self.t0).adds.first)
        _ = machine.handle(.addAnswered(id: "a", call: a.call, .success(Self.portal)), now: Self.t0)
        _ = machine.handle(Self.show("b"), now: Self.t0)
        _ = machine.handle(.close(id: "a"), now: Self.t0)
        let lost = PresentationError(.busUnavailable, reason: "the session bus connection was lost")
        let out = machine.handle(.connectionLost(lost), now: Self.t0)
        #expect(out.reports == [.failed(toastID: nil, reason: lost.reason, recoverable: false)])
        #expect(machine.retiringPortalIDs.isEmpty, "no connection to remove it on")
        #expect(machine.handle(.tick, now: Self.t0 + .seconds(1)).isEmpty)
        #expect(machine.handle(Self.show("c"), now: Self.t0 + .seconds(1)) == [.connect(generation: 2)])
    }

    @Test func adoptedIDsAreRemovedByTheNextContentAndTheScreenSaverPauses() throws {
        var machine = Self.linked()
        _ = machine.handle(.adopt(portalID: "from-an-earlier-run", toastID: "sync"), now: Self.t0)
        let sent = machine.handle(Self.show("sync"), now: Self.t0)
        #expect(sent.adds.count == 1)
        #expect(sent.removes == ["from-an-earlier-run"])
        #expect(machine.handle(.screenSaverChanged(active: true), now: Self.t0) == [.report(.pauseRequested)])
        #expect(machine.handle(.screenSaverChanged(active: false), now: Self.t0) == [.report(.resumeRequested)])
    }

    @Test func settledMeansEveryCallAnsweredAndEveryHeldRemovalSent() throws {
        var machine = Self.linked()
        #expect(machine.handle(.awaitSettled(waiter: 1), now: Self.t0) == [.resume([1], .success(""))])
        let add = try #require(machine.handle(Self.show("a"), now: Self.t0).adds.first)
        #expect(machine.handle(.awaitSettled(waiter: 2), now: Self.t0).isEmpty, "an add on its way")
        #expect(
            machine.handle(.addAnswered(id: "a", call: add.call, .success(Self.portal)), now: Self.t0) == [
                .resume([2], .success(""))
            ])
        #expect(machine.handle(.close(id: "a"), now: Self.t0) == [.wake(at: Self.t0 + Self.settle)])
        #expect(machine.handle(.awaitSettled(waiter: 3), now: Self.t0).isEmpty, "a removal held until the id settles")
        #expect(machine.handle(.tick, now: Self.t0 + Self.settle) == [.remove(portalID: add.portalID)])
        #expect(
            machine.handle(.removeAnswered(portalID: add.portalID), now: Self.t0 + Self.settle) == [
                .resume([3], .success(""))
            ], "settled once the held removal is sent and answered")
    }

    @Test func resetResumesWaitersAndForgetsEverything() throws {
        var machine = Self.linked()
        let add = try #require(machine.handle(Self.show("a"), now: Self.t0).adds.first)
        _ = machine.handle(.awaitAccepted(id: "a", waiter: 4), now: Self.t0)
        #expect(machine.handle(.reset, now: Self.t0) == [.resume([4], .failure(.notPresented("(detached)")))])
        #expect(machine.handle(.addAnswered(id: "a", call: add.call, .success(Self.portal)), now: Self.t0).isEmpty)
        #expect(machine.trackedToastIDs.isEmpty)
        #expect(machine.handle(Self.show("b"), now: Self.t0) == [.connect(generation: 2)], "a new link, numbered on")
    }

    // MARK: - Every event in every state

    /// The states one toast can be in, each reached from a linked machine at time `t0`.
    enum ToastState: String, CaseIterable {
        case unknown, waitingForLink, addOnItsWay, addOnItsWayWithNewContent, shownYoung, shownSettled
        case newContentWaitingToSettle, closedWithAddOnItsWay, closedYoung
    }

    static func machine(in state: ToastState) -> (Machine, call: UInt64, portalID: String?) {
        var machine =
            state == .waitingForLink
            ? Machine(configuration: .init(appName: "tests"), idPrefix: "p", settleTime: settle) : linked()
        var call: UInt64 = 0
        var portalID: String?
        switch state {
        case .unknown: break
        case .waitingForLink: _ = machine.handle(show("x"), now: t0)
        default:
            let add = machine.handle(show("x", actions: [tap]), now: t0).adds.first!
            (call, portalID) = (add.call, add.portalID)
            switch state {
            case .addOnItsWayWithNewContent: _ = machine.handle(show("x", "new"), now: t0)
            case .closedWithAddOnItsWay: _ = machine.handle(.close(id: "x"), now: t0)
            case .shownYoung, .shownSettled, .newContentWaitingToSettle, .closedYoung:
                _ = machine.handle(.addAnswered(id: "x", call: call, .success(portal)), now: t0)
                if state == .newContentWaitingToSettle { _ = machine.handle(show("x", "new"), now: t0) }
                if state == .closedYoung { _ = machine.handle(.close(id: "x"), now: t0) }
            default: break
            }
        }
        return (machine, call, portalID)
    }

    static func events(call: UInt64, portalID: String?) -> [(String, Machine.Event)] {
        [
            ("removeAnswered", .removeAnswered(portalID: portalID ?? "p2")),
            ("awaitSettled", .awaitSettled(waiter: 98)),
            ("show", show("x", "newest")), ("close", .close(id: "x")),
            ("adopt", .adopt(portalID: "adopted", toastID: "x")), ("await", .awaitAccepted(id: "x", waiter: 99)),
            ("linkReady", .linkReady(generation: 1, version: 1, owner: portal)),
            ("linkFailed", .linkFailed(generation: 1, PresentationError(.noServer, reason: "none"))),
            ("addOK", .addAnswered(id: "x", call: call, .success(portal))),
            ("addError", .addAnswered(id: "x", call: call, .failure(.init(.refused, reason: "no")))),
            ("action", .actionInvoked(PortalActionInvoked(id: portalID ?? "p2", action: "default"), sender: portal)),
            ("ownerChanged", .ownerChanged(":1.77")), ("ownerGone", .ownerChanged(nil)),
            ("screenSaver", .screenSaverChanged(active: true)), ("tick", .tick),
            ("lost", .connectionLost(.init(.busUnavailable, reason: "lost"))), ("reset", .reset),
        ]
    }

    @Test(arguments: ToastState.allCases)
    func everyEventInEveryStateKeepsTheRules(state: ToastState) throws {
        let (_, stateCall, statePortalID) = Self.machine(in: state)
        for (name, event) in Self.events(call: stateCall, portalID: statePortalID) {
            var (machine, _, _) = Self.machine(in: state)
            var portal = SimulatedPortal(settle: Self.settle)
            portal.adopt(statePortalID, call: stateCall, state: state, at: Self.t0)
            // What the event itself tells the portal side: an answer, or an id adopted from an earlier run.
            switch name {
            case "addOK", "addError":
                if let index = portal.unanswered.firstIndex(where: { $0.call == stateCall }) {
                    let call = portal.unanswered.remove(at: index)
                    if name == "addOK" {
                        portal.answeredAt[call.portalID] = Self.t0 + .milliseconds(100)
                    } else {
                        portal.live.remove(call.portalID)
                    }
                }
            case "adopt":
                portal.live.insert("adopted")
                portal.answeredAt["adopted"] = .zero
            default: break
            }
            let first = machine.handle(event, now: Self.t0 + .milliseconds(100))
            try portal.carry(first, at: Self.t0 + .milliseconds(100), "\(state) + \(name)")
            // Only actions for a toast shown now (or being added) with a name it was given.
            for report in first.reports {
                if case .closed = report { Issue.record("\(state) + \(name): the portal never reports a close") }
                if case .actionInvoked(_, let key, _) = report {
                    #expect(state != .unknown && state != .waitingForLink && key == "default", "\(state) + \(name)")
                    #expect(state != .closedYoung && state != .closedWithAddOnItsWay, "\(state) + \(name): closed")
                }
            }
            // Answer everything and let time pass: the machine settles with nothing left behind.
            try portal.run(&machine, from: Self.t0 + .milliseconds(100), "\(state) + \(name)")
            let waiting = machine.handle(.awaitAccepted(id: "x", waiter: 1000), now: portal.now)
            #expect(waiting.resumed == [1000], "\(state) + \(name): settles after its answers, \(waiting)")
            // A lost connection or a detached presenter leaves what was on the portal there: nothing to send it on.
            guard name != "lost", name != "reset" else { continue }
            let wanted = machine.wantedToastIDs.contains("x")
            // An id adopted for a toast that is not shown stays until the toast is shown: it was not ours to remove.
            if !wanted { portal.live.remove("adopted") }
            #expect(
                portal.live.count == (wanted && machine.portalID(ofToast: "x") != nil ? 1 : 0),
                "\(state) + \(name): on the portal \(portal.live), wanted \(wanted)")
            if wanted, let id = machine.portalID(ofToast: "x") { #expect(portal.live == [id], "\(state) + \(name)") }
            #expect(machine.retiringPortalIDs.isEmpty)
            #expect(machine.isSettled, "\(state) + \(name)")
        }
    }
}

/// A portal that answers every add, checks the presenter's promises to it and keeps what is on it.
struct SimulatedPortal {
    let settle: Duration
    var now = Duration.zero
    /// Ids added and not removed.
    var live: Set<String> = []
    /// Every id ever added (none may come twice).
    var everAdded: Set<String> = []
    /// When each id's add was answered (a removal must not come earlier than `settle` after it).
    var answeredAt: [String: Duration] = [:]
    var unanswered: [(id: String, call: UInt64, portalID: String)] = []
    var removesToAnswer: [String] = []
    var links: [UInt64] = []
    var wakes: [Duration] = []

    init(settle: Duration) { self.settle = settle }

    /// Takes over what a state built before the simulation started left on the portal.
    mutating func adopt(
        _ portalID: String?, call: UInt64, state: PortalMachineTests.ToastState, at time: Duration
    ) {
        if state == .waitingForLink {
            links.append(1)
        } else {
            everAdded.insert("p1")  // the warm-up toast
        }
        guard let portalID else { return }
        everAdded.insert(portalID)
        live.insert(portalID)
        switch state {
        case .addOnItsWay, .addOnItsWayWithNewContent, .closedWithAddOnItsWay:
            unanswered.append(("x", call, portalID))
        default:
            answeredAt[portalID] = time
            if state == .closedYoung || state == .newContentWaitingToSettle { wakes.append(time + settle) }
        }
    }

    mutating func carry(_ actions: [PortalPresenterMachine.Action], at time: Duration, _ context: String) throws {
        now = max(now, time)
        for action in actions {
            switch action {
            case .add(let id, let call, let portalID, _):
                #expect(everAdded.insert(portalID).inserted, "\(context): \(portalID) added twice")
                live.insert(portalID)
                unanswered.append((id, call, portalID))
            case .remove(let portalID):
                if let answered = answeredAt[portalID] {
                    #expect(now >= answered + settle, "\(context): \(portalID) removed before it settled")
                } else if portalID != "adopted" {
                    Issue.record("\(context): \(portalID) removed before its add was answered")
                }
                live.remove(portalID)
                removesToAnswer.append(portalID)
            case .connect(let generation): links.append(generation)
            case .wake(let at): wakes.append(at)
            case .report, .resume, .playSound: break
            }
        }
    }

    /// Answers everything and fires every wake until nothing is left to do.
    mutating func run(_ machine: inout PortalPresenterMachine, from time: Duration, _ context: String) throws {
        now = max(now, time)
        for _ in 0..<20 {
            if let generation = links.first {
                links.removeFirst()
                try carry(
                    machine.handle(.linkReady(generation: generation, version: 1, owner: machine.owner), now: now),
                    at: now, context)
            } else if !unanswered.isEmpty {
                let call = unanswered.removeFirst()
                answeredAt[call.portalID] = now
                try carry(
                    machine.handle(.addAnswered(id: call.id, call: call.call, .success(machine.owner)), now: now),
                    at: now, context)
            } else if !removesToAnswer.isEmpty {
                let portalID = removesToAnswer.removeFirst()
                try carry(machine.handle(.removeAnswered(portalID: portalID), now: now), at: now, context)
            } else if let wake = wakes.min() {
                wakes.removeAll { $0 <= wake }
                now = max(now, wake)
                try carry(machine.handle(.tick, now: now), at: now, context)
            } else {
                return
            }
        }
        Issue.record("\(context): still busy after 20 rounds")
    }
}

extension [PortalPresenterMachine.Action] {
    var adds: [(id: String, call: UInt64, portalID: String, notification: PortalNotification)] {
        compactMap { if case .add(let id, let call, let portalID, let n) = $0 { (id, call, portalID, n) } else { nil } }
    }
    var removes: [String] {
        compactMap { if case .remove(let portalID) = $0 { portalID } else { nil } }
    }
    var reports: [ToastPresenterReport] {
        compactMap { if case .report(let report) = $0 { report } else { nil } }
    }
    var resumed: [PortalPresenterMachine.WaiterID] {
        flatMap { action -> [PortalPresenterMachine.WaiterID] in
            if case .resume(let ids, _) = action { return ids }
            return []
        }
    }
}
