import Glibc
import ToastKit

/// Stays with a sent toast until it ends (`--wait`), printing the invoked action and turning the outcome into the
/// exit code. SIGINT or SIGTERM closes the toast on the server before the command exits.
struct Waiter {
    let id: String
    let serverID: UInt32
    let json: Bool
    let center: ToastCenter
    let presenter: ObservingPresenter
    /// The ids of the actions that show a confirmation (it stays after the toast's end, until the center closes it).
    let confirmingActions: Set<String>

    private enum Input: Sendable {
        case event(ToastEvent)
        case signal(Int32)
    }

    func wait(events: AsyncStream<ToastEvent>, signals: AsyncStream<Int32>) async -> ExitCode {
        let (inputs, continuation) = AsyncStream<Input>.makeStream()
        let forwardEvents = Task {
            for await event in events { continuation.yield(.event(event)) }
        }
        let forwardSignals = Task {
            for await signal in signals { continuation.yield(.signal(signal)) }
        }
        defer {
            forwardEvents.cancel()
            forwardSignals.cancel()
        }
        // A Later store problem that left the toast unsaved (the center keeps it in memory only, which ends with
        // this process): "deferred" would then be a lie.
        var unsaved: LaterStoreProblem?
        for await input in inputs {
            switch input {
            case .event(.laterStoreProblem(let problem)):
                if problem.kind == .unwritable || problem.setAsideAt == nil {
                    unsaved = problem
                } else {
                    Output.error("warning: \(problem)")
                }
            case .event(.ended(let toast, .deferred)) where toast == id && unsaved != nil:
                _ = try? await presenter.desktop.accepted(id)
                let reason = "the toast was not kept for later: \(unsaved!)"
                if json { emit("failed", ["reason": .string(reason)]) }
                Output.error(reason)
                return .ioError
            case .signal(let signal):
                center.dismiss(id: id)
                // Returns once the CloseNotification call has been answered.
                _ = try? await presenter.desktop.accepted(id)
                if json {
                    emit(
                        "closed", ["reason": .string("interrupted"), "signal": .string(SignalWatcher.name(of: signal))])
                }
                return signal == SIGINT ? .interrupted : .terminated
            case .event(.actionInvoked(let toast, let actionID, let token)) where toast == id:
                if json {
                    emit("action", ["action": .string(actionID), "activation_token": .optional(token)])
                } else {
                    Output.line(TerminalText.escape(actionID))
                }
            case .event(.presenterFailed(let toast, let reason)) where toast == nil || toast == id:
                Output.error("warning: \(reason)")
            case .event(.ended(let toast, let outcome)) where toast == id:
                if case .actionInvoked(let actionID) = outcome, confirmingActions.contains(actionID) {
                    await presenter.waitForClose(of: id, limit: .seconds(5))
                }
                // Let a close the center started reach the server before the process ends.
                _ = try? await presenter.desktop.accepted(id)
                return finish(outcome)
            default:
                break
            }
        }
        return .software
    }

    private func finish(_ outcome: ToastOutcome) -> ExitCode {
        switch outcome {
        case .actionInvoked:
            return .success
        case .dismissed:
            if json { emit("closed", ["reason": .string("dismissed")]) }
            return .dismissed
        case .expired:
            if json { emit("closed", ["reason": .string("expired")]) }
            return .expired
        case .closedByApp, .replaced:
            if json { emit("closed", ["reason": .string(outcome == .replaced ? "replaced" : "closed")]) }
            return .closed
        case .deferred:
            if json { emit("deferred", [:]) }
            return .deferred
        case .failed(let failure):
            let reason: String
            let code: ExitCode
            switch failure {
            case .invalid(let error):
                reason = SendCommand.describe(error)
                code = .dataError
            case .presenter(let text):
                reason = text
                code = .unavailable
            }
            if json { emit("failed", ["reason": .string(reason)]) }
            Output.error(reason)
            return code
        }
    }

    private func emit(_ event: String, _ fields: KeyValuePairs<String, JSONValue>) {
        var object: JSONObject = ["event": .string(event), "id": .string(id), "server_id": .integer(Int64(serverID))]
        for (key, value) in fields { object[key] = value }
        Output.json(object)
    }
}
