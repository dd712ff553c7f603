import Synchronization
package import ToastKit

/// The agent's centers, one per lane, all drawing on one presenter (one connection to the server, so GNOME Shell's
/// close-by-connection and the server ids stay the agent's). Which lanes are open, and when the last live toast of
/// one ends, is ``AgentMachine``'s to say: a lane is opened (``open(_:)``, from a pool or new) for its first live
/// toast and, once released (``release(_:)``), goes back to the pool as soon as it holds nothing on screen (a
/// confirmation outlives its toast). The number of centers is bounded by the live toasts.
///
/// ``Shared`` hands each center a ``LanePresenter``; the one presenter's reports are routed back to the center that
/// showed the toast (by toast id), and the reports about the server or the screen go to every center.
package final class AgentLanes: Sendable {
    private struct Lane {
        var lane: AgentLane
        var center: ToastCenter
        /// Its last live toast ended: it closes once its center holds nothing.
        var released = false
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
    package init(presenter: any ToastPresenter, makeCenter: @escaping @Sendable (any ToastPresenter) -> ToastCenter) {
        shared = Shared(presenter)
        self.makeCenter = makeCenter
    }

    /// The center of `lane`, opened (from the pool, or new) when it is not open; a released lane that still holds
    /// a confirmation is taken back.
    package func open(_ lane: AgentLane) -> ToastCenter {
        let opened = state.withLock { state -> ToastCenter? in
            if let index = state.index[lane] {
                state.lanes[index].released = false
                return state.lanes[index].center
            }
            guard let center = state.pool.popLast() else { return nil }
            state.index[lane] = state.lanes.count
            state.lanes.append(Lane(lane: lane, center: center))
            return center
        }
        if let opened { return opened }
        // No spare (``prepareSpare()`` was not called, or another lane took it): one is made outside the lock.
        prepareSpare()
        return open(lane)
    }

    /// Makes a center for the next lane that opens, outside every lock, unless one is ready: the agent calls it
    /// before the step that may open a lane, so that no center is made (its presenter connected) under its lock.
    package func prepareSpare() {
        guard state.withLock({ $0.pool.isEmpty }) else { return }
        let center = makeCenter(LanePresenter(shared))
        state.withLock { $0.pool.append(center) }
    }

    /// `lane` has no live toast any more; closes every released lane that holds nothing.
    package func release(_ lane: AgentLane) {
        state.withLock { state in
            if let index = state.index[lane] { state.lanes[index].released = true }
            // A confirmation that kept a released lane open has ended by now, or will by the next release.
            let closing = state.lanes.indices.filter {
                state.lanes[$0].released && state.lanes[$0].center.entryStates.isEmpty
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
    package func center(of lane: AgentLane) -> ToastCenter? {
        state.withLock { state in state.index[lane].map { state.lanes[$0].center } }
    }

    /// Every open center, in the order the lanes were opened.
    package var centers: [ToastCenter] {
        state.withLock { $0.lanes.map(\.center) }
    }

    /// Forgets which lane showed toast `id` (its toast ended), so reports about it go nowhere.
    package func forget(_ id: String) {
        shared.forget(id)
    }

    /// The one presenter and the routing of its reports.
    package final class Shared: Sendable {
        let presenter: any ToastPresenter
        private struct Routes {
            var sinks: [ObjectIdentifier: ToastPresenterEvents] = [:]
            /// Which lane presenter last showed each toast.
            var owners: [String: ObjectIdentifier] = [:]
            var connected = false
            /// The presenter's last Do Not Disturb report, for a lane that opens after it.
            var doNotDisturb: ToastDoNotDisturb?
        }
        private let routes = Mutex(Routes())

        init(_ presenter: any ToastPresenter) {
            self.presenter = presenter
        }

        func connect(_ lane: LanePresenter, _ events: ToastPresenterEvents) {
            let (first, doNotDisturb) = routes.withLock { routes in
                routes.sinks[ObjectIdentifier(lane)] = events
                defer { routes.connected = true }
                return (!routes.connected, routes.doNotDisturb)
            }
            guard first else {
                // Its center waits for a first report, which the presenter made when the first lane opened.
                if let doNotDisturb { events.doNotDisturbChanged(doNotDisturb) }
                return
            }
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
        package func forget(_ id: String) {
            _ = routes.withLock { $0.owners.removeValue(forKey: id) }
        }

        private func route(_ report: ToastPresenterReport) {
            let toastID: String? =
                switch report {
                case .actionInvoked(let id, _, _), .closed(let id, _), .replied(let id, _, _, _), .withheld(let id): id
                case .failed(let id, _, _), .degraded(let id, _): id
                case .reshowRequested, .pauseRequested, .resumeRequested, .doNotDisturbChanged: nil
                }
            let sinks = routes.withLock { routes -> [ToastPresenterEvents] in
                if case .doNotDisturbChanged(let state) = report { routes.doNotDisturb = state }
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
package final class LanePresenter: ToastPresenter {
    private let shared: AgentLanes.Shared

    init(_ shared: AgentLanes.Shared) {
        self.shared = shared
    }

    package func connect(_ events: ToastPresenterEvents) { shared.connect(self, events) }
    package func disconnect() { shared.disconnect(self) }
    package func show(_ presentation: ToastPresentation) {
        shared.showing(presentation.toast.id, from: self)
        shared.presenter.show(presentation)
    }
    package func update(_ presentation: ToastPresentation) {
        shared.showing(presentation.toast.id, from: self)
        shared.presenter.update(presentation)
    }
    package func close(id: String, reason: ToastCloseReason) {
        shared.presenter.close(id: id, reason: reason)
        shared.closing(id, from: self)
    }
    package func timerChanged(id: String, remaining: Duration?, isRunning: Bool) {
        shared.presenter.timerChanged(id: id, remaining: remaining, isRunning: isRunning)
    }
    package func flush() async { await shared.presenter.flush() }
    package var reportsDoNotDisturb: Bool { shared.presenter.reportsDoNotDisturb }
    package func promptReply(_ prompt: ToastReplyPrompt) async -> ToastReplyPromptResult {
        await shared.presenter.promptReply(prompt)
    }
}
