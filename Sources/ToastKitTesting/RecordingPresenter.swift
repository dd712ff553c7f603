import Synchronization
public import ToastModel

/// An in-memory presenter that records every command, for tests and for apps that want to see what would
/// be shown.
///
/// It can act as the person or the server: ``invokeAction(_:on:activationToken:)`` (by the action's id or its
/// presenter key; a wrong one throws ``ToastTestingMismatch`` naming the keys on offer), ``dismissByUser(_:)``,
/// ``fail(_:reason:recoverable:)``, ``requestReshow()``, ``requestPause()``… And the `onShow` closure of ``init(onShow:)`` lets a test
/// script a reaction to each show (for example, dismiss at once).
public final class RecordingPresenter: ToastPresenter {
    /// One call the center made.
    public enum Command: Sendable, Hashable {
        /// `ToastPresenter.show(_:)`.
        case show(ToastPresentation)
        /// `ToastPresenter.update(_:)`.
        case update(ToastPresentation)
        /// `ToastPresenter.close(id:reason:)`.
        case close(id: String, reason: ToastCloseReason)
        /// `ToastPresenter.timerChanged(id:remaining:isRunning:)`.
        case timer(id: String, remaining: Duration?, isRunning: Bool)

        /// The toast the command is about.
        public var id: String {
            switch self {
            case .show(let presentation), .update(let presentation): presentation.id
            case .close(let id, _), .timer(let id, _, _): id
            }
        }

        /// A short form for assertions: `"show A"`, `"update A"`, `"close A expired"`, `"timer A stopped"`,
        /// `"timer A running"`.
        public var summary: String {
            switch self {
            case .show(let presentation): "show \(presentation.id)"
            case .update(let presentation): "update \(presentation.id)"
            case .close(let id, let reason): "close \(id) \(reason.rawValue)"
            case .timer(let id, _, let isRunning): "timer \(id) \(isRunning ? "running" : "stopped")"
            }
        }
    }

    private struct Waiter {
        var id: UInt64
        var count: Int
        var continuation: CheckedContinuation<[Command], any Error>
    }

    private struct State {
        var commands: [Command] = []
        var onScreen: [String: ToastPresentation] = [:]
        var order: [String] = []
        var events: ToastPresenterEvents?
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
        var onShow: (@Sendable (ToastPresentation, ToastPresenterEvents) -> Void)?
        var isConnected = false
        var prompts: [ToastReplyPrompt] = []
        var closedPrompts: [String] = []
        var answer: @Sendable (ToastReplyPrompt) async -> ToastReplyPromptResult = { _ in
            .unavailable(reason: "RecordingPresenter: no reply answer set (answerReplies(_:))")
        }
    }

    private let state = Mutex(State())

    /// Creates a presenter. `onShow` runs after each show is recorded, with the sink, to script reactions.
    public init(onShow: (@Sendable (ToastPresentation, ToastPresenterEvents) -> Void)? = nil) {
        state.withLock { $0.onShow = onShow }
    }

    // MARK: - Recorded state

    /// Every command so far, in order.
    public var commands: [Command] { state.withLock { $0.commands } }

    /// ``Command/summary`` of every command so far (`"show A"`, `"close A expired"`, …): the commands, not the
    /// toasts' titles (``shownTitles``).
    public var commandSummaries: [String] { commands.map(\.summary) }

    /// The title of every toast shown so far, in the order of the `show` commands: what the notification's summary
    /// (`ToastRequest/summary`) says to the person.
    public var shownTitles: [String] {
        commands.compactMap { command in
            guard case .show(let presentation) = command else { return nil }
            return presentation.request.summary
        }
    }

    /// ``commandSummaries``, under its old name: on this platform a notification's summary is its title, which
    /// this is not.
    @available(*, deprecated, renamed: "commandSummaries")
    public var summaries: [String] { commandSummaries }

    /// The presentations on screen now, in the order they were first shown.
    public var onScreen: [ToastPresentation] {
        state.withLock { state in state.order.compactMap { state.onScreen[$0] } }
    }

    /// The presentation of `id` on screen now, if any.
    public func presentation(of id: String) -> ToastPresentation? {
        state.withLock { $0.onScreen[id] }
    }

    /// Whether a center is connected.
    public var isConnected: Bool { state.withLock { $0.isConnected } }

    /// Waits until at least `count` commands were recorded, and returns them all.
    ///
    /// - Throws: ``ToastTestingTimeout`` when fewer were recorded within `timeout` of real time (its description
    ///   lists what was), so a wrong expectation fails the test instead of hanging it.
    @discardableResult
    public func commands(count: Int, timeout: Duration = .seconds(10)) async throws(ToastTestingTimeout) -> [Command] {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let deadline = Task { [self] in
            try await Task.sleep(for: timeout)
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
        defer { deadline.cancel() }
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let ready: [Command]? = state.withLock { state in
                    if state.commands.count >= count { return state.commands }
                    state.waiters.append(Waiter(id: id, count: count, continuation: continuation))
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } catch {
            throw ToastTestingTimeout(
                "RecordingPresenter: waited \(timeout) for \(count) command(s); recorded \(commandSummaries.count): \(commandSummaries)"
            )
        }
    }

    // MARK: - ToastPresenter

    /// Keeps the sink.
    public func connect(_ events: ToastPresenterEvents) {
        state.withLock {
            $0.events = events
            $0.isConnected = true
        }
    }

    /// Forgets the sink.
    public func disconnect() {
        state.withLock {
            $0.events = nil
            $0.isConnected = false
        }
    }

    /// Records a show.
    public func show(_ presentation: ToastPresentation) {
        let (hook, events) = record(.show(presentation)) { state in
            if state.onScreen[presentation.id] == nil { state.order.append(presentation.id) }
            state.onScreen[presentation.id] = presentation
        }
        if let hook, let events { hook(presentation, events) }
    }

    /// Records an update.
    public func update(_ presentation: ToastPresentation) {
        _ = record(.update(presentation)) { state in
            if state.onScreen[presentation.id] == nil { state.order.append(presentation.id) }
            state.onScreen[presentation.id] = presentation
        }
    }

    /// Records a close.
    public func close(id: String, reason: ToastCloseReason) {
        _ = record(.close(id: id, reason: reason)) { state in
            state.onScreen[id] = nil
            state.order.removeAll { $0 == id }
        }
    }

    /// Records a timer change and keeps the on-screen snapshot's timing in step.
    public func timerChanged(id: String, remaining: Duration?, isRunning: Bool) {
        _ = record(.timer(id: id, remaining: remaining, isRunning: isRunning)) { state in
            state.onScreen[id]?.toast.remaining = remaining
            state.onScreen[id]?.toast.isTimerRunning = isRunning
        }
    }

    private func record(
        _ command: Command, _ change: (inout State) -> Void
    ) -> ((@Sendable (ToastPresentation, ToastPresenterEvents) -> Void)?, ToastPresenterEvents?) {
        let (ready, hook, events) = state.withLock { state in
            state.commands.append(command)
            change(&state)
            let count = state.commands.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return (ready.map { ($0, state.commands) }, state.onShow, state.events)
        }
        for (continuation, commands) in ready { continuation.resume(returning: commands) }
        return (hook, events)
    }

    // MARK: - Acting as the person or the server

    private var events: ToastPresenterEvents? { state.withLock { $0.events } }

    /// The person invoked `action` on the toast `id` now on screen: `action` is the action's own id (`"open"`, as
    /// events report it) or its presenter key (`"default"` for the tap action, the id for the others).
    ///
    /// ```swift
    /// try presenter.invokeAction("open", on: id)       // the tap action whose id is "open"
    /// try presenter.invokeAction("default", on: id)    // the same, by its key
    /// ```
    /// - Throws: ``ToastTestingMismatch`` when the toast is not on screen or has no such action; the description
    ///   lists what there is, so a wrong expectation fails the test instead of leaving an `outcome(of:)` waiting.
    public func invokeAction(
        _ action: String, on id: String, activationToken: String? = nil
    ) throws(ToastTestingMismatch) {
        guard let presentation = presentation(of: id) else {
            let shown = onScreen.map { "\"\($0.id)\"" }
            throw ToastTestingMismatch(
                "RecordingPresenter: cannot invoke \"\(action)\" on toast \"\(id)\": it is not on screen (on screen: "
                    + (shown.isEmpty ? "nothing" : shown.joined(separator: ", ")) + ")")
        }
        let actions = presentation.toast.actions
        guard let match = actions.first(where: { $0.key == action }) ?? actions.first(where: { $0.actionID == action })
        else {
            let offer = actions.map {
                $0.key == $0.actionID ? "\"\($0.key)\"" : "\"\($0.key)\" (id \"\($0.actionID)\")"
            }
            throw ToastTestingMismatch(
                "RecordingPresenter: toast \"\(id)\" has no action \"\(action)\"; on offer: "
                    + (offer.isEmpty ? "no actions" : offer.joined(separator: ", ")))
        }
        reportActionInvoked(key: match.key, on: id, activationToken: activationToken)
    }

    /// Reports an action with presenter key `key` on `id` as a server would, unchecked: for a test of what the center
    /// does with a stale or unknown report (a double click, a toast no longer shown).
    public func reportActionInvoked(key: String, on id: String, activationToken: String? = nil) {
        events?.actionInvoked(toastID: id, key: key, activationToken: activationToken)
    }

    /// The person typed `text` in the reply field the service drew for reply action `action` (its key or id) on
    /// `id`, as Plasma reports it (`NotificationReplied`).
    public func reply(_ text: String, to action: String, on id: String, activationToken: String? = nil) {
        let key = presentation(of: id)?.toast.actions.first { $0.key == action || $0.actionID == action }?.key ?? action
        events?.replied(toastID: id, key: key, text: text, activationToken: activationToken)
    }

    /// What ``promptReply(_:)`` answers from now on: the person's text, a cancel, or no prompt; `answer` may wait
    /// (a person typing). By default no prompt can be shown.
    public func answerReplies(_ answer: @escaping @Sendable (ToastReplyPrompt) async -> ToastReplyPromptResult) {
        state.withLock { $0.answer = answer }
    }

    /// Every reply prompt asked for so far, in order.
    public var prompts: [ToastReplyPrompt] { state.withLock { $0.prompts } }

    /// The toasts whose prompt the center closed while it was open (its task was cancelled: the toast ended or was
    /// replaced, or the presenter was detached), in order.
    public var closedPrompts: [String] { state.withLock { $0.closedPrompts } }

    /// Records the prompt and answers it as ``answerReplies(_:)`` says; a cancel of the asking task is recorded in
    /// ``closedPrompts`` (and reaches `answer`, which should then end).
    public func promptReply(_ prompt: ToastReplyPrompt) async -> ToastReplyPromptResult {
        let answer = state.withLock { state in
            state.prompts.append(prompt)
            return state.answer
        }
        return await withTaskCancellationHandler {
            await answer(prompt)
        } onCancel: {
            state.withLock { $0.closedPrompts.append(prompt.toastID) }
        }
    }

    /// The person closed the toast.
    public func dismissByUser(_ id: String) {
        removeFromScreen(id)
        events?.closed(toastID: id, reason: .dismissedByUser)
    }

    /// The server closed the toast for `reason`.
    public func closeByServer(_ id: String, reason: ToastPresenterCloseReason) {
        removeFromScreen(id)
        events?.closed(toastID: id, reason: reason)
    }

    /// Showing failed (`id == nil`: for every toast).
    public func fail(_ id: String?, reason: String, recoverable: Bool) {
        if let id { removeFromScreen(id) }
        events?.failed(toastID: id, reason: reason, recoverable: recoverable)
    }

    /// Reports a degraded feature.
    public func degrade(_ id: String?, reason: String) {
        events?.degraded(toastID: id, reason: reason)
    }

    /// Asks the center to show everything again (server restarted).
    public func requestReshow() {
        events?.reshowAll()
    }

    /// Asks the center to pause (screen locked).
    public func requestPause() {
        events?.pause()
    }

    /// Asks the center to resume (screen unlocked).
    public func requestResume() {
        events?.resume()
    }

    private func removeFromScreen(_ id: String) {
        state.withLock { state in
            state.onScreen[id] = nil
            state.order.removeAll { $0 == id }
        }
    }
}
