// What the agent's shell is built with: why it could not start, each toast's style and warnings, the relay of the
// centers' events, and the senders' environments for the presenter.
import DBus
import Synchronization
import ToastKit
package import ToastModel

/// Why the agent could not start: no session bus or name (`toastkit agent` exits 69), or a state folder it cannot use
/// (74).
package struct AgentStartError: Error, Sendable {
    package var message: String
    package var stateUnusable = false

    package init(_ message: String, stateUnusable: Bool = false) {
        self.message = message
        self.stateUnusable = stateUnusable
    }
}

/// The agent's style: each toast's own `send` options (urgency, category, hints, transient, app name and icon) on
/// top of the standard theme, and the degradations reported for it until its `Present` answers.
package final class AgentStyle: ToastStyle, Sendable {
    private struct Entry {
        var style: CommandLineStyle
        var warnings: [String] = []
        /// Its `Present` has answered (its warnings were taken): a later one is nobody's to take.
        var answered = false
    }

    private let entries = Mutex<[String: Entry]>([:])

    package func set(_ style: CommandLineStyle, for id: String) {
        entries.withLock { $0[id] = Entry(style: style) }
    }

    package func forget(_ id: String) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }

    /// Keeps `reason` for the answer of toast `id`'s `Present`; false when no answer is to come (it has answered, or
    /// the toast came another way: adopted, scheduled), so the caller says it elsewhere.
    @discardableResult
    package func warn(_ reason: String, for id: String) -> Bool {
        entries.withLock { entries in
            guard entries[id]?.answered == false else { return false }
            entries[id]?.warnings.append(reason)
            return true
        }
    }

    /// The warnings kept for toast `id`'s `Present`, which answers now: later ones are not kept (``warn(_:for:)``).
    package func takeWarnings(for id: String) -> [String] {
        entries.withLock { entries in
            defer {
                entries[id]?.warnings = []
                entries[id]?.answered = true
            }
            return entries[id]?.warnings ?? []
        }
    }

    package func makeRequest(for toast: PresentedToast) -> ToastRequest {
        guard let entry = entries.withLock({ $0[toast.id] }) else {
            return ThemedToastStyle(theme: .standard).makeRequest(for: toast)
        }
        return entry.style.makeRequest(for: toast)
    }
}

/// Hands every lane's center events to one handler, set once the agent is ready to follow them.
final class EventRelay: Sendable {
    /// In a struct: a `Mutex` of a bare function type re-abstracts the closure at every access, and the chain of
    /// thunks grows with each event (10,000 toasts cost minutes).
    private struct Handler: Sendable {
        var handle: @Sendable (ToastEvent) -> Void
    }
    private let handler = Mutex<Handler?>(nil)

    func set(_ handler: @escaping @Sendable (ToastEvent) -> Void) {
        self.handler.withLock { $0 = Handler(handle: handler) }
    }

    func send(_ event: ToastEvent) {
        handler.withLock { $0 }?.handle(event)
    }
}

/// Lets the presenter, made before the agent, ask it for the environment a toast's sender captured.
final class SenderEnvironments: Sendable {
    private let lookup = Mutex<(@Sendable (String) -> [String: String]?)?>(nil)

    func attach(_ body: @escaping @Sendable (String) -> [String: String]?) {
        lookup.withLock { $0 = body }
    }

    func environment(of id: String) -> [String: String]? {
        lookup.withLock { $0 }?(id)
    }
}
