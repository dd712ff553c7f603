import Dispatch
import FreedesktopNotifications
import Glibc
import Synchronization
import ToastModel

/// Runs the agent's `--on-action` commands without ever stalling it: a command is started at once (never waited
/// for on the caller's thread), at most ``AgentLimits/maximumRunningCommands`` run at a time (more wait their turn,
/// in order), and **one** reaper collects every command's end — not a thread per running command. Each command's
/// header, start failure and exit status go to the actions log.
///
/// The reaper waits for any child (`waitpid(-1)`). The agent's only other children are sound players
/// (`SoundPlayer`), each waited for by its pid: one the reaper takes first is ignored here
/// (not one of its commands), and its player then counts it as played.
package final class ActionRunner: Sendable {
    /// One command to run.
    package struct Job: Sendable {
        package var argv: [String]
        package var environment: [String: String]
        package var workingDirectory: String?
        /// For the log: which toast and action.
        package var toastID: String
        package var action: String

        /// A job: `argv` with `environment` in `workingDirectory`, for action `action` of toast `toastID`.
        package init(
            argv: [String], environment: [String: String], workingDirectory: String?, toastID: String, action: String
        ) {
            self.argv = argv
            self.environment = environment
            self.workingDirectory = workingDirectory
            self.toastID = toastID
            self.action = action
        }
    }

    private struct State {
        var running: [pid_t: String] = [:]
        var waiting: [Job] = []
        var reaping = false
    }

    private let state = Mutex(State())
    private let log: String
    private let limit: Int
    private let reaper = DispatchQueue(label: "org.toastkit.agent.reaper")

    /// A runner whose commands log to `log`, at most `limit` at once.
    package init(log: String, limit: Int = AgentLimits.maximumRunningCommands) {
        self.log = log
        self.limit = limit
        // The ends must be seen: an ignored SIGCHLD (inherited from whoever started the agent) would have the
        // kernel reap the commands itself.
        signal(SIGCHLD, SIG_DFL)
    }

    /// Starts `job` now, or once a running command ends when `limit` run already.
    package func run(_ job: Job) {
        state.withLock { state in
            guard state.running.count < limit else {
                state.waiting.append(job)
                note("toast \(job.toastID), action \(job.action): waits, \(limit) commands run already")
                return
            }
            start(job, in: &state)
        }
    }

    /// Starts `job` (under the lock, so the reaper never sees a child it does not know).
    private func start(_ job: Job, in state: inout State) {
        try? PrivateFiles.prepareFolder(PrivateFiles.parent(of: log), tighten: false)
        let descriptor = Spawn.openLog(log)
        defer { if let descriptor { close(descriptor) } }
        let header = "[\(Spawn.timestamp())] toast \(job.toastID), action \(job.action): "
        if let descriptor {
            Spawn.append(header + job.argv.joined(separator: " ") + "\n", to: descriptor)
        }
        switch Spawn.start(
            job.argv, environment: job.environment, output: descriptor, newSession: true,
            workingDirectory: job.workingDirectory)
        {
        case .success(let pid):
            state.running[pid] = job.argv[0]
            if !state.reaping {
                state.reaping = true
                reaper.async { self.reap() }
            }
        case .failure(let error):
            let folder = job.workingDirectory.map { " in \($0)" } ?? ""
            if let descriptor {
                Spawn.append(
                    "[\(Spawn.timestamp())] could not start \(job.argv[0])\(folder): \(error)\n", to: descriptor)
            }
        }
    }

    /// Waits for the commands' ends until none runs, starting waiting ones as places free up.
    private func reap() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, 0)
            if pid < 0 {
                if errno == EINTR { continue }
                // No child (ECHILD): stop unless one was started meanwhile. Commands still counted as running were
                // reaped by someone else (SIGCHLD ignored): forget them, and start the waiting ones, rather than
                // waiting for ends that will never be seen.
                let (done, lost) = state.withLock { state -> (Bool, [String]) in
                    let lost = Array(state.running.values)
                    state.running = [:]
                    while state.running.count < limit, !state.waiting.isEmpty {
                        start(state.waiting.removeFirst(), in: &state)
                    }
                    if state.running.isEmpty { state.reaping = false }
                    return (!state.reaping, lost)
                }
                for program in lost { note("\(program): its end was not seen (reaped elsewhere)") }
                if done { return }
                continue
            }
            let exit = status & 0x7f == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
            state.withLock { state in
                guard let program = state.running.removeValue(forKey: pid) else { return }
                note("\(program) (pid \(pid)) ended: \(exit)")
                while state.running.count < limit, !state.waiting.isEmpty {
                    start(state.waiting.removeFirst(), in: &state)
                }
            }
        }
    }

    private func note(_ line: String) {
        guard let descriptor = Spawn.openLog(log) else { return }
        Spawn.append("[\(Spawn.timestamp())] \(line)\n", to: descriptor)
        close(descriptor)
    }
}

/// The agent's bounds, each with a clear refusal when reached.
package enum AgentLimits {
    /// Live toasts (shown and waiting) at once: a `Present` beyond is refused with `QueueFull`.
    package static let maximumLive = 20_000
    /// `--on-action` commands running at once; more wait for one to end.
    package static let maximumRunningCommands = 16
}
