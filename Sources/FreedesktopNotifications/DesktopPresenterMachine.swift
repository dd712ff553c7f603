package import DBus
package import ToastModel

/// The desktop presenter's rules as a plain value: events go in, the actions to carry out come out, in order.
///
/// It keeps, per toast, the latest content the center wants on screen and whether a `Notify` for it is on its way,
/// and, per server, the map between the center's string ids and the server's numbers. Nothing here locks, sleeps,
/// sends or calls out, so every rule is tested without a bus (``DesktopNotificationPresenter`` is the thin shell
/// that feeds it and carries out its actions).
///
/// The rules:
/// - **Latest wins.** At most one `Notify` per toast is on its way, and a toast's updates go out at most once per
///   ``PresenterConfiguration/minimumUpdateInterval`` (what a server can draw). Content and timer changes
///   that arrive meanwhile collapse into the newest, sent when the reply is in and the interval is up; a close that
///   comes after them drops them. So a toast replaced 10,000 times in a loop costs a handful of `Notify` calls, and
///   the last content always reaches the server. A toast's first `Notify` never waits. Distinct toasts are never
///   coalesced and are pipelined.
/// - **The server's clock never contradicts the center's.** `expire_timeout` is the remaining time while the
///   toast's timer runs (``PresentedToast/isTimerRunning``) and 0 (never) otherwise; a timer change is sent as a
///   `Notify` that replaces the notification in place (decision 0004) — at once when the timer runs again, and
///   otherwise only when the server's own timer would close the notification before the center does, in time
///   (``timerNotice`` before; decision 0011). Servers known to ignore `expire_timeout` (GNOME Shell) get no re-send
///   for a timer change alone.
/// - **Only the real server may speak.** Signals count only from the current owner of
///   `org.freedesktop.Notifications` and only for ids this presenter created. A signal for an id not known yet is
///   held while a `Notify` is on its way (the server may act on a toast before its reply reaches us) and replayed
///   when the reply maps the id.
/// - **One close per notification.** When the server closes a toast (the person, expiry, another program), the
///   toast's pending content is dropped: the center decides what comes next. A reply that arrives for a toast
///   closed meanwhile has its notification closed at once.
/// - **Servers come and go.** A change of owner forgets every server id and asks the center to show its toasts
///   again (or reports that the server left); capabilities are read again for the new server. A lost connection
///   fails what is on its way.
package struct DesktopPresenterMachine: Sendable {
    /// Identifies an ``DesktopNotificationPresenter/accepted(_:)`` waiter; the shell keeps the continuations.
    package typealias WaiterID = UInt64

    /// What the server answered to `Notify`.
    package struct NotifyReply: Sendable, Hashable {
        /// The server's id for the notification.
        package var serverID: UInt32
        /// The unique name that answered.
        package var sender: String?

        package init(serverID: UInt32, sender: String?) {
            self.serverID = serverID
            self.sender = sender
        }
    }

    /// Something that happened.
    package enum Event: Sendable {
        /// The center wants this content on screen (a show or an update: the presenter does not care which).
        case show(ToastPresentation)
        /// The toast's timer started or stopped.
        case timer(id: String, remaining: Duration?, isRunning: Bool)
        /// The center wants the toast gone.
        case close(id: String, expired: Bool = false)
        /// Treat `serverID` as the toast's notification (a tool that remembers server ids across runs). With
        /// `onScreen`, the notification already shows what the toast's first show will bring (another process sent
        /// it): that show is not sent again, except to a server that sends its signals only to the connection that
        /// called `Notify` (dunst), which must hear from this one to tell it what becomes of the notification.
        /// With `soundPlayed`, the toast's sound has played already (the process that showed it played it). With
        /// `server` (the unique bus name of the server that gave the id), the id is used only while that server owns
        /// the name: after a restart of the server the id may be another application's notification, and the toast
        /// is shown anew.
        case adopt(
            serverID: UInt32, toastID: String, onScreen: Bool = false, soundPlayed: Bool = false, server: String? = nil)
        /// Someone waits until the server has answered every `Notify` for the toast.
        case awaitAccepted(id: String, waiter: WaiterID)
        /// Someone waits until every toast is settled: no call on its way, nothing waiting for the link.
        case awaitSettled(waiter: WaiterID)
        /// The link asked for with ``Action/connect(generation:)`` is up and knows what the server can do, and its
        /// Do Not Disturb state (nil when not followed).
        case linkReady(
            generation: UInt64, capabilities: ServerCapabilities, owner: String?, doNotDisturb: ToastDoNotDisturb? = nil
        )
        /// The presenter was attached to a center, which waits for a Do Not Disturb report when it is followed.
        case attached
        /// A signal said the server's Do Not Disturb may have changed (a property or setting of it changed).
        case doNotDisturbMayHaveChanged
        /// The Do Not Disturb state read on the link of `generation`
        /// (``Action/readDoNotDisturb(generation:information:)``).
        case doNotDisturbRead(generation: UInt64, ToastDoNotDisturb)
        /// The link asked for could not be made, or the server could not say what it can do.
        case linkFailed(generation: UInt64, PresentationError)
        /// The server answered the `Notify` sent as `call`.
        case notifyAnswered(id: String, call: UInt64, Result<NotifyReply, PresentationError>)
        /// The server answered the `CloseNotification` sent as `call` (whatever it answered: the id is gone for us).
        case closeAnswered(id: String, call: UInt64)
        /// Plasma's job service answered the `requestView` sent as `call` with the view's path, or failed.
        case jobViewAnswered(id: String, call: UInt64, Result<String, PresentationError>)
        /// A signal of the notification interface, from `sender`.
        case signal(NotificationSignal, sender: String?)
        /// `org.freedesktop.Notifications` has a new owner (`nil`: nobody).
        case ownerChanged(String?)
        /// The screen saver's owner said it became active or inactive.
        case screenSaverChanged(active: Bool)
        /// The connection is gone for good.
        case connectionLost(PresentationError)
        /// The sound asked for with ``Action/playSound(id:_:)`` could not be played, for this reason.
        case soundNotPlayed(id: String, reason: String)
        /// The sound asked for with ``Action/playSound(id:_:)`` has played.
        case soundPlayed(id: String)
        /// Someone waits until every sound asked for the toast has played or failed (``SoundsUnderWay``).
        case awaitSoundsPlayed(id: String, waiter: WaiterID)
        /// Time passed: the moment asked for with ``Action/wake(at:)`` (or later) has come.
        case tick
        /// The presenter was detached from its center: forget everything.
        case reset
    }

    /// Something the shell must do, in order.
    package enum Action: Sendable, Hashable {
        /// Make the connection (or reuse it), read the server's capabilities and owner, then report
        /// ``Event/linkReady(generation:capabilities:owner:)`` or ``Event/linkFailed(_:_:)``.
        case connect(generation: UInt64)
        /// Send `Notify`; report its answer as ``Event/notifyAnswered(id:call:_:)`` with `call`.
        case notify(id: String, call: UInt64, NotifyCall)
        /// Send `CloseNotification` for the toast's notification; report its answer as
        /// ``Event/closeAnswered(id:call:)``.
        case close(id: String, call: UInt64, serverID: UInt32)
        /// Send `CloseNotification` for a notification no toast owns any more (its answer changes nothing).
        case discard(serverID: UInt32)
        /// Ask Plasma's job service for a view of the toast (``JobViews``); report its answer as
        /// ``Event/jobViewAnswered(id:call:_:)`` with `call`.
        case requestJobView(id: String, call: UInt64, DBusMethodCall)
        /// Send the toast's content to its job view at `path` (no answer is asked for).
        case updateJobView(path: String, [DBusValue])
        /// End the job view at `path` without a word (no answer is asked for).
        case endJobView(path: String)
        /// Tell the center, in this order.
        case report(ToastPresenterReport)
        /// Resume these ``DesktopNotificationPresenter/accepted(_:)`` waiters.
        case resume([WaiterID], Result<UInt32, PresentationError>)
        /// Feed ``Event/tick`` at this time (a time on the clock of the events) or soon after.
        case wake(at: Duration)
        /// Read the Do Not Disturb state of the server `information` names; report it as
        /// ``Event/doNotDisturbRead(generation:_:)``.
        case readDoNotDisturb(generation: UInt64, information: ServerInformation?)
        /// Play the toast's sound here, because the server plays none; report its end as
        /// ``Event/soundPlayed(id:)`` or ``Event/soundNotPlayed(id:reason:)``.
        case playSound(id: String, ToastSound)
    }

    enum InFlight: Sendable {
        /// A `Notify`, with the action keys and the sound it carries, and the sound to play once it is accepted.
        case notify(call: UInt64, actionKeys: [String: String], sound: ToastSound?, playing: ToastSound?)
        case close(call: UInt64)
        /// A job view's `requestView`.
        case jobView(call: UInt64)

        var call: UInt64 {
            switch self {
            case .notify(let call, _, _, _), .close(let call), .jobView(let call): call
            }
        }
    }

    struct Toast: TrackedToast {
        /// The latest content the center handed over (its timer kept up to date by timer events).
        var latest: ToastPresentation?
        /// When `latest`'s timer was last set (its remaining time is as of then).
        var latestAt: Duration = .zero
        /// Whether the center wants it on screen.
        var wanted = false
        /// Whether `latest` (or a timer change) is not on the server yet.
        var dirty = false
        /// The call on its way: a `Notify` (with the action keys it carries) or a `CloseNotification`.
        var inFlight: InFlight?
        /// Its notification on the current server.
        var serverID: UInt32?
        /// Wire action key → presenter key for the notification on the server.
        var actionKeys: [String: String] = [:]
        /// Degradations already reported for this toast.
        var reported: Set<String> = []
        var lastFailure: PresentationError?
        var waiters: [WaiterID] = []
        /// Closed by the center while it waited for the link (no longer wanted): it is sent once all the same, then
        /// closed.
        var closesOnceSent = false
        /// Whether a `Notify` for it has gone out (an adopted server id, `-r N`, is not one).
        var everSent = false
        /// Adopted with its notification on screen: its first show is already on the server (``Event/adopt(serverID:toastID:onScreen:)``).
        var adoptedOnScreen = false
        /// Adopted from this server (its unique name), not yet checked against the owner the link reads.
        var adoptedFrom: String?
        /// When its last `Notify` went out (its next update waits until ``PresenterConfiguration/minimumUpdateInterval``
        /// after it).
        var lastSentAt: Duration?
        /// What the server's own timer will do with its notification, as the last `Notify` told it.
        var serverTimer: ServerTimer = .unknown
        /// A timer change the server has not been told yet, and by when it must be (``timerChanged(_:into:)``).
        var timerDue: Duration?
        /// Whether its next update waits for its interval (then it is in `waitingForInterval`).
        var held = false
        /// The sound of the content the server last accepted: an update with the same sound plays nothing again.
        var soundOnServer: ToastSound?
        /// Adopted from a process that played its sound: its first content's sound is not played again.
        var soundPlayedElsewhere = false
        /// Its job view on Plasma (``JobViews``), while its progress is drawn there.
        var jobView: String?
        /// Plasma's job service refused it a view: its progress is drawn in the notification from then on.
        var jobViewRefused = false

        /// Its notification's id; 0 (none) while it is a job view.
        var serviceID: UInt32? { serverID ?? (jobView != nil ? 0 : nil) }
        var hasCallOnItsWay: Bool { inFlight != nil }
        var hasContentToSend: Bool { (wanted || closesOnceSent) && dirty }

        mutating func failsQuietly() -> Bool {
            // The center has ended it already: nothing to report, nothing to send again.
            guard closesOnceSent else { return false }
            closesOnceSent = false
            latest = nil
            return true
        }
    }

    /// The presenter's settings (app name, markup, timeouts).
    package let configuration: PresenterConfiguration
    /// The link, the owner, the toasts, the waiters.
    var ledger = PresenterLedger<ServerCapabilities, Toast>()
    private var toastForServerID: [UInt32: String] = [:]
    private var tokens: [UInt32: String] = [:]
    private var notifiesInFlight = 0
    /// Signals for ids not known yet, kept while a `Notify` reply may still bring the id (bounded).
    private var orphans: [UInt32: [NotificationSignal]] = [:]
    private var orphanCount = 0
    private var nextCall: UInt64 = 0
    /// Calls on their way (`Notify` and `CloseNotification`).
    private var callsInFlight = 0
    /// `CloseNotification` calls on their way, and the toasts whose `Notify` waits for them to be answered.
    private var closesInFlight = 0
    private var waitingForCloses = WaitingIDs()
    /// Toasts whose next update waits for its interval, and when it may go.
    private var waitingForInterval: [String: Duration] = [:]
    /// The Do Not Disturb state of the current link's server, once read.
    private var doNotDisturb: ToastDoNotDisturb?
    /// What the center was told last (nil: nothing yet since it attached).
    private var reportedDoNotDisturb: ToastDoNotDisturb?
    /// The sounds asked for that have neither played nor failed yet, and who waits for them.
    var sounds = SoundsUnderWay()
    /// Attached to a center that waits for the first Do Not Disturb report: not settled until it is made.
    private var centerAwaitsDoNotDisturb = false
    /// When to read Do Not Disturb again while it is on: not every server says when it ends (mako never does, dunst
    /// not when resumed by a signal), and the center holds toasts until it hears.
    private var doNotDisturbRecheck: Duration?
    /// A signal said Do Not Disturb may have changed while the link was being made: read it again once it is up.
    private var doNotDisturbChangedWhileLinking = false
    /// When Do Not Disturb was last read, or a reading asked for (nil: never), for a server that says nothing when it
    /// changes (``readDoNotDisturbIfStale(into:)``).
    private var doNotDisturbReadAt: Duration?
    /// New toasts whose first `Notify` waits for the Do Not Disturb reading asked for because the last one was old
    /// (``readDoNotDisturbIfStale(into:)``), in arrival order; and the link generation it was asked on.
    private var awaitingReading = WaitingIDs()
    private var staleReadingOn: UInt64?
    /// `GSETTINGS_BACKEND` where the settings are read (a keyfile announces nothing), taken when the machine is made.
    private let gsettingsBackend: String?

    /// How often Do Not Disturb is read again while it is on.
    package static let doNotDisturbRecheckInterval: Duration = .seconds(2)

    package static let serverLeft = "the notification server left the bus; toasts come back when a server starts"

    /// The most signals held for ids not known yet; more are dropped.
    package static let orphanLimit = 1024

    package init(configuration: PresenterConfiguration) {
        self.configuration = configuration
        gsettingsBackend =
            configuration.settingsEnvironment.map { $0["GSETTINGS_BACKEND"] }
            ?? ProcessEnvironment.current["GSETTINGS_BACKEND"]
    }

    // MARK: - Queries

    /// The server's capabilities, once the link is ready.
    package var capabilities: ServerCapabilities? { ledger.ready }

    /// The unique name of the server, when known.
    package var owner: String? { ledger.owner }

    /// The toast's notification on the current server.
    package func serverID(ofToast id: String) -> UInt32? { ledger.toasts[id]?.serverID }

    /// The notification that toast `id`'s latest content will replace, when that content is an update waiting for
    /// the toast's update interval after a `Notify` the server answered; nil otherwise.
    package func waitingUpdate(ofToast id: String) -> UInt32? {
        // Held only after a `Notify` of this toast was answered (its id is the server's own), with nothing on its way.
        guard let toast = ledger.toasts[id], toast.held, toast.wanted, toast.dirty, toast.jobView == nil else {
            return nil
        }
        return toast.serverID
    }

    /// The ids the machine still tracks (for tests of its bookkeeping).
    package var trackedToastIDs: Set<String> { Set(ledger.toasts.keys) }

    /// `Notify` calls on their way.
    package var notifyCallsInFlight: Int { notifiesInFlight }

    /// The ids the center wants on screen now.
    package var wantedToastIDs: Set<String> { Set(ledger.toasts.filter { $0.value.wanted }.keys) }

    // MARK: - Events

    /// Applies `event`, at the time of the previous event (time stands still), and returns what to do, in order.
    package mutating func handle(_ event: Event) -> [Action] {
        handle(event, now: ledger.now)
    }

    /// Applies `event`, which happened at `now` (a monotonic time; an earlier time than the last event's counts as
    /// the last event's), and returns what to do, in order.
    package mutating func handle(_ event: Event, now: Duration) -> [Action] {
        begin(at: now)
        var out: [Action] = []
        switch event {
        case .show(let presentation):
            let id = presentation.id
            ledger.failures.forget(id)
            // In place: a toast replaced in a loop must not copy its state out and back on every update.
            if let index = ledger.toasts.index(forKey: id) {
                ledger.toasts.values[index].latest = presentation
                ledger.toasts.values[index].latestAt = ledger.now
                ledger.toasts.values[index].wanted = true
                ledger.toasts.values[index].dirty = true
                ledger.toasts.values[index].closesOnceSent = false
                // Latest wins: sent when the answer is in, or when the toast's update interval is up.
                if ledger.toasts.values[index].inFlight != nil || ledger.toasts.values[index].held { break }
            } else {
                var toast = Toast()
                toast.latest = presentation
                toast.latestAt = ledger.now
                toast.wanted = true
                toast.dirty = true
                ledger.toasts[id] = toast
                readDoNotDisturbIfStale(into: &out)
                if staleReadingOn != nil { awaitingReading.insert(id) }
            }
            pump(id, into: &out)
        case .timer(let id, let remaining, let isRunning):
            guard var toast = ledger.toasts[id], toast.wanted, var latest = toast.latest else { break }
            latest.toast.remaining = remaining
            latest.toast.isTimerRunning = isRunning
            toast.latest = latest
            toast.latestAt = ledger.now
            // A server that ignores expire_timeout gains nothing from a re-send; the next send carries the timer. A job
            // view has no timeout.
            if capabilities?.honoursExpireTimeout ?? true, !showsJobView(toast, latest) {
                timerChanged(&toast, into: &out)
            }
            ledger.toasts[id] = toast
            pump(id, into: &out)
        case .close(let id, let expired):
            guard var toast = ledger.toasts[id] else { break }
            toast.closesOnceSent = false
            toast.timerDue = nil
            if expired, toast.wanted, toast.dirty, !toast.everSent, toast.inFlight == nil, toast.latest != nil,
                ledger.waitingForLink.contains(id) || waitingForCloses.contains(id) || awaitingReading.contains(id)
            {
                // Its time ran out before it could be sent (`notify-send -t 1` in a fresh process, the link still
                // being made, or a close of ours on its way): a toast the center showed still reaches the server
                // once, and is closed when it has its id. Any other close (covered, dismissed, detached) drops it.
                toast.wanted = false
                toast.closesOnceSent = true
                ledger.toasts[id] = toast
                break
            }
            toast.drop()
            ledger.toasts[id] = toast
            awaitingReading.remove(id)
            pump(id, into: &out)
        case .adopt(let serverID, let toastID, let onScreen, let soundPlayed, let server):
            var toast = ledger.toasts[toastID] ?? Toast()
            // A job view (or one asked for) is the toast's: a notification id says nothing of it.
            if toast.jobView != nil { break }
            if case .jobView? = toast.inFlight { break }
            // Another server's id: nothing of this one's.
            if let server, let owner = ledger.owner, server != owner { break }
            toast.adoptedFrom = ledger.owner == nil ? server : nil
            if let old = toast.serverID { toastForServerID[old] = nil }
            toast.serverID = serverID
            toast.adoptedOnScreen = onScreen
            toast.soundPlayedElsewhere = onScreen || soundPlayed
            ledger.toasts[toastID] = toast
            toastForServerID[serverID] = toastID
        case .awaitSettled(let waiter):
            ledger.settleWaiters.append(waiter)
        case .awaitAccepted(let id, let waiter):
            awaitAccepted(id: id, waiter: waiter, into: &out)
        case .linkReady(let generation, let capabilities, let owner, let reading):
            // Told before the toasts that waited for the link go out: the center holds back what it must first.
            let current = ledger.link == .connecting(generation)
            if current { forgetAdoptionsFromOtherServers(owner: ledger.owner ?? owner) }
            if current, let reading { doNotDisturbRead(reading, into: &out) }
            linkReady(generation: generation, capabilities, owner: owner, into: &out)
            if current, doNotDisturbChangedWhileLinking {
                doNotDisturbChangedWhileLinking = false
                out.append(.readDoNotDisturb(generation: generation, information: capabilities.information))
            }
        case .attached:
            guard configuration.followsDoNotDisturb else { break }
            reportedDoNotDisturb = nil
            centerAwaitsDoNotDisturb = true
            if let doNotDisturb, ledger.ready != nil { doNotDisturbRead(doNotDisturb, into: &out) }
        case .doNotDisturbMayHaveChanged:
            guard configuration.followsDoNotDisturb else { break }
            guard let ready = ledger.ready else {
                // The reading on its way may be older than the change.
                if case .connecting = ledger.link { doNotDisturbChangedWhileLinking = true }
                break
            }
            out.append(.readDoNotDisturb(generation: ledger.generation, information: ready.information))
        case .doNotDisturbRead(let generation, let reading):
            guard generation == ledger.generation, ledger.ready != nil else { break }
            doNotDisturbRead(reading, into: &out)
            if staleReadingOn == generation { releaseAwaitingReading(withheld: reading.isOn, into: &out) }
        case .linkFailed(let generation, let error):
            if ledger.link == .connecting(generation) {
                // A close that waited for this link is given up: the notification's id is no longer followed.
                for id in ledger.waitingForLink.all {
                    guard let toast = ledger.toasts[id], !toast.wanted, let serverID = toast.serverID else { continue }
                    ledger.toasts[id]?.serverID = nil
                    toastForServerID[serverID] = nil
                    tokens[serverID] = nil
                }
            }
            if centerAwaitsDoNotDisturb || reportedDoNotDisturb?.isOn == true, ledger.link == .connecting(generation) {
                // The center waits for a first word: nothing could be read, so nothing is held back.
                doNotDisturbRead(
                    ToastDoNotDisturb(isOn: false, source: "not read: \(error.reason)"), into: &out)
            }
            linkFailed(generation: generation, error, into: &out)
        case .notifyAnswered(let id, let call, let result):
            answered(id, call: call, result, into: &out)
        case .jobViewAnswered(let id, let call, let result):
            jobViewAnswered(id, call: call, result, into: &out)
        case .closeAnswered(let id, let call):
            // Only the answer to the close on its way counts (a stale answer, or one with a Notify's number, is not).
            guard var toast = ledger.toasts[id], case .close(call)? = toast.inFlight else { break }
            toast.inFlight = nil
            callsInFlight -= 1
            closesInFlight -= 1
            ledger.toasts[id] = toast
            pump(id, into: &out)
            if closesInFlight == 0 {
                let waiting = waitingForCloses.takeAll()
                for other in waiting { pump(other, into: &out) }
                showQueuedAfterClose(into: &out)
            }
        case .signal(let signal, let sender):
            received(signal, from: sender, into: &out)
        case .ownerChanged(let newOwner):
            // The job views were the old server's: they go with it (a new one, for toasts shown again).
            if newOwner != ledger.owner { endJobViews(into: &out) }
            ownerChanged(newOwner, into: &out)
            if configuration.followsDoNotDisturb, newOwner != nil, reportedDoNotDisturb != nil {
                // The new server's state is read now, before a toast goes to it (toasts held for the old server's
                // are not on the presenter: nothing else would link to the new one and read it).
                connectIfNeeded(into: &out)
            }
        case .screenSaverChanged(let active):
            screenSaverChanged(active: active, into: &out)
        case .tick:
            let due = waitingForInterval.filter { $0.value <= ledger.now }.keys.sorted()
            for id in due { pump(id, into: &out) }
            for id in takeTimersDue() { pump(id, into: &out) }
            if let recheck = doNotDisturbRecheck, recheck <= ledger.now {
                doNotDisturbRecheck = nil
                if let ready = ledger.ready {
                    out.append(.readDoNotDisturb(generation: ledger.generation, information: ready.information))
                } else {
                    connectIfNeeded(into: &out)
                }
            }
            // The shell keeps one wake-up, for the earliest moment: ask again for the next.
            if let next = [waitingForInterval.values.min(), doNotDisturbRecheck, nextTimerDue].compactMap({ $0 }).min()
            {
                out.append(.wake(at: next))
            }
        case .soundNotPlayed(let id, let reason):
            soundNotPlayed(id, reason: reason, into: &out)
            soundEnded(id, into: &out)
        case .soundPlayed(let id):
            soundEnded(id, into: &out)
        case .awaitSoundsPlayed(let id, let waiter):
            awaitSoundsPlayed(id, waiter: waiter, into: &out)
        case .connectionLost(let error):
            connectionLost(error, into: &out)
        case .reset:
            // Before the connection closes: Plasma would show each view still open as a failed job.
            endJobViews(into: &out)
            reset(into: &out)
        }
        // The center waits for a first word on Do Not Disturb, or holds toasts until it ends: whatever ended the link
        // meanwhile (its server left, the connection was lost), a new one reads it, or fails and says so (off).
        if centerAwaitsDoNotDisturb || reportedDoNotDisturb?.isOn == true, ledger.link == .none {
            connectIfNeeded(into: &out)
        }
        // The link the reading was asked on is gone (its server left, the connection was lost): the toasts that
        // waited for it go on as any other (a new link reads Do Not Disturb before they go out).
        if let generation = staleReadingOn, ledger.ready == nil || ledger.generation != generation {
            releaseAwaitingReading(withheld: false, into: &out)
        }
        finish(into: &out)
        return out
    }

    /// Keeps the server's Do Not Disturb state and tells the center when it differs from what it was told.
    private mutating func doNotDisturbRead(_ reading: ToastDoNotDisturb, into out: inout [Action]) {
        doNotDisturb = reading
        doNotDisturbReadAt = ledger.now
        centerAwaitsDoNotDisturb = false
        if reading != reportedDoNotDisturb {
            reportedDoNotDisturb = reading
            out.append(.report(.doNotDisturbChanged(reading)))
        }
        if reading.isOn, doNotDisturbRecheck == nil {
            let at = ledger.now + Self.doNotDisturbRecheckInterval
            doNotDisturbRecheck = at
            out.append(.wake(at: at))
        } else if !reading.isOn {
            doNotDisturbRecheck = nil
        }
    }

    /// A new toast on a server that says nothing of its Do Not Disturb, while it is off: the state is read again if
    /// the last reading is ``PresenterConfiguration/doNotDisturbStaleAfter`` old, once for a burst of toasts. The
    /// toast, and those that come before the reading, wait for it (``releaseAwaitingReading(withheld:into:)``):
    /// sent at once, a server that keeps Do Not Disturb itself (mako, LXQt) hid it, and the person never saw it.
    private mutating func readDoNotDisturbIfStale(into out: inout [Action]) {
        guard configuration.followsDoNotDisturb, doNotDisturbRecheck == nil, staleReadingOn == nil,
            let ready = ledger.ready, let readAt = doNotDisturbReadAt,
            ledger.now - readAt >= configuration.doNotDisturbStaleAfter, let information = ready.information,
            !DoNotDisturbQuery.announcesChanges(of: information, gsettingsBackend: gsettingsBackend)
        else { return }
        doNotDisturbReadAt = ledger.now
        staleReadingOn = ledger.generation
        out.append(.readDoNotDisturb(generation: ledger.generation, information: ready.information))
    }

    /// The reading the new toasts waited for is in (after the center has heard it), or will not come: with Do Not
    /// Disturb on, each toast still wanted and never sent is withheld — forgotten here, and the center takes it back
    /// to hold, drop or show anyway as its policy says; every other toast goes out.
    private mutating func releaseAwaitingReading(withheld: Bool, into out: inout [Action]) {
        staleReadingOn = nil
        for id in awaitingReading.takeAll() {
            guard var toast = ledger.toasts[id] else { continue }
            guard withheld, toast.wanted, !toast.everSent, toast.inFlight == nil else {
                // With no link (its server left), as any toast: it waits for a link, or fails for now.
                pump(id, into: &out)
                continue
            }
            toast.drop()
            out.append(.report(.withheld(toastID: id)))
            settle(id, toast, into: &out)
        }
    }

    /// Checks the counters kept by hand against the state they count, and the id map against the toasts; a
    /// broken one traps (debug builds, every event while few toasts are tracked, then spread over more).
    func checkInvariants() {
        #if DEBUG
            var notifies = 0
            var closes = 0
            var views = 0
            for (id, toast) in ledger.toasts {
                switch toast.inFlight {
                case .notify?: notifies += 1
                case .close?: closes += 1
                case .jobView?: views += 1
                case nil: break
                }
                precondition(
                    toast.jobView == nil || toast.serverID == nil, "toast \(id) is a job view and a notification")
                if let serverID = toast.serverID {
                    precondition(toastForServerID[serverID] == id, "toast \(id)'s server id \(serverID) is not mapped")
                }
                precondition(toast.held == (waitingForInterval[id] != nil), "toast \(id)'s hold is not in the queue")
                if toast.held {
                    precondition(toast.inFlight == nil, "toast \(id) waits for its interval with a call on its way")
                }
                precondition(!(toast.closesOnceSent && toast.wanted), "toast \(id) is wanted and closes once sent")
                if let due = toast.timerDue {
                    guard case .closesAt(let deadline) = toast.serverTimer, due < deadline else {
                        preconditionFailure(
                            "toast \(id)'s timer change is due at \(due), with \(toast.serverTimer) on the server")
                    }
                }
            }
            precondition(notifiesInFlight == notifies, "notifiesInFlight \(notifiesInFlight) ≠ \(notifies)")
            precondition(closesInFlight == closes, "closesInFlight \(closesInFlight) ≠ \(closes)")
            precondition(
                callsInFlight == notifies + closes + views,
                "callsInFlight \(callsInFlight) ≠ \(notifies + closes + views)")
            for (serverID, id) in toastForServerID {
                precondition(
                    ledger.toasts[id]?.serverID == serverID, "server id \(serverID) maps to \(id), which has another")
            }
            for id in waitingForInterval.keys {
                precondition(ledger.toasts[id] != nil, "untracked toast \(id) waits for its interval")
            }
            precondition(awaitingReading.isEmpty || staleReadingOn != nil, "toasts wait for a reading not asked for")
            let held = orphans.values.reduce(0) { $0 + $1.count }
            precondition(orphanCount == held && held <= Self.orphanLimit, "orphanCount \(orphanCount) ≠ \(held)")
        #endif
    }

    /// No call on its way, no toast waiting for the link, and the center told the Do Not Disturb state it waits for.
    package var isSettled: Bool {
        callsInFlight == 0 && ledger.waitingForLink.isEmpty && waitingForCloses.isEmpty && waitingForInterval.isEmpty
            && awaitingReading.isEmpty && !centerAwaitsDoNotDisturb
    }

    // MARK: - Sending

    /// Sends what toast `id` needs next, if nothing for it is on its way: its latest content, or the close of
    /// its notification. Resumes its waiters and forgets it once it is settled and gone.
    mutating func pump(_ id: String, into out: inout [Action]) {
        guard var toast = ledger.toasts[id], toast.inFlight == nil, !awaitingReading.contains(id) else { return }
        let wasHeld = toast.held
        if wasHeld {
            toast.held = false
            ledger.toasts[id] = toast
            waitingForInterval[id] = nil
        }
        if !(toast.wanted || (toast.closesOnceSent && toast.dirty)), let path = toast.jobView {
            // Not wanted any more: its job view goes.
            toast.jobView = nil
            ledger.toasts[id] = toast
            out.append(.endJobView(path: path))
        }
        if toast.wanted || (toast.closesOnceSent && toast.dirty) {
            if toast.dirty, let presentation = toast.latest {
                guard case .ready(let capabilities) = ledger.link else {
                    ledger.waitingForLink.insert(id)
                    connectIfNeeded(into: &out)
                    return
                }
                if toast.soundPlayedElsewhere {
                    toast.soundPlayedElsewhere = false
                    toast.soundOnServer = presentation.request.sound
                }
                let wantsJobView = showsJobView(toast, presentation)
                if toast.adoptedOnScreen {
                    toast.adoptedOnScreen = false
                    if !wantsJobView, toast.serverID != nil, !capabilities.signalsOnlyToSender || toast.closesOnceSent {
                        // On screen as it is: nothing to send (its timer's changes still are, as for any toast). One
                        // whose time ran out while the link was made is closed now, never sent first.
                        toast.dirty = false
                        toast.everSent = true
                        if toast.closesOnceSent {
                            toast.closesOnceSent = false
                            ledger.toasts[id] = toast
                            pump(id, into: &out)
                            return
                        }
                        settle(id, toast, into: &out)
                        return
                    }
                }
                if toast.serverID != nil || toast.jobView != nil, let last = toast.lastSentAt,
                    ledger.now < last + configuration.minimumUpdateInterval
                {
                    // An update of a notification on screen, sooner than the server can draw it: it waits (latest
                    // wins), and the newest goes out when the interval is up.
                    let due = last + configuration.minimumUpdateInterval
                    toast.held = true
                    ledger.toasts[id] = toast
                    waitingForInterval[id] = due
                    if !wasHeld { out.append(.wake(at: due)) }
                    return
                }
                if wantsJobView {
                    sendToJobView(id, &toast, presentation, capabilities, into: &out)
                    return
                }
                if let path = toast.jobView {
                    // Its progress ended, or it has actions now: the view goes, and a notification shows the toast.
                    toast.jobView = nil
                    out.append(.endJobView(path: path))
                }
                guard closesInFlight == 0 else {
                    // A Notify right behind a CloseNotification is often never drawn by swaync: it goes out once
                    // the server has answered the close (one round trip later).
                    waitingForCloses.insert(id)
                    return
                }
                toast.dirty = false
                guard
                    let mapped = map(
                        presentation, replacesID: toast.serverID ?? 0,
                        // Not for a toast that comes back (covered, then in front again), never during Do Not
                        // Disturb: a toast that shows anyway comes quietly, and stays quiet.
                        soundIsNew: presentation.request.sound != toast.soundOnServer
                            && !presentation.toast.soundHasPlayed && doNotDisturb?.isOn != true,
                        id, &toast, capabilities, into: &out)
                else { return }
                nextCall += 1
                toast.inFlight = .notify(
                    call: nextCall, actionKeys: mapped.actionKeys, sound: presentation.request.sound,
                    playing: mapped.localSound)
                toast.everSent = true
                toast.lastSentAt = ledger.now
                toast.serverTimer = serverTimer(of: presentation, capabilities)
                toast.timerDue = nil
                notifiesInFlight += 1
                callsInFlight += 1
                ledger.toasts[id] = toast
                out.append(.notify(id: id, call: nextCall, mapped.call))
                return
            }
        } else if let serverID = toast.serverID {
            closeNotification(id, &toast, serverID, into: &out)
            return
        }
        settle(id, toast, into: &out)
    }

    /// Sends `CloseNotification` for toast `id`'s notification, once the link is up: an adopted notification
    /// (another process showed it) closed before this presenter sent anything waits for the link as a `Notify` would
    /// (sent on no link, it was lost, and it stayed on screen).
    private mutating func closeNotification(
        _ id: String, _ toast: inout Toast, _ serverID: UInt32, into out: inout [Action]
    ) {
        guard case .ready = ledger.link else {
            ledger.toasts[id] = toast
            ledger.waitingForLink.insert(id)
            connectIfNeeded(into: &out)
            return
        }
        // Forget the id first: the NotificationClosed(3) that answers our own close is not news.
        toast.serverID = nil
        toastForServerID[serverID] = nil
        tokens[serverID] = nil
        nextCall += 1
        toast.inFlight = .close(call: nextCall)
        callsInFlight += 1
        closesInFlight += 1
        ledger.toasts[id] = toast
        out.append(.close(id: id, call: nextCall, serverID: serverID))
    }

    /// Draws toast `id`'s progress in a job view on Plasma (``JobViews``): its notification, if it has one, is
    /// closed first; then the view is asked for, or the one it has gets the new content (at most once per
    /// ``PresenterConfiguration/minimumUpdateInterval``, as a notification's updates).
    private mutating func sendToJobView(
        _ id: String, _ toast: inout Toast, _ presentation: ToastPresentation, _ capabilities: ServerCapabilities,
        into out: inout [Action]
    ) {
        if let serverID = toast.serverID {
            // It was a notification (adopted, or shown before its progress began): that goes, then the view comes.
            closeNotification(id, &toast, serverID, into: &out)
            return
        }
        toast.dirty = false
        toast.everSent = true
        toast.lastSentAt = ledger.now
        if let path = toast.jobView {
            out.append(.updateJobView(path: path, JobViews.update(presentation)))
            settle(id, toast, into: &out)
            return
        }
        // The notification's mapping, without the progress: the app's name and icon as a notification would carry
        // them, and the same refusal of what no server takes.
        var plain = presentation
        plain.toast.progress = nil
        guard let mapped = map(plain, replacesID: 0, soundIsNew: false, id, &toast, capabilities, into: &out)
        else { return }
        nextCall += 1
        toast.inFlight = .jobView(call: nextCall)
        callsInFlight += 1
        ledger.toasts[id] = toast
        out.append(.requestJobView(id: id, call: nextCall, JobViews.request(presentation, mapped: mapped.call)))
    }

    /// Whether `presentation` of `toast` goes to a job view on the current server.
    private func showsJobView(_ toast: Toast, _ presentation: ToastPresentation) -> Bool {
        capabilities?.drawsJobViews == true && !toast.jobViewRefused && JobViews.shows(presentation)
    }

    /// Maps `presentation` for `Notify` and reports its degradations (once each); input no server can take fails
    /// the toast instead (nil).
    private mutating func map(
        _ presentation: ToastPresentation, replacesID: UInt32, soundIsNew: Bool, _ id: String, _ toast: inout Toast,
        _ capabilities: ServerCapabilities, into out: inout [Action]
    ) -> MappedNotification? {
        let mapped: MappedNotification
        do {
            mapped = try NotificationMapping.notify(
                presentation, replacesID: replacesID, capabilities: capabilities, configuration: configuration,
                soundIsNew: soundIsNew)
        } catch let error {
            ledger.toasts[id] = toast
            fail(id, PresentationError(.invalidInput, reason: error.description), into: &out)
            return nil
        }
        reportDegradations(mapped.degradations, of: id, &toast, into: &out)
        return mapped
    }

    /// Ends every job view (the server changes, or the presenter is detached before its connection closes).
    private mutating func endJobViews(into out: inout [Action]) {
        for id in ledger.toasts.keys.sorted() {
            guard let path = ledger.toasts[id]?.jobView else { continue }
            ledger.toasts[id]?.jobView = nil
            out.append(.endJobView(path: path))
        }
    }

    /// A toast about to be settled with nothing left to send (the server closed it, or the connection ended): its
    /// update no longer waits for its interval.
    mutating func willSettle(_ id: String, _ toast: inout Toast) {
        if toast.held, !(toast.wanted && toast.dirty) {
            toast.held = false
            waitingForInterval[id] = nil
        }
    }

    // MARK: - Answers

    /// Plasma's job service answered a toast's `requestView`: the toast is its view from now on — or, refused, a
    /// notification whose progress is text (said once as a degradation). A view nobody wants any more is ended.
    private mutating func jobViewAnswered(
        _ id: String, call: UInt64, _ result: Result<String, PresentationError>, into out: inout [Action]
    ) {
        guard var toast = ledger.toasts[id], case .jobView(call)? = toast.inFlight else {
            // Forgotten meanwhile (the presenter was reset): nobody wants the view.
            if case .success(let path) = result { out.append(.endJobView(path: path)) }
            return
        }
        toast.inFlight = nil
        callsInFlight -= 1
        switch result {
        case .success(let path):
            toast.jobView = path
            toast.lastFailure = nil
            if toast.closesOnceSent {
                // Its time ran out on the way: it was drawn once, and goes now (below).
                toast.closesOnceSent = false
                toast.dirty = false
                toast.latest = nil
                if !toast.waiters.isEmpty {
                    out.append(.resume(toast.waiters, .success(0)))
                    toast.waiters = []
                }
            } else if let presentation = toast.latest, let sound = presentation.request.sound,
                sound != toast.soundOnServer, !presentation.toast.soundHasPlayed
            {
                // A view plays nothing: the sound is played here, as for a server that plays none.
                toast.soundOnServer = sound
                if doNotDisturb?.isOn != true { playSound(sound, of: id, into: &out) }
            }
        case .failure(let error):
            toast.jobViewRefused = true
            if toast.wanted || toast.closesOnceSent { toast.dirty = true }
            reportDegradations(
                ["Plasma's job service gave no view (\(error.reason)): the progress is shown as text in the message"],
                of: id, &toast, into: &out)
        }
        ledger.toasts[id] = toast
        pump(id, into: &out)
    }

    private mutating func answered(
        _ id: String, call: UInt64, _ result: Result<NotifyReply, PresentationError>, into out: inout [Action]
    ) {
        guard var toast = ledger.toasts[id], case .notify(call, let actionKeys, let sound, let playing) = toast.inFlight
        else {
            // Forgotten meanwhile (the presenter was reset): nobody wants what this created.
            if case .success(let reply) = result, owner == nil || reply.sender == nil || reply.sender == owner {
                out.append(.discard(serverID: reply.serverID))
            }
            return
        }
        toast.inFlight = nil
        notifiesInFlight -= 1
        callsInFlight -= 1
        var early: [NotificationSignal] = []
        switch result {
        case .success(let reply):
            if owner == nil { ledger.owner = reply.sender }
            if let sender = reply.sender, sender != owner {
                // Answered by a server that has since been replaced: its id means nothing to the new one (the
                // owner change already asked the center to show the toast again).
                break
            }
            if let old = toast.serverID, old != reply.serverID { toastForServerID[old] = nil }
            toast.serverID = reply.serverID
            toast.actionKeys = actionKeys
            toast.lastFailure = nil
            toast.soundOnServer = sound
            // Never while Do Not Disturb is on (a toast that shows anyway comes quietly).
            if let playing, doNotDisturb?.isOn != true { playSound(playing, of: id, into: &out) }
            if toast.closesOnceSent {
                toast.closesOnceSent = false
                toast.dirty = false
                toast.latest = nil
                // Who waits for its acceptance (`-p`) gets its id: it did reach the server.
                if !toast.waiters.isEmpty {
                    out.append(.resume(toast.waiters, .success(reply.serverID)))
                    toast.waiters = []
                }
            }
            toastForServerID[reply.serverID] = id
            if let held = orphans.removeValue(forKey: reply.serverID) {
                orphanCount -= held.count
                early = held
            }
        case .failure(let error) where error.kind == .repeatedTooSoon && toast.serverID != nil:
            // Plasma refused a replacement identical to what it shows: the notification on screen is already the
            // toast as asked, so it stays ours.
            break
        case .failure(let error):
            ledger.toasts[id] = toast
            if notifiesInFlight == 0 { dropOrphans() }
            fail(id, error, into: &out)
            return
        }
        ledger.toasts[id] = toast
        if notifiesInFlight == 0 { dropOrphans() }
        for signal in early { received(signal, from: owner, into: &out) }
        pump(id, into: &out)
    }

    private mutating func received(_ signal: NotificationSignal, from sender: String?, into out: inout [Action]) {
        // Only the real server may speak.
        guard let sender, sender == owner else { return }
        guard let toastID = toastForServerID[signal.id], var toast = ledger.toasts[toastID] else {
            // Not ours, or ours with the Notify reply still on its way: keep it until that reply is in.
            if notifiesInFlight > 0, orphanCount < Self.orphanLimit {
                orphans[signal.id, default: []].append(signal)
                orphanCount += 1
            }
            return
        }
        switch signal {
        case .activationToken(let id, let token):
            tokens[id] = token
        case .actionInvoked(let id, let key):
            let token = tokens.removeValue(forKey: id)
            out.append(
                .report(
                    .actionInvoked(toastID: toastID, key: toast.actionKeys[key] ?? key, activationToken: token)))
        case .replied(let id, let text):
            let token = tokens.removeValue(forKey: id)
            // Only a notification that was sent with a reply field: the key it stands for.
            guard let key = toast.actionKeys[NotificationMapping.inlineReplyKey] else { return }
            out.append(.report(.replied(toastID: toastID, key: key, text: text, activationToken: token)))
        case .closed(let id, let reason):
            toastForServerID[id] = nil
            tokens[id] = nil
            if toast.serverID == id { toast.serverID = nil }
            // Gone from the server: what was still to be sent is dropped (the center decides what comes next, and
            // the id a Notify on its way brings back is closed when it arrives).
            toast.drop()
            out.append(.report(.closed(toastID: toastID, reason: Self.closeReason(reason))))
            ledger.toasts[toastID] = toast
            settle(toastID, toast, into: &out)
            showQueuedAfterClose(into: &out)
        }
    }

    /// On a server that forgets its queue when a banner is closed (GNOME Shell 43,
    /// ``ServerCapabilities/forgetsQueueOnClose``): sends every other live notification again, in place, so the
    /// shell looks at its queue and pops up the one that waited behind the closed banner.
    private mutating func showQueuedAfterClose(into out: inout [Action]) {
        guard capabilities?.forgetsQueueOnClose == true else { return }
        for id in ledger.toasts.keys.sorted() {
            guard var toast = ledger.toasts[id], toast.wanted, toast.serverID != nil, toast.inFlight == nil,
                toast.latest != nil, !toast.dirty
            else { continue }
            toast.dirty = true
            ledger.toasts[id] = toast
            pump(id, into: &out)
        }
    }

    /// Forgets every server id, token and held signal, and the updates that waited for their interval: they belonged
    /// to a server that is gone (a new one gets each toast at once).
    mutating func forgetServer() {
        doNotDisturb = nil
        toastForServerID = [:]
        tokens = [:]
        dropOrphans()
        waitingForInterval = [:]
        for id in ledger.toasts.keys {
            ledger.toasts[id]?.serverID = nil
            ledger.toasts[id]?.held = false
            ledger.toasts[id]?.serverTimer = .unknown
            ledger.toasts[id]?.timerDue = nil
            // Its view was the old server's, or went with the connection (ended first where it could be).
            ledger.toasts[id]?.jobView = nil
            ledger.toasts[id]?.jobViewRefused = false
        }
    }

    private mutating func dropOrphans() {
        orphans = [:]
        orphanCount = 0
    }

    /// The center's view of a server's close reason.
    package static func closeReason(_ reason: NotificationCloseReason) -> ToastPresenterCloseReason {
        switch reason {
        case .expired: .expired
        case .dismissedByUser: .dismissedByUser
        case .closedByCall: .closedByCall
        case .undefined: .other("closed by the notification server (reason 4, undefined)")
        case .unknown(let value): .other("closed by the notification server with unknown reason \(value)")
        }
    }
}

extension ServerCapabilities {
    /// Whether the server closes a notification when its `expire_timeout` runs out. GNOME Shell does not (it
    /// keeps banners until the person acts, `../shared/harness/NOTES.md` P18); the center closes toasts on time
    /// there, and timer changes are not re-sent.
    public var honoursExpireTimeout: Bool {
        information?.name != "gnome-shell"
    }
}

extension DesktopPresenterMachine: LedgerMachine {
    static var serviceLeft: String { serverLeft }
    static var settledValue: UInt32 { 0 }

    /// The owner is known: an id adopted from another server (it restarted since, and may have given the id to
    /// another application's notification) is forgotten, and the toast is shown anew.
    private mutating func forgetAdoptionsFromOtherServers(owner: String?) {
        for (id, toast) in ledger.toasts {
            guard let from = toast.adoptedFrom else { continue }
            var checked = toast
            checked.adoptedFrom = nil
            if from != owner, let serverID = checked.serverID {
                toastForServerID[serverID] = nil
                checked.serverID = nil
                checked.adoptedOnScreen = false
            }
            ledger.toasts[id] = checked
        }
    }

    /// A new owner is a new server: its ids mean nothing to it. An update that waited for its interval goes to the
    /// next server at once (or fails for now with the others when none comes).
    mutating func ownerWillChange() {
        let held = waitingForInterval.keys.sorted()
        forgetServer()
        for id in held { ledger.waitingForLink.insert(id) }
    }
    mutating func connectionWillEnd() { forgetServer() }
    func detached() -> Self {
        var fresh = DesktopPresenterMachine(configuration: configuration)
        fresh.nextCall = nextCall
        // Still playing (or waiting to) on the presenter's queue, whatever the center: their waiters are told as they end.
        fresh.sounds = sounds
        return fresh
    }

    static func step(_ action: Action) -> PresenterStep<UInt32>? {
        switch action {
        case .connect(let generation): .connect(generation: generation)
        case .report(let report): .report(report)
        case .resume(let waiters, let result): .resume(waiters, result)
        case .wake(let at): .wake(at: at)
        case .notify, .close, .discard, .readDoNotDisturb, .playSound, .requestJobView, .updateJobView, .endJobView: nil
        }
    }

    static var tick: Event? { .tick }
    static var attached: Event? { .attached }
}

extension DesktopPresenterMachine.Event: PresenterEvent {}
extension DesktopPresenterMachine.Action: PresenterAction {}
