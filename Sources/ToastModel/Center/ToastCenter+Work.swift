import FoundationEssentials

extension ToastCenter {
    /// Carries out queued work in order until the outbox is empty. Only one caller drains at a time; work queued
    /// meanwhile (also by handlers and presenters calling back) is picked up by the same loop.
    func drain() {
        while true {
            let (batch, flushed) = state.withLock { state -> ([ToastCenterWork], [CheckedContinuation<Void, Never>]) in
                guard !state.outbox.isEmpty else {
                    state.isDraining = false
                    defer { state.drainWaiters = [] }
                    return ([], state.drainWaiters)
                }
                defer { state.outbox = [] }
                return (state.outbox, [])
            }
            if batch.isEmpty {
                for waiter in flushed { waiter.resume() }
                return
            }
            // Who listens is read once per batch, not once per event.
            var listeners: Listeners?
            for work in batch {
                if case .event(let event) = work {
                    if listeners == nil { listeners = currentListeners() }
                    listeners?.deliver(event)
                    if listeners?.isEmpty == true { diagnose(event) }
                    resumeWaiters(after: event)
                } else {
                    perform(work)
                }
            }
        }
    }

    /// The event observer and the streams, as they are now.
    struct Listeners {
        var observer: (@Sendable (ToastEvent) -> Void)?
        var subscribers: [AsyncStream<ToastEvent>.Continuation]

        func deliver(_ event: ToastEvent) {
            observer?(event)
            for subscriber in subscribers { subscriber.yield(event) }
        }

        /// Nobody reads the events: failures go to the center's diagnostics instead.
        var isEmpty: Bool { observer == nil && subscribers.isEmpty }
    }

    func currentListeners() -> Listeners {
        state.withLock { state in
            Listeners(
                observer: state.onEvent, subscribers: state.subscribers.isEmpty ? [] : Array(state.subscribers.values))
        }
    }

    private func perform(_ work: ToastCenterWork) {
        switch work {
        case .show(let presenter, let toast, let style):
            presenter.show(ToastPresentation(toast: toast, request: style.makeRequest(for: toast)))
        case .update(let presenter, let toast, let style):
            presenter.update(ToastPresentation(toast: toast, request: style.makeRequest(for: toast)))
        case .close(let presenter, let id, let reason):
            presenter.close(id: id, reason: reason)
        case .timer(let presenter, let id, let remaining, let isRunning):
            presenter.timerChanged(id: id, remaining: remaining, isRunning: isRunning)
        case .connect(let presenter, let events):
            presenter.connect(events)
        case .disconnect(let presenter):
            presenter.disconnect()
        case .event(let event):
            deliver(event)
        case .runAction(let invocation):
            runAction(invocation)
        case .promptReply(let presenter, let invocation, let prompt):
            promptReply(presenter, invocation, prompt)
        case .cancelReplyPrompt(let presentation):
            let task = state.withLock { state in
                state.replyPrompts.removeValue(forKey: presentation).flatMap { state.runningHandlers[$0] }
            }
            task?.cancel()
        case .keepForLater(let message):
            keepForLater(message)
        case .restoreLater:
            restoreLater()
        case .awaitOutcome(let id, let key, let continuation):
            awaitOutcome(id, key: key, continuation)
        case .resume(let continuations):
            for continuation in continuations { continuation.resume() }
        }
    }

    func deliver(_ event: ToastEvent) {
        let listeners = currentListeners()
        listeners.deliver(event)
        if listeners.isEmpty { diagnose(event) }
        resumeWaiters(after: event)
    }

    /// What `event`, once delivered, answers: the waiters for a toast's end, and those for its first moment on screen.
    private func resumeWaiters(after event: ToastEvent) {
        switch event {
        case .ended(let id, let outcome): ended(id, outcome)
        case .shown(let id):
            let waiters = state.withLock { $0.shownWaiters.removeValue(forKey: id) ?? [] }
            for waiter in waiters { waiter.continuation.resume() }
        default: break
        }
    }

    // MARK: - Outcomes

    /// A presentation of `id` ended: its waiters get the outcome, and it is remembered for late askers.
    private func ended(_ id: String, _ outcome: ToastOutcome) {
        let waiters = state.withLock { state in
            state.remember(outcome, of: id)
            return state.outcomeWaiters.removeValue(forKey: id) ?? []
        }
        for waiter in waiters { waiter.continuation.resume(returning: outcome) }
    }

    /// Registers a waiter, in order with the events before it: the current presentation of `id` is awaited; one
    /// that already ended answers at once; an id that is neither live nor recently ended is an error.
    private func awaitOutcome(_ id: String, key: UInt64, _ continuation: CheckedContinuation<ToastOutcome, any Error>) {
        enum Answer { case wait, ended(ToastOutcome), unknown, cancelled }
        let answer = state.withLock { state -> Answer in
            if state.cancelledOutcomeWaiters.remove(key) != nil { return .cancelled }
            if state.stack.isLive(id) {
                state.outcomeWaiters[id, default: []].append((key, continuation))
                return .wait
            }
            return state.recentOutcomes[id].map(Answer.ended) ?? .unknown
        }
        switch answer {
        case .wait: break
        case .ended(let outcome): continuation.resume(returning: outcome)
        case .unknown: continuation.resume(throwing: ToastCenterError.notPresented(id: id))
        case .cancelled: continuation.resume(throwing: CancellationError())
        }
    }

    /// M5: handler, then observer, then the effect. An `async` handler is started, not awaited.
    private func runAction(_ invocation: ToastStack.ActionInvocation) {
        switch invocation.action.handler {
        case .sync(let body): body(invocation.context)
        case .async(let body): start(body, invocation.context)
        }
        onToastAction?(invocation.context)
        if let text = invocation.context.reply {
            deliver(.replied(id: invocation.context.toast.id, actionID: invocation.context.actionID, text: text))
        }
        deliver(
            .actionInvoked(
                id: invocation.context.toast.id, actionID: invocation.context.actionID,
                activationToken: invocation.context.activationToken))
        mutate { stack, now in stack.completeAction(invocation, now: now) }
    }

    /// Asks the presenter for a reply's text in a task of its own (the person may take a while; the toast's time runs
    /// on, with at least the reply allowance), then hands the result to the stack. Kept in view for ``flush()`` like a running handler, and
    /// cancelled when the stack closes the prompt (``ToastStack/Output/cancelReplyPrompt(presentation:)``).
    private func promptReply(
        _ presenter: (any ToastPresenter)?, _ invocation: ToastStack.ActionInvocation, _ prompt: ToastReplyPrompt
    ) {
        start(
            { [weak self] _ in
                let result = await presenter?.promptReply(prompt) ?? .unavailable(reason: "no presenter is attached")
                self?.mutate { stack, now in stack.replyPrompted(invocation, result: result, now: now) }
            }, invocation.context, promptOf: invocation.presentation)
    }

    /// Starts an `async` handler in a task of its own, kept in view until it ends for ``flush()``, and marked
    /// (``RunningHandler``) so that a flush it calls itself does not wait for it.
    /// With `presentation`, the task asks for that presentation's reply and is kept in
    /// ``ToastCenterState/replyPrompts`` too.
    private func start(
        _ body: @escaping @Sendable (ToastActionContext) async -> Void, _ context: ToastActionContext,
        promptOf presentation: UInt64? = nil
    ) {
        let inherited = RunningHandler.keys
        // Made under the lock, so it is kept before it can end and remove itself.
        state.withLock { state in
            state.nextHandler &+= 1
            let key = state.nextHandler
            state.runningHandlers[key] = Task { [weak self] in
                await RunningHandler.$keys.withValue(inherited.union([key])) { await body(context) }
                self?.state.withLock { state in
                    state.runningHandlers.removeValue(forKey: key)
                    if let presentation, state.replyPrompts[presentation] == key {
                        state.replyPrompts.removeValue(forKey: presentation)
                    }
                }
            }
            if let presentation { state.replyPrompts[presentation] = key }
        }
    }

    // MARK: - Later (M6)

    private func keepForLater(_ message: ToastMessage) {
        let record = ToastLaterRecord(message: message)
        state.withLock { $0.keptMessages[message.id] = message }
        // A snooze: kept as any Later toast (so a quit program loses nothing), and brought back at its time.
        if let comesBackAt = record.comesBackAt {
            armSnooze(message.id, in: .seconds(comesBackAt.timeIntervalSince(record.deferredAt)))
        }
        guard let laterStore else {
            state.withLock { $0.unsavedLater.append(record) }
            return
        }
        var records: [ToastLaterRecord]
        do {
            records = try laterStore.load()
        } catch {
            deliver(.laterStoreProblem(error))
            guard error.setAsideAt != nil else {
                // The old data is still in place and unreadable: never overwrite it. Keep this one in memory.
                state.withLock { $0.unsavedLater.append(record) }
                return
            }
            records = []
        }
        records.removeAll { $0.id == record.id }
        records.append(record)
        do {
            try laterStore.save(records)
        } catch {
            deliver(.laterStoreProblem(error))
            state.withLock { $0.unsavedLater.append(record) }
        }
    }

    /// Brings toast `id` back `delay` from now, unless something else did first (its wake-up is replaced by a newer
    /// snooze of the id).
    private func armSnooze(_ id: String, in delay: Duration) {
        let task = time.wake(at: time.now() + max(.zero, delay)) { [weak self] in self?.snoozeEnded(id) }
        let stale = state.withLock { state in
            defer { state.snoozes[id] = task }
            return state.snoozes[id]
        }
        stale?.cancel()
    }

    /// A snoozed toast's time has come: it leaves the Later store and is presented again.
    private func snoozeEnded(_ id: String) {
        let kept = state.withLock { state -> (message: ToastMessage?, unsaved: ToastLaterRecord?) in
            state.snoozes[id] = nil
            let unsaved = state.unsavedLater.first { $0.id == id }
            state.unsavedLater.removeAll { $0.id == id }
            return (state.keptMessages.removeValue(forKey: id), unsaved)
        }
        var stored: ToastLaterRecord?
        if let laterStore {
            do {
                var records = try laterStore.load()
                stored = records.first { $0.id == id }
                if stored != nil {
                    records.removeAll { $0.id == id }
                    try laterStore.save(records)
                }
            } catch {
                deliver(.laterStoreProblem(error))
            }
        }
        // Brought back already (the host became active): nothing is kept any more.
        guard let record = kept.unsaved ?? stored ?? kept.message.map({ ToastLaterRecord(message: $0) }) else { return }
        let restorer = state.withLock { $0.laterRestorer }
        present(kept.message ?? restorer?(record) ?? record.makeMessage())
    }

    private func restoreLater() {
        var records: [ToastLaterRecord] = []
        if let laterStore {
            do {
                let all = try laterStore.load()
                // A snooze whose time is still to come stays kept, and is brought back at its time.
                let now = Date()
                let waiting = all.filter { ($0.comesBackAt ?? now) > now }
                records = all.filter { ($0.comesBackAt ?? now) <= now }
                if !records.isEmpty { try laterStore.save(waiting) }
                let armed = state.withLock { Set($0.snoozes.keys) }
                for record in waiting where !armed.contains(record.id) {
                    armSnooze(record.id, in: .seconds(record.comesBackAt!.timeIntervalSince(now)))
                }
            } catch {
                // A failed clear may bring the same toasts back next time: duplicates rather than loss.
                deliver(.laterStoreProblem(error))
            }
        }
        let due = Set(records.map(\.id))
        let (unsaved, kept, restorer) = state.withLock { state in
            // Snoozed toasts wait for their time (their wake-up brings them back); the others come back now, a
            // snooze whose time has just come included (its wake-up is cancelled: it comes once).
            for id in due { state.snoozes.removeValue(forKey: id)?.cancel() }
            let snoozed = Set(state.snoozes.keys)
            defer {
                state.unsavedLater.removeAll { !snoozed.contains($0.id) }
                state.keptMessages = state.keptMessages.filter { snoozed.contains($0.key) }
            }
            return (
                state.unsavedLater.filter { !snoozed.contains($0.id) },
                state.keptMessages.filter { !snoozed.contains($0.key) }, state.laterRestorer
            )
        }
        var seen: Set<String> = []
        for record in records + unsaved where seen.insert(record.id).inserted {
            let message = kept[record.id] ?? restorer?(record) ?? record.makeMessage()
            present(message)
        }
    }
}
