import DBus
import Foundation

/// Bounded waits for the test environment: a missing event becomes an error that names it, never a hang.
public enum Deadline {
    /// Runs `body` and returns its result, or throws ``TestEnvironmentError`` ("no `what` within `limit`") when it
    /// has not finished by then (it is cancelled). `body` must respond to cancellation (awaiting an async sequence
    /// or `Task.sleep` does).
    public static func run<T: Sendable>(
        within limit: Duration,
        _ what: String,
        _ body: @escaping @Sendable () async throws -> T?
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw TestEnvironmentError("no \(what) within \(limit)")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw TestEnvironmentError("\(what): the wait ended without it")
            }
            return value
        }
    }

    /// Checks `condition` every `interval` until it holds, for at most `limit`; fails early when one of `processes`
    /// dies. Only for what announces itself nowhere (a socket file appearing); bus names are awaited instead.
    static func poll(
        _ what: String,
        within limit: Duration,
        every interval: Duration = .milliseconds(20),
        processes: [StartedProcess],
        _ condition: @Sendable () throws -> Bool
    ) async throws {
        let end = ContinuousClock.now + limit
        while try !condition() {
            if let dead = processes.first(where: { !Tools.isAlive($0.pid) }) {
                throw TestEnvironmentError("\(what): \(dead.name) exited\(Self.tail(of: dead.log))")
            }
            if ContinuousClock.now >= end { throw TestEnvironmentError("no \(what) within \(limit)") }
            try await Task.sleep(for: interval)
        }
    }

    /// Waits until `name` is owned by a connection other than `excluded`, on `watcher` (whose `changes` for that
    /// name were subscribed before the process that takes it was started); fails when `limit` passes or one of
    /// `processes` exits first. Returns the owner's unique name.
    static func owner(
        of name: BusName,
        on watcher: DBusConnection,
        changes: NameOwnerChanges,
        excluding excluded: Set<String> = [],
        within limit: Duration,
        processes: [StartedProcess]
    ) async throws -> String {
        if let owner = try await watcher.bus.nameOwner(of: name), !excluded.contains(owner) { return owner }
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for try await change in changes {
                    if let owner = change.newOwner, !excluded.contains(owner) { return owner }
                }
                return nil
            }
            group.addTask {
                // The name's arrival is awaited above; this only notices a process that died instead.
                let end = ContinuousClock.now + limit
                while ContinuousClock.now < end {
                    if let dead = processes.first(where: { !Tools.isAlive($0.pid) }) {
                        throw TestEnvironmentError(
                            "\(dead.name) exited before \(name) had an owner\(Self.tail(of: dead.log))")
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                throw TestEnvironmentError(
                    "\(name) had no owner within \(limit) (started: \(processes.map(\.name).joined(separator: ", ")))"
                        + (processes.last.map { Self.tail(of: $0.log) } ?? ""))
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let owner = first else {
                throw TestEnvironmentError("the watch for \(name) ended before it had an owner")
            }
            return owner
        }
    }

    /// The last lines of a log file, for an error message.
    static func tail(of log: String, lines: Int = 8) -> String {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8), !text.isEmpty else { return "" }
        let last = text.split(separator: "\n").suffix(lines).joined(separator: "\n    ")
        return "; end of \(log):\n    \(last)"
    }
}
