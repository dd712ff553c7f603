// The centers' events as the agent follows them: each handed to the ledger, and what it says carried out — commands
// run, waiters resumed, ends recorded for `Wait`, every change saved and announced with the `Event` signal.
import DBus
import ToastKit
import ToastModel

extension ToastAgent {
    /// Follows the centers' events (one handler for every lane's center).
    func watchEvents() {
        relay.set { [weak self] event in
            guard let self else { return }
            switch event {
            case .degraded(let id?, let reason):
                // After `Present` answered (a sound that failed late, a later update's): to whoever waits for the toast
                // (`send --wait`, `wait --id`), and to the log.
                guard !style.warn(reason, for: id) else { break }
                ErrorLine.write("warning: toast \"\(id)\": \(reason)")
                announce(id, .warning, ["reason": .string(reason)])
            case .suppressed(let id, let suppression):
                let actions = ledger.withLock { $0.handle(.suppressed(id: id, suppression)) }
                announce(id, .suppressed, Dictionary(uniqueKeysWithValues: AgentInterface.details(of: suppression)))
                // A `Present` waiting for it to be shown answers now: it is held (for as long as Do Not Disturb lasts).
                carry(actions)
            case .replyAsked(let id, let actionID):
                announce(id, .replyAsked, ["action": .string(actionID)])
            case .replyCancelled(let id, let actionID):
                announce(id, .replyCancelled, ["action": .string(actionID)])
            case .replied(let id, let actionID, let text):
                carry(ledger.withLock { $0.handle(.replied(id: id, action: actionID, text: text)) })
                announce(id, .replied, ["action": .string(actionID), "text": .string(text)])
            case .actionInvoked(let id, let actionID, let token):
                carry(ledger.withLock { $0.handle(.actionInvoked(id: id, action: actionID, token: token)) })
            case .shown(let id):
                carry(ledger.withLock { $0.handle(.shown(id: id)) })
                // A scheduled toast is settled once a server has it (a bus closing before that gives it back).
                if ledger.withLock({ $0.claims.holds(id) }) {
                    let desktop = self.desktop
                    Task { [weak self] in
                        if (try? await desktop.accepted(id)) != nil { self?.ledger.withLock { $0.claims.settle(id) } }
                    }
                }
                // Its timer starts now: what a restarted agent must know.
                let entry = center(holding: id)?.entryState(of: id)
                saver.changed(.timer(id, remaining: entry?.remaining?.seconds, running: entry?.isRunning ?? false))
            case .ended(let id, let outcome):
                let actions = ended(id, outcome)
                // A scheduled toast that failed on the way to the server (the bus closing under it) is still owed.
                if actions.contains(.forget(id: id)) {
                    if case .failed(.presenter) = outcome {} else { ledger.withLock { $0.claims.settle(id) } }
                }
                carry(actions)
            case .presented(let id):
                // A new presentation: what Do Not Disturb did to an earlier one of the id is not its story.
                carry(ledger.withLock { $0.handle(.presented(id: id)) })
                announce(id, .presented, [:])
            default:
                break
            }
        }
    }

    /// Passes on what the presenter tells the center about the server and the screen, as `Event` signals with an
    /// empty id — `server-left` (with `reason`), `server-back`, `paused`, `resumed` — for the commands that wait
    /// through the agent: they keep the same limits as a waiting `send` on the direct path (``WaitLimits``).
    func watchReports() {
        let reports = observer.reports
        Task { [weak self] in
            for await report in reports {
                guard let self else { return }
                switch report {
                case .failed(let id, let reason, recoverable: true):
                    announce(id ?? "", .serverLeft, ["reason": .string(reason)])
                case .reshowRequested: announce("", .serverBack, [:])
                case .pauseRequested: announce("", .paused, [:])
                case .resumeRequested: announce("", .resumed, [:])
                default: break
                }
            }
        }
    }

    /// The `ended` event of toast `id`: its outcome's name, with its details.
    func announceEnd(_ id: String, _ ended: AgentOutcome) {
        announce(id, .ended, ["outcome": .string(ended.name)].merging(ended.details) { first, _ in first })
    }

    /// Emits the `Event` signal of toast `id` (empty: about the server or the screen).
    func announce(_ id: String, _ kind: AgentInterface.EventKind, _ details: [String: DBusValue]) {
        events.yield(
            .emit([
                .string(id), .string(kind.rawValue),
                .variantDictionary(details.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
            ]))
    }

    /// Returns once every `Event` signal announced so far is sent: a reply sent after it (`Wait`'s) comes after
    /// them on the wire, so its caller has heard what happened before the end (`reply_cancelled` before `closed`).
    func eventsSent() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if case .terminated = events.yield(.barrier(continuation)) { continuation.resume() }
        }
    }
}

/// What the agent's one emitter of `Event` signals is handed, in order.
enum EventSignal: Sendable {
    /// Emit the signal with these arguments.
    case emit([DBusValue])
    /// Resume this once every signal before it is sent.
    case barrier(CheckedContinuation<Void, Never>)
}
