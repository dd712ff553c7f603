// `toastkit later --show` for the kept toasts this process shows again itself, and stays with until they end.
import FoundationEssentials
import Glibc
import ToastKit
import ToastKitAgent

/// `toastkit later --show` for the toasts this process shows itself: it stays with them as `send` stays with a toast
/// that has actions, so their buttons work. A kept toast's actions have no handlers (``ToastLaterRecord``): the choice
/// is printed (`ID<TAB>ACTION`, or the `action` JSON event) as `send` printed it for the script that sent it; Later
/// again closes the toast and keeps it (the center's store is the one it came from); SIGINT or SIGTERM close the
/// toasts still up and keep them again. The command ends once every toast with actions has ended.
struct LaterShow {
    let json: Bool
    /// The name the toasts are shown with (the store's application).
    let application: String
    /// The store the toasts were taken from, where Later keeps them again.
    let store: FileLaterStore

    private enum Input: Sendable {
        case event(ToastEvent)
        case signal(Int32)
    }

    /// Shows `taken` (already out of the store) and waits for the end of those with actions.
    ///
    /// - Parameter signals: SIGINT and SIGTERM, watched since before the toasts left the store.
    /// - Throws: when the server does not take a toast; every toast is then closed and kept again.
    func run(_ taken: [ToastLaterRecord], signals: SignalWatcher) async throws(CommandFailure) -> ExitCode {
        guard !taken.isEmpty else { return .success }
        // Shown because the person asked for them now: whatever Do Not Disturb says.
        var configuration = PresenterConfiguration(appName: application, callTimeout: .seconds(10))
        configuration.followsDoNotDisturb = false
        configuration.drawsProgressAsJobs = false
        let desktop = DesktopNotificationPresenter(configuration: configuration)
        let presenter = ObservingPresenter(desktop)
        let center = ToastCenter(maxVisible: taken.count, presenter: presenter, laterStore: store)
        let events = center.events()
        // The center hands every one of them to the presenter at once.
        for record in taken { center.present(record.makeMessage()) }
        var serverIDs: [String: UInt32] = [:]
        for record in taken {
            let serverID: UInt32
            do {
                serverID = try await desktop.accepted(record.id)
            } catch {
                // Nothing is left on screen with buttons that do nothing: every toast is closed and kept again.
                await closeAndKeep(taken, center: center, presenter: presenter)
                if let error = error as? PresentationError { throw BusAccess.failure(error) }
                throw CommandFailure(.software, "internal error: \(error)")
            }
            serverIDs[record.id] = serverID
            if json {
                Output.json([
                    "event": .string("presented"), "id": .string(record.id), "server_id": .integer(Int64(serverID)),
                ])
            } else {
                Output.line("\(TerminalText.escape(record.id))\t\(serverID)\t\(TerminalText.escape(record.title))")
            }
        }
        // A toast without actions has nothing to print: the server closes it in its time, as after `send`.
        var waiting = Set(taken.filter { !$0.actions.isEmpty }.map(\.id))
        guard !waiting.isEmpty else { return .success }

        let (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
        let forwarders = [
            Task { for await event in events { continuation.yield(.event(event)) } },
            Task { [stream = signals.signals] in for await signal in stream { continuation.yield(.signal(signal)) } },
        ]
        defer { for forwarder in forwarders { forwarder.cancel() } }
        func emit(_ id: String) -> (String, KeyValuePairs<String, JSONValue>) -> Void {
            { event, fields in
                guard json else { return }
                var object: JSONObject = [
                    "event": .string(event), "id": .string(id),
                    "server_id": serverIDs[id].map { .integer(Int64($0)) } ?? .null,
                ]
                for (key, value) in fields { object[key] = value }
                Output.json(object)
            }
        }
        var code = ExitCode.success
        var replies: [String: String] = [:]
        // A store problem that left a toast chosen for Later unsaved (kept in this process's memory only, which ends
        // with it): "kept" would be a lie.
        var unsaved: LaterStoreProblem?
        for await input in inputs {
            switch input {
            case .signal(let signal):
                let open = taken.filter { waiting.contains($0.id) }
                await closeAndKeep(open, center: center, presenter: presenter)
                for record in open {
                    emit(record.id)(
                        "closed",
                        ["reason": .string("interrupted"), "signal": .string(SignalWatcher.name(of: signal))])
                }
                let count = open.count == 1 ? "1 toast" : "\(open.count) toasts"
                Output.error(
                    "interrupted: \(count) closed and kept for later again (`toastkit later --show` shows "
                        + "\(open.count == 1 ? "it" : "them"))")
                return signal == SIGINT ? .interrupted : .terminated
            case .event(.replied(let id, _, let text)) where waiting.contains(id):
                replies[id] = text
            case .event(.actionInvoked(let id, let actionID, let token)) where waiting.contains(id):
                if json {
                    Waiter.tellAction(actionID, token: token, reply: replies[id], json: true, emit: emit(id))
                } else {
                    Output.line("\(TerminalText.escape(id))\t\(TerminalText.escape(replies[id] ?? actionID))")
                }
            case .event(.presenterFailed(let id, let reason)) where id == nil || waiting.contains(id ?? ""):
                Output.error("warning: \(reason)")
            case .event(.laterStoreProblem(let problem)):
                Waiter.note(problem, unsaved: &unsaved)
            case .event(.ended(let id, let outcome)) where waiting.contains(id):
                waiting.remove(id)
                if outcome == .deferred, let problem = unsaved {
                    let reason = "the toast \"\(TerminalText.escape(id))\" was not kept for later: \(problem)"
                    emit(id)("failed", ["reason": .string(reason)])
                    Output.error(reason)
                    code = .ioError
                } else {
                    let ended = Waiter.finish(
                        outcome, unexplainedClose: presenter.unexplainedClose(of: id), emit: emit(id))
                    if case .failed = outcome, code == .success { code = ended }
                }
                if waiting.isEmpty {
                    _ = await FirstOf.value(orAfter: Waiter.closeGrace) { await presenter.flush() }
                    return code
                }
            default:
                break
            }
        }
        return .software
    }

    /// Puts `kept` back into the store, in front of anything kept meanwhile (nothing is lost), then closes them and
    /// waits (at most ``Waiter/closeGrace``) for the server to have closed them.
    private func closeAndKeep(_ kept: [ToastLaterRecord], center: ToastCenter, presenter: ObservingPresenter) async {
        let ids = Set(kept.map(\.id))
        let restored = Result { () throws(LaterStoreProblem) in
            try store.update { records in records = kept + records.filter { !ids.contains($0.id) } }
        }
        if case .failure(let problem) = restored { Output.error("warning: \(problem)") }
        for record in kept { center.dismiss(id: record.id) }
        _ = await FirstOf.value(orAfter: Waiter.closeGrace) { await presenter.flush() }
    }
}
