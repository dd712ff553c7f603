import Foundation
import Synchronization

/// Stops that run on threads of their own (``NotificationEnvironment/stop()``), finished by the test process as it
/// exits: a test's `defer` never waits for a desktop to stop, and yet nothing a test started outlives the run (the
/// last tests' desktops, whose stopping threads had not run or not finished when the runner exited, were left
/// running: dbus-daemon, Xvfb, the servers, the portals).
enum BackgroundStops {
    private struct State {
        var next: UInt64 = 0
        var pending: [UInt64: @Sendable () -> Void] = [:]
        var finishesAtExit = false
    }

    private static let state = Mutex(State())
    /// Entered for each stop, left by whoever carries it out: its own thread, or the exit.
    private static let unfinished = DispatchGroup()

    /// Runs `work` on a thread of its own now, or at the process's exit if that thread has not taken it by then.
    static func start(_ work: @escaping @Sendable () -> Void) {
        unfinished.enter()
        let (id, register) = state.withLock { state in
            state.next += 1
            state.pending[state.next] = work
            defer { state.finishesAtExit = true }
            return (state.next, !state.finishesAtExit)
        }
        if register { atexit { BackgroundStops.finish() } }
        Thread {
            guard let work = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
            work()
            unfinished.leave()
        }.start()
    }

    /// At exit: runs the stops no thread has taken, and waits for those under way (at most a minute: each bounds
    /// its own waits).
    private static func finish() {
        let pending = state.withLock { state in
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        for work in pending {
            work()
            unfinished.leave()
        }
        _ = unfinished.wait(timeout: .now() + 60)
    }
}
