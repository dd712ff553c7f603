import CSpawn
import Dispatch
import FreedesktopNotifications
import Glibc
import Synchronization
import ToastModel

/// Runs the agent's `--on-action` commands without ever stalling it: a command is started at once (never waited
/// for on the caller's thread), at most ``AgentLimits/maximumRunningCommands`` run at a time (more wait their turn,
/// in order), and **one** reaper queue collects every command's end — not a thread per running command. Each
/// command's header, start failure and exit status go to the actions log.
///
/// The reaper waits for its own commands only, each by its pid once its pidfd says it ended: the agent's other
/// children (sound players, reply prompts) are reaped by their own code, which then reads their exit status, and
/// whose pid is never freed (and reused) behind its back.
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

    /// A command that runs: its program, and the source that watches its pidfd (nil without pidfds).
    private struct Running {
        var program: String
        var watch: (any DispatchSourceRead)?
    }

    private struct State {
        var running: [pid_t: Running] = [:]
        var waiting: [Job] = []
    }

    private let state = Mutex(State())
    private let log: String
    private let limit: Int
    private let reaper = DispatchQueue(label: "org.toastkit.agent.reaper")
    private let ended: (@Sendable (_ program: String, _ exit: String) -> Void)?

    /// A runner whose commands log to `log`, at most `limit` at once; `ended` is told each command's end as it is
    /// logged (`exit N`, `signal N`, or that it was not seen).
    package init(
        log: String, limit: Int = AgentLimits.maximumRunningCommands,
        ended: (@Sendable (_ program: String, _ exit: String) -> Void)? = nil
    ) {
        self.log = log
        self.limit = limit
        self.ended = ended
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

    /// Starts `job` (under the lock, so its end is never handled before it is counted as running).
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
            state.running[pid] = Running(program: job.argv[0], watch: watch(pid))
        case .failure(let error):
            let folder = job.workingDirectory.map { " in \($0)" } ?? ""
            if let descriptor {
                Spawn.append(
                    "[\(Spawn.timestamp())] could not start \(job.argv[0])\(folder): \(error)\n", to: descriptor)
            }
        }
    }

    /// Watches command `pid` for its end: a read source on its pidfd, on the reaper queue. Without a pidfd (a kernel
    /// before 5.3), a thread of its own waits for it (nil).
    private func watch(_ pid: pid_t) -> (any DispatchSourceRead)? {
        let descriptor = pidfd_open(pid, 0)
        guard descriptor >= 0 else {
            DispatchQueue.global(qos: .utility).async { self.reap(pid, blocking: true) }
            return nil
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: reaper)
        source.setEventHandler { self.reap(pid, blocking: false) }
        source.setCancelHandler { close(descriptor) }
        source.activate()
        return source
    }

    /// Reaps command `pid`, logs its end, and starts waiting commands as places free up. Not blocking, a command
    /// that has not ended yet (a wake-up with nothing to read) is left running.
    private func reap(_ pid: pid_t, blocking: Bool) {
        let exit: String
        switch Spawn.wait(pid, blocking: blocking) {
        case .running: return
        case .ended(let end): exit = "\(end)"
        // Not reaped here (ECHILD): the kernel did, SIGCHLD being ignored after all.
        case .notSeen: exit = "its end was not seen (reaped elsewhere)"
        }
        let program = state.withLock { state -> String? in
            guard let running = state.running.removeValue(forKey: pid) else { return nil }
            running.watch?.cancel()
            note("\(running.program) (pid \(pid)) ended: \(exit)")
            while state.running.count < limit, !state.waiting.isEmpty {
                start(state.waiting.removeFirst(), in: &state)
            }
            return running.program
        }
        if let program { ended?(program, exit) }
    }

    /// Writes `line` to the actions log, with the time, before the commands it is about.
    package func note(_ line: String) {
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
    /// The largest call the agent takes, in bytes of its arguments: a larger one is refused with `LimitsExceeded`
    /// before it is decoded (issue 39). Twice what a command line carries (Linux's `ARG_MAX`, 2 MiB by default).
    package static let maximumCallSize = 4 * 1024 * 1024
}
