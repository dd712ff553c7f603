import Synchronization

/// The heart of ToastKit: holds the toasts, decides what is shown and when, runs actions, reports events.
///
/// ```swift
/// let toasts = ToastCenter(presenter: myPresenter)
/// toasts.present(.normal, title: "Cambios guardados")
/// ```
///
/// A center may exist before any presenter is attached; its toasts wait (with their time stopped) until
/// ``attach(_:)``. The `ToastKit` module adds `ToastCenter()` and `ToastCenter(defaultDuration:)`, which attach
/// the desktop presenter.
///
/// ## Threading
/// Every method may be called from any task or thread. State lives behind a `Mutex`; work that leaves the
/// center — presenter calls, events, action handlers, the observer, the later store — is queued under the lock
/// and carried out, in order, outside it by whichever caller finds nobody else doing it. So presenter calls
/// never overlap, handlers may call back into the center, and ``present(_:)`` never waits for another thread's
/// handler.
///
/// ## Lifetime
/// Keep the center for as long as its toasts may be on screen (a long-lived app keeps it in a property of its app
/// or scene; a short-lived program calls ``flush()`` or awaits ``outcome(of:)`` before it exits). When a center is
/// deinitialized its event streams finish. Toasts still live at that moment are left as they are on the presenter
/// and get no terminal event; their actions can no longer run, and if any has actions the center says so through
/// ``diagnostics``. Call ``dismissAll()`` first if they should end.
///
/// ## Time
/// The rules live in ``ToastStack``, fed with "now" from the injected `Clock`. One timer task at a time sleeps
/// until the front toast's deadline; it is replaced whenever the deadline changes.
public final class ToastCenter: Sendable {
    let state: Mutex<ToastCenterState>
    let time: ToastTimeSource
    let laterStore: (any LaterStore)?

    /// Creates a center.
    ///
    /// The presenter must be passed explicitly (possibly `nil`, to attach one later), so that the `ToastKit`
    /// module's `ToastCenter()` — which attaches the desktop presenter — is never ambiguous with this one.
    /// - Parameters:
    ///   - defaultDuration: The duration of `.automatic` toasts (4 seconds by default).
    ///   - maxVisible: How many toasts are on screen at once (three by default, stacked as the desktop draws them,
    ///     the newest in front: only its time runs); values below 1 are taken as 1. Pass 1 for the product's single
    ///     front toast with the rest waiting in turn.
    ///   - overflow: What happens to toasts beyond `maxVisible`.
    ///   - presenter: Where toasts are shown, or `nil` to attach one later.
    ///   - clock: The clock timers run on; tests pass a manual clock.
    ///   - laterStore: Where ``ToastAction/later`` toasts are kept; `nil` (the default here) keeps them in memory
    ///     only. The `ToastKit` module's desktop centers use ``FileLaterStore/standard(environment:)``, so kept toasts
    ///     survive a restart.
    ///   - labels: The built-in labels; by default chosen from the locale environment.
    ///   - confirmationDuration: How long an action's confirmation text stays.
    public init(
        defaultDuration: ToastDuration = ToastDuration.standardDefault,
        maxVisible: Int = ToastStack.Configuration.standardMaxVisible,
        overflow: ToastOverflowPolicy = .queue,
        presenter: (any ToastPresenter)?,
        clock: some Clock<Duration> = ContinuousClock(),
        laterStore: (any LaterStore)? = nil,
        labels: ToastLabels = .current,
        confirmationDuration: Duration = .milliseconds(1500)
    ) {
        let configuration = ToastStack.Configuration(
            defaultDuration: defaultDuration, maxVisible: maxVisible, overflow: overflow,
            confirmationDuration: confirmationDuration, labels: labels)
        self.state = Mutex(ToastCenterState(stack: ToastStack(configuration: configuration)))
        self.time = ToastTimeSource(clock)
        self.laterStore = laterStore
        if let presenter { attach(presenter) }
    }

    deinit {
        let (timer, subscribers, orphaned, diagnostics) = state.withLock { state in
            for task in state.snoozes.values { task.cancel() }
            let result = (
                state.timer?.task, Array(state.subscribers.values), state.stack.liveToastIDsWithActions,
                state.diagnostics
            )
            state.timer = nil
            state.subscribers = [:]
            return result
        }
        timer?.cancel()
        for subscriber in subscribers { subscriber.finish() }
        if !orphaned.isEmpty {
            let ids = orphaned.prefix(3).map { "\"\($0)\"" }.joined(separator: ", ") + (orphaned.count > 3 ? ", …" : "")
            diagnostics.write(
                "a ToastCenter was released with \(orphaned.count) live toast(s) with actions (\(ids)): they stay on "
                    + "screen until their server timeout or until closed, and their actions do nothing; keep the "
                    + "center alive, or call dismissAll() first")
        }
    }

    // MARK: - Settings

    /// The duration of `.automatic` toasts.
    public var defaultDuration: ToastDuration { state.withLock { $0.stack.configuration.defaultDuration } }
    /// How many toasts are handed to the presenter at most.
    public var maxVisible: Int { state.withLock { $0.stack.configuration.maxVisible } }
    /// What happens to toasts beyond ``maxVisible``.
    public var overflow: ToastOverflowPolicy { state.withLock { $0.stack.configuration.overflow } }
    /// The built-in labels in use.
    public var labels: ToastLabels { state.withLock { $0.stack.configuration.labels } }

    /// The style that turns toasts into requests for the presenter; ``ThemedToastStyle`` with the standard
    /// theme by default.
    public var style: any ToastStyle { state.withLock { $0.style } }

    /// Sets the style (the product page's `.toastStyle(.plain)`). Applies to toasts shown or updated from now.
    @discardableResult
    public func toastStyle(_ style: some ToastStyle) -> ToastCenter {
        state.withLock { $0.style = style }
        return self
    }

    /// Sets a themed style (the product page's `.toastTheme(ToastTheme(…))`).
    @discardableResult
    public func toastTheme(_ theme: ToastTheme) -> ToastCenter {
        toastStyle(ThemedToastStyle(theme: theme))
    }

    /// Called after an action's handler and before its effect, for every invoked action (M5).
    public var onToastAction: (@Sendable (ToastActionContext) -> Void)? {
        get { state.withLock { $0.onToastAction } }
        set { state.withLock { $0.onToastAction = newValue } }
    }

    /// Called with every event, in order, on the thread carrying out the center's work.
    public var onEvent: (@Sendable (ToastEvent) -> Void)? {
        get { state.withLock { $0.onEvent } }
        set { state.withLock { $0.onEvent = newValue } }
    }

    /// Rebuilds a kept toast from its stored record when it comes back in a new process, for example to give
    /// its actions their handlers again (see ``ToastAction/withHandler(_:)-6gylt``). Return `nil` to use
    /// ``ToastLaterRecord/makeMessage()``.
    public var laterRestorer: (@Sendable (ToastLaterRecord) -> ToastMessage?)? {
        get { state.withLock { $0.laterRestorer } }
        set { state.withLock { $0.laterRestorer = newValue } }
    }

    // MARK: - Presenting

    /// Presents `message` and returns its id (M1–M4).
    ///
    /// If the id is live (shown, covered or waiting), the toast is updated in place and brought to the front;
    /// the old presentation ends with ``ToastOutcome/replaced``. An invalid message ends at once with
    /// ``ToastOutcome/failed(_:)``; this never traps.
    @discardableResult
    public func present(_ message: ToastMessage) -> String {
        mutate { stack, now in stack.present(message, now: now) }
        return message.id
    }

    /// Presents a simple toast: `toasts.present(.warning, title: "Poco espacio", message: "…")`.
    @discardableResult
    public func present(
        _ status: ToastStatus,
        title: String,
        message: String? = nil,
        icon: ToastIcon? = nil,
        duration: ToastDuration = .automatic
    ) -> String {
        present(ToastMessage(status: status, title: title, message: message, icon: icon, duration: duration))
    }

    /// Closes the toast with `id` (``ToastOutcome/closedByApp``). Unknown ids are ignored.
    public func dismiss(id: String) {
        mutate { stack, now in stack.dismiss(id: id, now: now) }
    }

    /// Closes every toast (``ToastOutcome/closedByApp``), shown or waiting.
    public func dismissAll() {
        mutate { stack, now in stack.dismissAll(now: now) }
    }

    /// Freezes every remaining time, for example while the person touches the stack or the app is in the
    /// background.
    public func pause() {
        mutate { stack, now in stack.pause(now: now) }
    }

    /// Lets the front toast's time run again after ``pause()``.
    public func resume() {
        mutate { stack, now in stack.resume(now: now) }
    }

    /// Whether timers are paused, by the app or by the presenter (screen locked).
    public var isPaused: Bool { state.withLock { $0.stack.isPaused } }

    /// The ids of live toasts, front first, then those held until Do Not Disturb ends.
    public var liveToastIDs: [String] { state.withLock { $0.stack.liveToastIDs } }

    /// The desktop's Do Not Disturb state as the presenter last reported it (``ToastDoNotDisturb/off`` when it
    /// never did). Its changes reach the toasts they hold back as ``ToastEvent/suppressed(id:suppression:)``.
    public var doNotDisturb: ToastDoNotDisturb { state.withLock { $0.stack.doNotDisturb } }

    /// The ids of toasts held until Do Not Disturb ends, in arrival order.
    public var heldToastIDs: [String] { state.withLock { $0.stack.heldToastIDs } }

    /// Returns once the center is not waiting for its presenter's first Do Not Disturb report (at once when it is
    /// not), with the events of that report delivered: a toast presented before is then on the presenter, held,
    /// waiting behind others, or over. A presenter that reports Do Not Disturb
    /// (``ToastPresenter/reportsDoNotDisturb``) is handed nothing before that report.
    public func doNotDisturbKnown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            mutateAndDrain { state, _ in
                if state.stack.isAwaitingDoNotDisturb {
                    state.doNotDisturbWaiters.append(continuation)
                } else {
                    state.outbox.append(.resume([continuation]))
                }
            }
        }
    }

    /// Every toast and confirmation the center holds, front first, with its remaining time now and whether its
    /// timer runs (for a service that lists its toasts, or saves them to carry on after a restart).
    public var entryStates: [ToastStack.EntryState] {
        state.withLock { $0.stack.entryStates(now: time.now()) }
    }

    /// The live toast with `id`, as in ``entryStates``; nil when it is not live. Cheap for a toast near the front
    /// (it does not list the queue behind it).
    public func entryState(of id: String) -> ToastStack.EntryState? {
        state.withLock { $0.stack.entryState(of: id, now: time.now()) }
    }

    /// Whether toast `id` has been handed to the presenter (``ToastStack/isOnPresenter(_:)``: no scan of the toasts
    /// waiting behind the visible ones).
    public func isOnPresenter(_ id: String) -> Bool {
        state.withLock { $0.stack.isOnPresenter(id) }
    }

    // MARK: - Presenter

    /// The attached presenter, if any.
    public var presenter: (any ToastPresenter)? { state.withLock { $0.presenter } }

    /// Attaches `presenter` (the product page's `.toasts(toasts)`), detaching the current one first. Waiting
    /// toasts are shown and the front timer starts. Attaching the presenter already attached does nothing.
    public func attach(_ presenter: any ToastPresenter) {
        mutateAndDrain { state, now in
            guard state.presenter !== presenter else { return }
            state.detachPresenter(now: now)
            state.generation &+= 1
            let generation = state.generation
            state.presenter = presenter
            let events = ToastPresenterEvents { [weak self] report in
                self?.receive(report, generation: generation)
            }
            state.outbox.append(.connect(presenter, events))
            state.enqueue(
                state.stack.attachPresenter(now: now, awaitingDoNotDisturb: presenter.reportsDoNotDisturb))
        }
    }

    /// Detaches the presenter; its toasts are closed there and wait here with their remaining time.
    public func detach() {
        mutateAndDrain { state, now in
            state.detachPresenter(now: now)
        }
    }

    private func receive(_ report: ToastPresenterReport, generation: UInt64) {
        mutateAndDrain { state, now in
            guard state.generation == generation, state.presenter != nil else { return }
            state.enqueue(state.stack.handle(report, now: now))
        }
    }

    // MARK: - Later

    /// Tells the center the host is active again (the page appeared, the window got focus): toasts kept with
    /// ``ToastAction/later`` are presented again, here and from earlier runs of the program (M6).
    public func hostDidBecomeActive() {
        mutateAndDrain { state, _ in
            state.outbox.append(.restoreLater)
        }
    }

    // MARK: - Events

    /// A new stream of events from now on. Each call gives an independent stream; events are buffered without
    /// limit so none is lost. The stream finishes when the center is deinitialized.
    public func events() -> AsyncStream<ToastEvent> {
        let (stream, continuation) = AsyncStream<ToastEvent>.makeStream(bufferingPolicy: .unbounded)
        let key = state.withLock { state in
            state.nextSubscriber &+= 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    // MARK: - Driving

    /// Runs a stack operation at the current time and carries out what it returns.
    func mutate(_ operation: (inout ToastStack, Duration) -> [ToastStack.Output]) {
        mutateAndDrain { state, now in
            state.enqueue(operation(&state.stack, now))
        }
    }

    /// Changes the state under the lock, re-arms the timer, then carries out queued work outside the lock if no
    /// one else is doing it.
    func mutateAndDrain(_ body: (inout ToastCenterState, Duration) -> Void) {
        let (shouldDrain, staleTimer) = state.withLock { state in
            body(&state, time.now())
            if !state.doNotDisturbWaiters.isEmpty, !state.stack.isAwaitingDoNotDisturb {
                state.outbox.append(.resume(state.doNotDisturbWaiters))
                state.doNotDisturbWaiters = []
            }
            let stale = rearmTimer(&state)
            return (state.claimDrain(), stale)
        }
        staleTimer?.cancel()
        if shouldDrain { drain() }
    }

    /// Makes sure a timer task wakes by the stack's next deadline; returns a task that is no longer needed.
    ///
    /// A sleeping task whose deadline is at or before the new one is kept: it wakes first, finds nothing due and
    /// re-arms then. So a deadline that keeps moving later (one toast replaced many times, each with its full
    /// duration from now) costs no task per change, only one per deadline reached.
    private func rearmTimer(_ state: inout ToastCenterState) -> Task<Void, Never>? {
        guard let deadline = state.stack.nextDeadline else {
            // Nothing runs (paused, empty): no task sleeps for nothing.
            defer { state.timer = nil }
            return state.timer?.task
        }
        if let timer = state.timer, timer.deadline <= deadline { return nil }
        let stale = state.timer?.task
        state.timerSerial &+= 1
        let serial = state.timerSerial
        let task = time.wake(at: deadline) { [weak self] in self?.timerFired(serial: serial) }
        state.timer = ToastCenterState.Timer(deadline: deadline, serial: serial, task: task)
        return stale
    }

    private func timerFired(serial: UInt64) {
        mutateAndDrain { state, now in
            if state.timer?.serial == serial { state.timer = nil }
            state.enqueue(state.stack.advance(to: now))
        }
    }
}
