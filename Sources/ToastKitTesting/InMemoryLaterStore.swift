import Synchronization
public import ToastModel

/// A `LaterStore` in memory, shared by the centers it is given to: a stand-in for the file in tests of a
/// "new process". It can be told to fail, to test how problems are reported.
public final class InMemoryLaterStore: LaterStore {
    private struct State {
        var records: [ToastLaterRecord] = []
        var loadProblem: LaterStoreProblem?
        var saveProblem: LaterStoreProblem?
    }

    private let state: Mutex<State>

    /// Creates a store holding `records`.
    public init(records: [ToastLaterRecord] = []) {
        state = Mutex(State(records: records))
    }

    /// The stored records.
    public var records: [ToastLaterRecord] { state.withLock { $0.records } }

    /// Makes every ``load()`` throw `problem` (or succeed again with `nil`).
    public func failLoads(with problem: LaterStoreProblem?) {
        state.withLock { $0.loadProblem = problem }
    }

    /// Makes every ``save(_:)`` throw `problem` (or succeed again with `nil`).
    public func failSaves(with problem: LaterStoreProblem?) {
        state.withLock { $0.saveProblem = problem }
    }

    /// Returns the records, or throws the configured problem.
    public func load() throws(LaterStoreProblem) -> [ToastLaterRecord] {
        let (records, problem) = state.withLock { ($0.records, $0.loadProblem) }
        if let problem { throw problem }
        return records
    }

    /// Replaces the records, or throws the configured problem.
    public func save(_ records: [ToastLaterRecord]) throws(LaterStoreProblem) {
        let problem: LaterStoreProblem? = state.withLock { state in
            if let problem = state.saveProblem { return problem }
            state.records = records
            return nil
        }
        if let problem { throw problem }
    }
}
