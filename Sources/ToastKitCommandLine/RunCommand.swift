// `toastkit run`: runs a command (or waits for a running process) and, when it ends, shows a toast that says what ran,
// how it ended, how long it took and the last lines of its output, with an action that opens the whole output.
import CSpawn
import FoundationEssentials
import FreedesktopNotifications
import Glibc
import Synchronization
import ToastKit
import ToastKitAgent

/// What `toastkit run` was asked.
struct RunOptions: Sendable, Equatable {
    /// The command and its arguments, as given (raw bytes); empty with ``pid``.
    var command: [[UInt8]] = []
    /// `--pid PID`: wait for this running process instead of starting one.
    var pid: Int32?
    /// `--tail N`: how many of the last lines of output the toast shows (0 to 20).
    var tail = 3
    /// `--min-seconds S`: no toast when the command took less.
    var minimumSeconds: Double = 0
    /// `-a NAME`: the toast's application name.
    var appName: String?
    /// `-d`: how long the toast stays.
    var duration: ToastDuration = .seconds(10)
    /// `--lang`: the language of the built-in label of the output action.
    var language: String?
}

/// Runs the command with its standard input, passing its output through as it comes (and into a log), forwards the
/// signals it should get, then presents the toast through the usual `send` path and returns the command's status.
struct RunCommand {
    let options: RunOptions
    let environment: CommandEnvironment

    /// The command's exit code as a shell gives it (a signal N is 128 + N).
    func run() -> Int32 {
        if let pid = options.pid { return waitForProcess(pid) }
        let started = ContinuousClock.now
        let log = RunLog(environment: environment.variables)
        let tail = OutputTail(lines: options.tail)
        var outputPipe: [Int32] = [0, 0]
        var errorPipe: [Int32] = [0, 0]
        var exitPipe: [Int32] = [0, 0]
        // Close-on-exec from the start: a program another thread starts meanwhile never inherits them.
        guard pipe2(&outputPipe, O_CLOEXEC) == 0, pipe2(&errorPipe, O_CLOEXEC) == 0, pipe2(&exitPipe, O_CLOEXEC) == 0
        else {
            Output.error("run: cannot make a pipe: \(String(cString: strerror(errno)))")
            return ExitCode.ioError.rawValue
        }
        RunCopier.enlarge(outputPipe[1])
        RunCopier.enlarge(errorPipe[1])
        // As system(3) does: the terminal's Ctrl-C and Ctrl-\ reach the command (it is in the same process group);
        // this process lets it decide, and reports how it ended. What is sent to this process alone is forwarded.
        signal(SIGINT, SIG_IGN)
        signal(SIGQUIT, SIG_IGN)
        // Where this process's output and errors go to one place (a terminal, `2>&1`), the command writes both into
        // one pipe: the log, the toast's last lines and what is passed through keep the order it wrote them in. Where
        // they go apart, each stream keeps its own way, and the log has them in the order they were read: two pipes
        // carry no order between them (docs/decisions/0009-run-output-order.md).
        let merged = Self.sameFile(1, 2)
        let spawned = Spawn.start(
            options.command, environment: environment.variables, standardInput: nil, inheritsInput: true,
            standardOutput: outputPipe[1], standardError: merged ? outputPipe[1] : errorPipe[1], newSession: false,
            workingDirectory: nil)
        close(outputPipe[1])
        close(errorPipe[1])
        if merged { close(errorPipe[0]) }
        let child: pid_t
        switch spawned {
        case .success(let pid): child = pid
        case .failure(let error):
            let name = String(decoding: options.command[0], as: UTF8.self)
            Output.error("run: cannot run \(TerminalText.escape(name)): \(error)")
            return error.code == ENOENT ? 127 : 126
        }
        RunSignals.forward(to: child)
        var pipes: [(source: Int32, target: Int32)] = [(outputPipe[0], 1)]
        if !merged { pipes.append((errorPipe[0], 2)) }
        let copy = CopyJob(pipes: pipes, exit: exitPipe[0], log: log.descriptor, tail: tail)
        var copier = pthread_t()
        let created = pthread_create(
            &copier, nil,
            { argument in
                let job = Unmanaged<CopyJob>.fromOpaque(argument!).takeRetainedValue()
                RunCopier.copy(job.pipes, until: job.exit, log: job.log, tail: job.tail)
                return nil
            }, Unmanaged.passRetained(copy).toOpaque())
        if created != 0 {
            Unmanaged.passUnretained(copy).release()
            RunCopier.copy(copy.pipes, until: -1, log: log.descriptor, tail: tail)  // copies until the pipes close
        }
        log.pruneOlder()
        let end = Spawn.wait(child)
        RunSignals.stopForwarding()
        _ = write(exitPipe[1], "x", 1)
        if created == 0 { pthread_join(copier, nil) }
        log.close()
        // Reaped elsewhere (SIGCHLD ignored after all): it ended, how is not known.
        present(end.end, elapsed: .now - started, tail: tail.lines, log: log.path)
        return end.end?.shellStatus ?? 0
    }

    /// Whether descriptors `a` and `b` are the same file (a terminal, a pipe or a file given as both).
    static func sameFile(_ a: Int32, _ b: Int32) -> Bool {
        var first = stat()
        var second = stat()
        guard fstat(a, &first) == 0, fstat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino && first.st_rdev == second.st_rdev
    }

    /// `--pid`: waits for `pid` to end (a pidfd: the kernel says when), then presents its toast.
    private func waitForProcess(_ pid: Int32) -> Int32 {
        let name = ProcessInfo.name(of: pid)
        let descriptor = pidfd_open(pid, 0)
        guard descriptor >= 0, let name else {
            Output.error(
                "run: no process \(pid)"
                    + (errno == ESRCH || name == nil ? "" : ": \(String(cString: strerror(errno)))"))
            return ExitCode.dataError.rawValue
        }
        defer { close(descriptor) }
        let running = ProcessInfo.age(of: pid) ?? .zero
        let started = ContinuousClock.now
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&poller, 1, -1) < 0 && errno == EINTR {}
        let title = "\(name) (\(pid))"
        present(nil, elapsed: running + (.now - started), tail: [], log: nil, title: title)
        return 0
    }

    /// Writes all of `bytes` to `descriptor`, through interruptions; a reader that is gone drops the rest (the
    /// command's output and `--user`'s copies go on).
    static func writeAll(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Presents the toast of a run that ended (`ending` nil: a process not this one's child, `--pid`, ended, how is
    /// not known), unless it took less than `--min-seconds`. A toast that cannot be shown is a warning: the command's
    /// own status is what `run` returns.
    private func present(_ ending: ProgramEnd?, elapsed: Duration, tail: [String], log: String?, title: String? = nil) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard seconds >= options.minimumSeconds else { return }
        var send = SendOptions(title: title ?? Self.title(of: options.command))
        send.message = .text(([Self.describe(ending, seconds: seconds)] + tail).joined(separator: "\n"))
        switch ending {
        case .exited(0)?, nil: send.status = .success
        case .exited?, .signaled?: send.status = .error
        }
        send.plainText = true
        send.appName = options.appName ?? "toastkit"
        send.duration = .duration(options.duration)
        send.language = options.language
        // The output action is carried out by the agent once run has gone: not through the portal, which has none.
        let agentAllowed =
            environment.variable("TOASTKIT_NO_AGENT").map { $0.isEmpty || $0 == "0" } ?? true
            && environment.backendChoice.backend != .portal
        if let log, agentAllowed {
            send.actions = [ActionOption(id: "output", label: send.labels[.output])]
            send.onAction = ["output": ["xdg-open", log]]
        }
        do throws(CommandFailure) {
            _ = try SendCommand.runHere(try send.sent(), environment: environment)
        } catch {
            Output.error("run: the toast was not shown: \(error.message)")
        }
    }

    /// The toast's title: the command line, as a person would type it, cut at 80 characters.
    static func title(of command: [[UInt8]]) -> String {
        let words = command.map { word -> String in
            let text = String(decoding: word, as: UTF8.self)
            let plain =
                !text.isEmpty && text.unicodeScalars.allSatisfy { !" \t\n'\"\\$`;&|<>()*?".unicodeScalars.contains($0) }
            return plain
                ? text
                : "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        }
        let line = words.joined(separator: " ")
        return line.count > 80 ? String(line.prefix(79)) + "…" : line
    }

    /// "exit 0 after 1 min 23 s", "killed by SIGTERM after 4 s", "ended after 2 h 5 min".
    static func describe(_ ending: ProgramEnd?, seconds: Double) -> String {
        let took = formatted(seconds)
        switch ending {
        case .exited(let code)?: return "exit \(code) after \(took)"
        case .signaled(let signal)?: return "killed by \(SignalWatcher.name(of: signal)) after \(took)"
        case nil: return "ended after \(took)"
        }
    }

    /// A duration as people read it: "0.4 s", "12 s", "3 min 5 s", "2 h 1 min".
    static func formatted(_ seconds: Double) -> String {
        if seconds < 10 { return "\((seconds * 10).rounded() / 10) s" }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3600) h \(whole % 3600 / 60) min"
    }
}

/// The pipes, the log and the tail the copying thread works on.
private final class CopyJob: Sendable {
    let pipes: [(source: Int32, target: Int32)]
    let exit: Int32
    let log: Int32?
    let tail: OutputTail

    init(pipes: [(source: Int32, target: Int32)], exit: Int32, log: Int32?, tail: OutputTail) {
        (self.pipes, self.exit, self.log, self.tail) = (pipes, exit, log, tail)
    }
}

/// `text` without the spaces, tabs and newlines around it (`run`'s output lines, `progress`'s input lines).
func trimmed(_ text: String) -> String {
    let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    return String(text.drop(while: blank).reversed().drop(while: blank).reversed())
}

/// Forwards the signals sent to `run` itself (SIGTERM, SIGHUP, SIGUSR1, SIGUSR2) to the command while it runs.
enum RunSignals {
    private static let child = Atomic<Int32>(0)
    private static let forwarded = [SIGTERM, SIGHUP, SIGUSR1, SIGUSR2]

    static func forward(to pid: pid_t) {
        child.store(pid, ordering: .sequentiallyConsistent)
        for signalNumber in forwarded {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                let target = RunSignals.child.load(ordering: .sequentiallyConsistent)
                if target > 0 { kill(target, received) }
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signalNumber, &action, nil)
        }
    }

    static func stopForwarding() {
        child.store(0, ordering: .sequentiallyConsistent)
    }
}

extension ProcessInfo {
    /// The command name of process `pid` (`/proc/PID/comm`), or nil when there is no such process.
    static func name(of pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/comm") else { return nil }
        return trimmed(String(decoding: data, as: UTF8.self))
    }

    /// How long process `pid` has run (its start time in `/proc/PID/stat` against `/proc/uptime`).
    static func age(of pid: Int32) -> Duration? {
        guard let stat = FileManager.default.contents(atPath: "/proc/\(pid)/stat"),
            let uptime = FileManager.default.contents(atPath: "/proc/uptime")
        else { return nil }
        // The fields after the command name, which is in parentheses and may hold spaces.
        let text = String(decoding: stat, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // Field 22 (starttime) is the 20th after the name (state is field 3).
        guard fields.count > 19, let ticks = Double(fields[19]),
            let up = String(decoding: uptime, as: UTF8.self).split(separator: " ").first.flatMap({ Double($0) })
        else { return nil }
        let seconds = up - ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
        return seconds > 0 ? .milliseconds(Int64(seconds * 1000)) : .zero
    }
}
