// ToastStack+Reports: what the presenter reports: an action chosen (and a reply asked for), a toast closed on the
// server, a failure, a request to show everything again.

extension ToastStack {
    // MARK: - Presenter reports

    /// The person chose an action (`reply`: with the text typed in the service's own reply field). A reply action
    /// chosen as a plain button asks for its text first (``Output/promptReply(_:_:)``).
    mutating func invokeAction(
        toastID: String, key: String, token: String?, reply: String?, now: Duration, into out: inout [Output]
    ) {
        guard let index = entries.firstIndex(where: { $0.id == toastID }),
            entries[index].presenter == .shown, entries[index].pendingAction == nil || entries[index].isPrompting,
            case .toast(let message) = entries[index].content
        else { return }
        let match = message.actions.first { role, action in
            role == .tap ? key == ToastActionRole.tapKey : key == action.id
        }
        guard let action = match?.action else { return }
        if entries[index].isPrompting {
            // Another button while the dialog is open (or the text from the service's own field): that choice wins,
            // and the dialog closes. The same reply button again leaves the open dialog be.
            guard action.id != entries[index].pendingAction || reply != nil else { return }
            cancelPrompt(of: entries[index], into: &out)
            entries[index].isPrompting = false
        }
        entries[index].pendingAction = action.id
        entries[index].isPrompting = action.reply != nil && reply == nil
        let context = ToastActionContext(
            toast: message, actionID: action.id, activationToken: token, reply: action.reply == nil ? nil : reply)
        let invocation = ActionInvocation(context: context, action: action, presentation: entries[index].serial)
        if let field = action.reply, reply == nil {
            let prompt = ToastReplyPrompt(
                toastID: message.id, title: message.title, message: message.message,
                actionTitle: action.builtInLabel.map { configuration.labels[$0] } ?? action.title, field: field,
                activationToken: token)
            out.append(.event(.replyAsked(id: message.id, actionID: action.id)))
            out.append(.promptReply(invocation, prompt))
            // Every wait ends: the toast's time runs on while the prompt is open, with at least the reply allowance.
            if let left = entries[index].remaining(at: now) {
                entries[index].remainingBeforePrompt = left
                entries[index].remaining = max(left, configuration.replyAllowance)
                if entries[index].runningSince != nil { entries[index].runningSince = now }
            }
        } else {
            out.append(.runAction(invocation))
        }
    }

    /// What came of the prompt for a reply action's text: the text runs the action (handler, observer, effect);
    /// a cancel, or no prompt at all, gives the toast back its time (and shows it again if the server closed it
    /// meanwhile). Does nothing if the presentation already ended.
    public mutating func replyPrompted(
        _ invocation: ActionInvocation, result: ToastReplyPromptResult, now: Duration
    ) -> [Output] {
        var out: [Output] = []
        expireDue(now: now, into: &out)
        guard let index = entries.firstIndex(where: { $0.serial == invocation.presentation }),
            entries[index].pendingAction == invocation.action.id, entries[index].isPrompting
        else {
            reconcile(now: now, into: &out)
            return out
        }
        let id = entries[index].id
        entries[index].isPrompting = false
        switch result {
        case .text(let text):
            var answered = invocation
            answered.context.reply = text
            out.append(.runAction(answered))
        case .cancelled, .unavailable:
            entries[index].pendingAction = nil
            leavePrompt(at: index, now: now)
            if entries[index].presenter == .gone {
                // Closed by the server meanwhile: shown again, wherever it stands among the visible ones.
                entries[index].presenter = .off
                reshowVisible = true
            }
            if case .unavailable(let reason) = result {
                out.append(.event(.degraded(id: id, reason: "the reply could not be asked for: \(reason)")))
            }
            out.append(.event(.replyCancelled(id: id, actionID: invocation.action.id)))
        }
        reconcile(now: now, into: &out)
        return out
    }

    /// A reply prompt closed without a text: the toast keeps the time it has, but no more than it had when the prompt
    /// opened (the allowance was for typing).
    mutating func leavePrompt(at index: Int, now: Duration) {
        guard let before = entries[index].remainingBeforePrompt else { return }
        entries[index].remainingBeforePrompt = nil
        guard let left = entries[index].remaining(at: now) else { return }
        entries[index].remaining = min(left, before)
        if entries[index].runningSince != nil { entries[index].runningSince = now }
    }

    mutating func closedByPresenter(
        toastID: String, reason: ToastPresenterCloseReason, into out: inout [Output]
    ) {
        guard let index = entries.firstIndex(where: { $0.id == toastID }), entries[index].presenter == .shown
        else { return }
        if entries[index].pendingAction != nil {
            entries[index].presenter = .gone
            return
        }
        entries[index].presenter = .off
        let outcome: ToastOutcome =
            switch reason {
            case .expired: .expired
            case .closedByCall: .closedByApp
            case .dismissedByUser, .other: .dismissed
            }
        end(at: index, outcome: outcome, closeReason: nil, into: &out)
    }

    mutating func presenterFailed(
        toastID: String?, reason: String, recoverable: Bool, into out: inout [Output]
    ) {
        let targets = entries.filter { entry in
            entry.presenter == .shown && (toastID == nil || entry.id == toastID)
        }.map(\.serial)
        if recoverable {
            for serial in targets {
                guard let index = entries.firstIndex(where: { $0.serial == serial }) else { continue }
                entries[index].presenter = .failed
                if entries[index].isToast {
                    out.append(.event(.presenterFailed(id: entries[index].id, reason: reason)))
                }
            }
            if targets.isEmpty, toastID == nil {
                out.append(.event(.presenterFailed(id: nil, reason: reason)))
            }
            return
        }
        for serial in targets {
            guard let index = entries.firstIndex(where: { $0.serial == serial }) else { continue }
            entries[index].presenter = .off
            end(at: index, outcome: .failed(.presenter(reason: reason)), closeReason: nil, into: &out)
        }
    }

    mutating func reshow(now: Duration, into out: inout [Output]) {
        guard isPresenterAttached else { return }
        // Taken off here and shown again by the reconcile that follows, after the timers are settled, so each
        // snapshot says whether its timer runs.
        for index in entries.indices.prefix(capacity)
        where entries[index].presenter == .shown || entries[index].presenter == .failed {
            entries[index].presenter = .off
        }
        reshowVisible = true
    }
}
