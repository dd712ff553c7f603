// The agent's keeper: a small process each agent starts beside itself that starts the agent again when it dies
// without a word (SIGKILL, a crash, the out-of-memory killer) while it still had something to keep — the user's
// scheduled toasts, or live toasts saved in its journal. A clean end (idle, a signal, its bus gone, a take-over)
// tells the keeper first, and nothing is started.
import CSpawn
import FreedesktopNotifications
import Glibc
import ToastKit
import ToastKitAgent

/// Keeps the agent's promises past its death (docs/agent.md, "When the agent dies"): a reminder due after the agent
/// was killed still comes on time, and its live toasts still close on time, without waiting for some later `send`.
///
/// The agent starts `toastkit agent --keeper JOURNAL` with the read end of a pipe as its standard input, and keeps
/// the write end (close-on-exec: no command it runs holds it). At a clean end it writes one byte; when it dies, the
/// kernel closes the pipe, and the keeper reads the end of the file instead. Not started when systemd runs the agent
/// (the user unit restarts it on failure).
enum AgentKeeper {
    /// The environment variable that counts how many times in a row a keeper started an agent that died young.
    static let restartsVariable = "TOASTKIT_AGENT_RESTARTS"
    /// An agent that lived at least this long is not counted as dying young.
    static let settled: Duration = .seconds(10)
    /// How many young deaths in a row are restarted before the keeper gives up (a crash at every start).
    static let maximumRestarts = 3

    /// Starts the keeper of this agent, whose journal is `journal`; returns the descriptor its goodbye is written to
    /// (nil when none was started: under systemd, or it could not start — said in the log).
    static func start(journal: String, environment: [String: String]) -> Int32? {
        if startedBySystemd() { return nil }
        guard let program = AgentClient.program(environment: environment) else { return nil }
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else {
            Output.error("warning: the agent's keeper cannot be started: \(String(cString: strerror(errno)))")
            return nil
        }
        defer { close(ends[0]) }
        let started = Spawn.start(
            [program, "agent", "--keeper", journal].map { Array($0.utf8) }, environment: environment,
            standardInput: ends[0], standardOutput: nil, standardError: STDERR_FILENO, newSession: false,
            closesOthers: true)
        guard case .success = started else {
            close(ends[1])
            Output.error("warning: the agent's keeper cannot be started (\(program))")
            return nil
        }
        return ends[1]
    }

    /// Tells the keeper the agent ends cleanly: it starts nothing.
    static func goodbye(_ descriptor: Int32) {
        var byte: UInt8 = 0x0A
        _ = write(descriptor, &byte, 1)
        close(descriptor)
    }

    /// The keeper's life: waits for the agent's goodbye or death; after a death, starts a new agent when there is
    /// something to keep (the user's scheduled toasts, or the dead agent's `journal`).
    static func keep(journal: String, environment: [String: String]) -> ExitCode {
        let clock = ContinuousClock()
        let born = clock.now
        var byte: UInt8 = 0
        var count: Int
        repeat { count = read(STDIN_FILENO, &byte, 1) } while count < 0 && errno == EINTR
        guard count <= 0 else { return .success }  // a goodbye
        let young = clock.now - born < settled
        let restarts = young ? (environment[restartsVariable].flatMap(Int.init) ?? 0) + 1 : 0
        let scheduled = (try? ScheduleStore.open(environment: environment))?.load().count ?? 0
        let saved = access(journal, F_OK) == 0
        guard scheduled > 0 || saved else { return .success }
        let what = [scheduled > 0 ? "\(scheduled) scheduled toast(s)" : nil, saved ? "its saved toasts" : nil]
            .compactMap { $0 }.joined(separator: " and ")
        guard restarts <= maximumRestarts else {
            Output.error(
                "agent keeper: the agent died \(restarts) times in a row within \(settled.components.seconds) s of its"
                    + " start; not starting it again (\(what) wait for the next toastkit command)")
            return .software
        }
        Output.error("agent keeper: the agent died without a word; starting a new one for \(what)")
        // A fail point (a test's) was the dead agent's: the next one runs without it.
        var next = environment.filter { !$0.key.hasPrefix("TOASTKIT_FAILPOINT_") }
        next[restartsVariable] = String(restarts)
        do throws(AgentClient.CallError) {
            _ = try AgentClient.startAgent(environment: next)
        } catch {
            if case .unreachable(let reason?) = error { Output.error("agent keeper: \(reason)") }
            return .unavailable
        }
        return .success
    }

    /// Whether systemd runs this agent as a unit (its parent is the user's service manager), which restarts it when
    /// it fails.
    private static func startedBySystemd() -> Bool {
        let descriptor = open("/proc/\(getppid())/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var name = [UInt8](repeating: 0, count: 32)
        let count = read(descriptor, &name, name.count)
        return count > 0 && name[..<count].split(separator: 0x0A).first.map(Array.init) == Array("systemd".utf8)
    }
}
