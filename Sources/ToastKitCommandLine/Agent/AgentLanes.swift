import Synchronization
import ToastKit

/// Which queue a script's toast joins in the agent (docs/decisions/0006-agent-lanes-and-sessions.md):
///
/// - **An application's lane** for a toast that only informs: timed, no buttons, no tap, nobody waiting for it, no
///   `-r`. Within one application the model's rules hold — one front toast whose timer alone runs, the rest behind
///   it keeping their time, `max-visible` at once — so a script's burst of messages reads in turn.
/// - **A lane of its own** for everything else, shown at once whatever else is on screen: an indefinite toast, a
///   question (buttons or a tap), a toast its sender waits for (`--wait`, `-p`, `--json`), a `-r N` replacement.
///   None of them ever holds another toast back, and none waits behind one.
///
/// Different applications never wait for each other: their toasts go to the server at once, as notify-send's do,
/// and the server stacks them. A live id stays in its lane when it is replaced (`--id` again, or `-r` of its
/// server id), so it is updated in place.
enum AgentLane: Hashable, Sendable, CustomStringConvertible {
    /// The lane of application `name` (its `-a` name, or the `desktop-entry` hint when given).
    case application(String)
    /// The lane of toast `id` alone.
    case own(String)

    /// The lane of `request` (whose id is `id`), when the id is not live already.
    static func of(_ request: AgentRequest, id: String) -> AgentLane {
        let options = request.options
        let indefinite = options.duration?.toastDuration == .indefinite
        let question = !options.actions.isEmpty || options.tap != nil
        if indefinite || question || request.awaitShown || options.replaceID != nil {
            return .own(id)
        }
        if let entry = options.hints.first(where: { $0.name == "desktop-entry" }),
            case .string(let name) = entry.value, !name.isEmpty
        {
            return .application("desktop-entry:" + name)
        }
        return .application(options.appName.flatMap { $0.isEmpty ? nil : $0 } ?? "toastkit")
    }

    var description: String {
        switch self {
        case .application(let name): "application \(name)"
        case .own(let id): "toast \(id)"
        }
    }
}

/// The agent's centers, one per lane, all drawing on one presenter (one connection to the server, so GNOME Shell's
/// close-by-connection and the server ids stay the agent's). A lane's center is opened when its first toast comes,
/// counts its live toasts (``acquire(_:)``, ``release(_:)``), and goes back to a pool once it has none and holds
/// nothing on screen (a confirmation outlives its toast), so the number of centers is bounded by the live toasts.
///
/// ``Shared`` hands each center a ``LanePresenter``; the one presenter's reports are routed back to the center that
/// showed the toast (by toast id), and the reports about the server or the screen go to every center.
final class AgentLanes: Sendable {
    private struct Lane {
        var lane: AgentLane
        var center: ToastCenter
        /// Live toasts in the lane: it is never closed while one is.
        var users: Int
    }

    private struct State {
        /// The open lanes in the order they were opened (the order `List` shows them in).
        var lanes: [Lane] = []
        var index: [AgentLane: Int] = [:]
        var pool: [ToastCenter] = []
    }

    private let state = Mutex(State())
    private let shared: Shared
    private let makeCenter: @Sendable (any ToastPresenter) -> ToastCenter

    /// Lanes whose centers are made by `makeCenter` (given the lane's presenter) over `presenter`.
    init(presenter: any ToastPresenter, makeCenter: @escaping @Sendable (any ToastPresenter) -> ToastCenter) {
        shared = Shared(presenter)
        self.makeCenter = makeCenter
    }

    /// The center of `lane` for one more live toast, opening the lane (from the pool, or new) when it is closed.
    func acquire(_ lane: AgentLane) -> ToastCenter {
        state.withLock { state in
            if let index = state.index[lane] {
                state.lanes[index].users += 1
                return state.lanes[index].center
            }
            let center = state.pool.popLast() ?? makeCenter(LanePresenter(shared))
            state.index[lane] = state.lanes.count
            state.lanes.append(Lane(lane: lane, center: center, users: 1))
            return center
        }
    }

    /// One live toast of `lane` has ended; closes the lanes that hold nothing any more.
    func release(_ lane: AgentLane) {
        state.withLock { state in
            if let index = state.index[lane] { state.lanes[index].users = max(0, state.lanes[index].users - 1) }
            // Every lane without live toasts: a confirmation that kept one open has ended by now, or will by the
            // next end.
            let closing = state.lanes.indices.filter {
                state.lanes[$0].users == 0 && state.lanes[$0].center.entryStates.isEmpty
            }
            guard !closing.isEmpty else { return }
            for index in closing.reversed() {
                let closed = state.lanes.remove(at: index)
                state.index[closed.lane] = nil
                state.pool.append(closed.center)
            }
            for position in state.lanes.indices { state.index[state.lanes[position].lane] = position }
        }
    }

    /// The center of `lane` if it is open.
    func center(of lane: AgentLane) -> ToastCenter? {
        state.withLock { state in state.index[lane].map { state.lanes[$0].center } }
    }

    /// Every open center, in the order the lanes were opened.
    var centers: [ToastCenter] {
        state.withLock { $0.lanes.map(\.center) }
    }

    /// How many lanes are open, and how many centers wait in the pool.
    var counts: (open: Int, pooled: Int) {
        state.withLock { ($0.lanes.count, $0.pool.count) }
    }

    /// Forgets which lane showed toast `id` (its toast ended), so reports about it go nowhere.
    func forget(_ id: String) {
        shared.forget(id)
    }

    /// The one presenter and the routing of its reports.
    final class Shared: Sendable {
        let presenter: any ToastPresenter
        private struct Routes {
            var sinks: [ObjectIdentifier: ToastPresenterEvents] = [:]
            /// Which lane presenter last showed each toast.
            var owners: [String: ObjectIdentifier] = [:]
            var connected = false
        }
        private let routes = Mutex(Routes())

        init(_ presenter: any ToastPresenter) {
            self.presenter = presenter
        }

        func connect(_ lane: LanePresenter, _ events: ToastPresenterEvents) {
            let first = routes.withLock { routes in
                routes.sinks[ObjectIdentifier(lane)] = events
                defer { routes.connected = true }
                return !routes.connected
            }
            guard first else { return }
            presenter.connect(ToastPresenterEvents { [weak self] report in self?.route(report) })
        }

        func disconnect(_ lane: LanePresenter) {
            routes.withLock { routes in
                routes.sinks[ObjectIdentifier(lane)] = nil
            }
        }

        func showing(_ id: String, from lane: LanePresenter) {
            routes.withLock { $0.owners[id] = ObjectIdentifier(lane) }
        }

        func closing(_ id: String, from lane: LanePresenter) {
            routes.withLock { routes in
                if routes.owners[id] == ObjectIdentifier(lane) { routes.owners[id] = nil }
            }
        }

        /// Forgets who showed `id` (its toast ended).
        func forget(_ id: String) {
            _ = routes.withLock { $0.owners.removeValue(forKey: id) }
        }

        private func route(_ report: ToastPresenterReport) {
            let toastID: String? =
                switch report {
                case .actionInvoked(let id, _, _), .closed(let id, _): id
                case .failed(let id, _, _), .degraded(let id, _): id
                case .reshowRequested, .pauseRequested, .resumeRequested: nil
                }
            let sinks = routes.withLock { routes -> [ToastPresenterEvents] in
                if let toastID {
                    guard let owner = routes.owners[toastID], let sink = routes.sinks[owner] else { return [] }
                    return [sink]
                }
                return Array(routes.sinks.values)
            }
            for sink in sinks { sink.send(report) }
        }
    }
}

/// One lane's view of the agent's one presenter: what its center shows goes to the shared presenter, and the
/// reports about its toasts come back to it.
final class LanePresenter: ToastPresenter {
    private let shared: AgentLanes.Shared

    init(_ shared: AgentLanes.Shared) {
        self.shared = shared
    }

    func connect(_ events: ToastPresenterEvents) { shared.connect(self, events) }
    func disconnect() { shared.disconnect(self) }
    func show(_ presentation: ToastPresentation) {
        shared.showing(presentation.toast.id, from: self)
        shared.presenter.show(presentation)
    }
    func update(_ presentation: ToastPresentation) {
        shared.showing(presentation.toast.id, from: self)
        shared.presenter.update(presentation)
    }
    func close(id: String, reason: ToastCloseReason) {
        shared.presenter.close(id: id, reason: reason)
        shared.closing(id, from: self)
    }
    func timerChanged(id: String, remaining: Duration?, isRunning: Bool) {
        shared.presenter.timerChanged(id: id, remaining: remaining, isRunning: isRunning)
    }
    func flush() async { await shared.presenter.flush() }
}
