import CSpawn
import Foundation
import FreedesktopNotifications
import Glibc
import Testing

@testable import ToastKitAgent

/// The agent's runner of `--on-action` commands (``ActionRunner``): real processes, a log in a folder of the test's
/// own. A command's end is awaited through the runner's `ended` callback, never slept for.
@Suite(.timeLimit(.minutes(1))) struct ActionRunnerTests {
    /// A folder of the test's own, removed after `body`.
    private func withFolder(_ body: (String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-runner-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await body(folder)
    }

    private func job(_ script: String, _ arguments: [String] = [], action: String = "default") -> ActionRunner.Job {
        ActionRunner.Job(
            argv: ["sh", "-c", script] + arguments, environment: ProcessInfo.processInfo.environment,
            workingDirectory: nil, toastID: "t", action: action)
    }

    /// Each command's end is logged with its exit status or signal, and the log says which toast and action ran it.
    @Test func aCommandsEndIsLoggedWithItsStatus() async throws {
        try await withFolder { folder in
            let (ends, ended) = AsyncStream<String>.makeStream()
            let runner = ActionRunner(log: "\(folder)/actions.log") { _, exit in ended.yield(exit) }
            runner.run(job("exit 3", action: "ok"))
            var iterator = ends.makeAsyncIterator()
            #expect(await iterator.next() == "exit 3")
            runner.run(job("kill -TERM $$"))
            #expect(await iterator.next() == "signal 15")
            let log = try String(contentsOfFile: "\(folder)/actions.log", encoding: .utf8)
            #expect(log.contains("toast t, action ok: sh -c exit 3"), "\(log)")
            #expect(log.contains("sh (pid ") && log.contains(") ended: exit 3"), "\(log)")
        }
    }

    /// With the limit reached, a command waits its turn and starts when a running one ends, in order.
    @Test func aCommandBeyondTheLimitStartsWhenOneEnds() async throws {
        try await withFolder { folder in
            let gate = "\(folder)/gate"
            #expect(mkfifo(gate, 0o600) == 0)
            let (ends, ended) = AsyncStream<String>.makeStream()
            let runner = ActionRunner(log: "\(folder)/actions.log", limit: 1) { _, exit in ended.yield(exit) }
            runner.run(job(#"cat "$0" > /dev/null; exit 1"#, [gate]))
            runner.run(job("exit 2"))
            let log = try String(contentsOfFile: "\(folder)/actions.log", encoding: .utf8)
            #expect(log.contains("waits, 1 commands run already"), "\(log)")
            try release(gate)
            var iterator = ends.makeAsyncIterator()
            #expect(await iterator.next() == "exit 1")
            #expect(await iterator.next() == "exit 2")
        }
    }

    /// The runner reaps its own commands only. Another child of the agent (a sound player, a reply prompt) that ends
    /// while a command runs is left for its own code to reap, with its exit status: before, the runner waited for any
    /// child, took that one's end, and freed its pid behind its owner's back.
    @Test func anotherChildOfTheProcessIsNotReapedByTheRunner() async throws {
        try await withFolder { folder in
            let gate = "\(folder)/gate"
            #expect(mkfifo(gate, 0o600) == 0)
            let (ends, ended) = AsyncStream<String>.makeStream()
            let runner = ActionRunner(log: "\(folder)/actions.log") { _, exit in ended.yield(exit) }
            runner.run(job(#"cat "$0" > /dev/null"#, [gate]))

            // A child of this process that is not the runner's, ended (its pidfd says so) and not yet reaped.
            let child = try #require(
                try? Spawn.start(["sh", "-c", "exit 7"], environment: [:], output: nil, newSession: true).get())
            let exited = pidfd_open(child, 0)
            #expect(exited >= 0)
            var poller = pollfd(fd: exited, events: Int16(POLLIN), revents: 0)
            while poll(&poller, 1, -1) < 0 && errno == EINTR {}
            close(exited)
            // The runner's command ends after it: a runner that reaps any child has taken the other one's end by then.
            try release(gate)
            var iterator = ends.makeAsyncIterator()
            #expect(await iterator.next() == "exit 0")

            // Still this process's to reap, with its own exit status (`notSeen`: the runner took it).
            #expect(Spawn.wait(child, blocking: false) == .ended(.exited(7)))
        }
    }

    /// Lets the command blocked reading FIFO `gate` go on: opens it for writing (once the command has opened it to
    /// read) and closes it, so it reads the end.
    private func release(_ gate: String) throws {
        let descriptor = open(gate, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Errno(errno) }
        close(descriptor)
    }
}
