/// Everything a ``ToastCenter`` keeps behind its lock.
struct ToastCenterState: Sendable {
    struct Timer: Sendable {
        var deadline: Duration
        var serial: UInt64
        var task: Task<Void, Never>
    }

    var stack: ToastStack
    var presenter: (any ToastPresenter)?
    /// Bumped on every attach, so reports from a detached presenter are ignored.
    var generation: UInt64 = 0
    var style: any ToastStyle = ThemedToastStyle(theme: .standard)
    var onToastAction: (@Sendable (ToastActionContext) -> Void)?
    var onEvent: (@Sendable (ToastEvent) -> Void)?
    var laterRestorer: (@Sendable (ToastLaterRecord) -> ToastMessage?)?
    var subscribers: [UInt64: AsyncStream<ToastEvent>.Continuation] = [:]
    var nextSubscriber: UInt64 = 0
    var timer: Timer?
    var timerSerial: UInt64 = 0

    /// Work waiting to be carried out outside the lock, in order.
    var outbox: [ToastCenterWork] = []
    /// Whether some caller is carrying out the outbox; only one does at a time.
    var isDraining = false

    /// Waiting for the end of the current presentation of an id (``ToastCenter/outcome(of:)``), by id.
    var outcomeWaiters: [String: [(key: UInt64, continuation: CheckedContinuation<ToastOutcome, any Error>)]] = [:]
    var nextOutcomeWaiter: UInt64 = 0
    /// Waiters cancelled before their registration reached the outbox.
    var cancelledOutcomeWaiters: Set<UInt64> = []
    /// How recently ended ids ended, for an ``ToastCenter/outcome(of:)`` that asks after the end (bounded).
    var recentOutcomes = Recents<ToastOutcome>()
    /// Waiting for a toast to be on the presenter (the start of a ``ToastCenter/presentAndWait(_:timeout:)``'s
    /// clock), by id; resumed by its ``ToastEvent/shown(id:)``.
    var shownWaiters: [String: [(key: UInt64, continuation: CheckedContinuation<Void, Never>)]] = [:]
    var nextShownWaiter: UInt64 = 0
    /// Shown waiters cancelled before they were registered.
    var cancelledShownWaiters: Set<UInt64> = []
    /// Waiting for the outbox to be carried out (``ToastCenter/flush()``).
    var drainWaiters: [CheckedContinuation<Void, Never>] = []
    /// Waiting for the presenter's first Do Not Disturb report (``ToastCenter/doNotDisturbKnown()``).
    var doNotDisturbWaiters: [CheckedContinuation<Void, Never>] = []
    /// Where failures go when nobody listens to events.
    var diagnostics: ToastDiagnostics = .standardError
    /// Diagnostics already written, so each kind is written once.
    var reportedDiagnostics: Set<String> = []

    /// The `async` action handlers still running, by serial: ``ToastCenter/flush()`` waits for them.
    var runningHandlers: [UInt64: Task<Void, Never>] = [:]
    var nextHandler: UInt64 = 0
    /// The tasks among ``runningHandlers`` that ask for a reply's text, by the presentation they ask for.
    var replyPrompts: [UInt64: UInt64] = [:]

    /// Messages kept with "Later" in this process, with their handlers, by id.
    var keptMessages: [String: ToastMessage] = [:]
    /// Kept toasts the store could not save; they still come back in this process.
    var unsavedLater: [ToastLaterRecord] = []
    /// Snoozed toasts (``ToastAction/later(after:)``) waiting for their time: the wake-up that brings each back.
    var snoozes: [String: Task<Void, Never>] = [:]

    init(stack: ToastStack) {
        self.stack = stack
    }

    /// Queues the stack's outputs, binding presenter calls to the current presenter and style.
    mutating func enqueue(_ outputs: [ToastStack.Output]) {
        for output in outputs {
            switch output {
            case .show(let toast):
                if let presenter { outbox.append(.show(presenter, toast, style)) }
            case .update(let toast):
                if let presenter { outbox.append(.update(presenter, toast, style)) }
            case .close(let id, let reason):
                if let presenter { outbox.append(.close(presenter, id, reason)) }
            case .timer(let id, let remaining, let isRunning):
                if let presenter { outbox.append(.timer(presenter, id, remaining: remaining, isRunning: isRunning)) }
            case .event(let event):
                outbox.append(.event(event))
            case .runAction(let invocation):
                outbox.append(.runAction(invocation))
            case .promptReply(let invocation, let prompt):
                outbox.append(.promptReply(presenter, invocation, prompt))
            case .cancelReplyPrompt(let presentation):
                outbox.append(.cancelReplyPrompt(presentation))
            case .keepForLater(let message):
                outbox.append(.keepForLater(message))
            }
        }
    }

    /// Detaches the current presenter, closing its toasts there first.
    mutating func detachPresenter(now: Duration) {
        guard let old = presenter else { return }
        enqueue(stack.detachPresenter(now: now))
        presenter = nil
        outbox.append(.disconnect(old))
    }

    /// Remembers how `id` ended (the last 256 ids).
    mutating func remember(_ outcome: ToastOutcome, of id: String) {
        recentOutcomes.remember(outcome, for: id)
    }

    /// Returns `true` if the caller must drain the outbox (nobody else is).
    mutating func claimDrain() -> Bool {
        guard !outbox.isEmpty, !isDraining else { return false }
        isDraining = true
        return true
    }
}

/// One piece of work a center carries out outside its lock.
enum ToastCenterWork: Sendable {
    case show(any ToastPresenter, PresentedToast, any ToastStyle)
    case update(any ToastPresenter, PresentedToast, any ToastStyle)
    case close(any ToastPresenter, String, ToastCloseReason)
    case timer(any ToastPresenter, String, remaining: Duration?, isRunning: Bool)
    case connect(any ToastPresenter, ToastPresenterEvents)
    case disconnect(any ToastPresenter)
    case event(ToastEvent)
    case runAction(ToastStack.ActionInvocation)
    /// With no presenter (detached meanwhile) the prompt is unavailable, and the toast gets its time back.
    case promptReply((any ToastPresenter)?, ToastStack.ActionInvocation, ToastReplyPrompt)
    /// Cancels the task asking for that presentation's reply (the presenter closes its prompt).
    case cancelReplyPrompt(UInt64)
    case keepForLater(ToastMessage)
    case restoreLater
    /// Registers an ``ToastCenter/outcome(of:)`` waiter in order with the events around it.
    case awaitOutcome(String, key: UInt64, CheckedContinuation<ToastOutcome, any Error>)
    /// Resumes ``ToastCenter/doNotDisturbKnown()`` waiters, after the events that came before.
    case resume([CheckedContinuation<Void, Never>])
}
