// The I/O of root's `--user` children: starts them with nothing of root's, copies their output and root's input, and
// carries out UserDelivery's actions. The rules are UserDelivery's.
import CSpawn
import FreedesktopNotifications
import Glibc

/// Runs commands as other users for root (`toastkit --user NAME|all …`) and carries out ``UserDelivery``'s rules.
///
/// Each child gets nothing of root's: no terminal (a session of its own, standard input from `/dev/null` or from a
/// pipe root writes, standard output and errors through pipes root copies to its own), no other descriptor, only the
/// environment it is given. So a user cannot `ptrace` the child into root's terminal (`TIOCSTI`): it has none.
enum UserChildren {
    /// One command to run as a user.
    struct Child {
        /// The user's name, for root's lines.
        var name: String
        /// The full argv (`/usr/bin/setpriv`'s, with the command after it).
        var argv: [[UInt8]]
        /// Its whole environment.
        var environment: [String: String]
        /// The folder it starts in (the user's home): never root's.
        var workingDirectory: String
    }

    /// A user's place in the delivery: a command to run, or a failure already known (no bus).
    enum Slot {
        case run(Child)
        case failed(name: String, status: Int32)

        var name: String {
            switch self {
            case .run(let child): child.name
            case .failed(let name, _): name
            }
        }
    }

    /// Runs the `slots`' commands at once and returns root's exit code. With `relaysInput`, what root reads on its
    /// standard input is given to every child (read once, written to each); otherwise their standard input is
    /// `/dev/null`.
    static func run(_ slots: [Slot], relaysInput: Bool, settings: UserDelivery.Settings) -> Int32 {
        let signals = SignalPipe.install([SIGCHLD, SIGINT, SIGTERM, SIGHUP])
        defer { signals.restore() }
        let start = ContinuousClock.now
        func now() -> Duration { ContinuousClock.now - start }
        var delivery = UserDelivery(names: slots.map(\.name), settings: settings, now: now())
        var running: [UserChildProcess?] = []
        var failed: [(Int, ProgramEnd)] = []
        for (index, slot) in slots.enumerated() {
            switch slot {
            case .failed(_, let status):
                running.append(nil)
                failed.append((index, .exited(status)))
            case .run(let child):
                switch UserChildProcess.start(child, relaysInput: relaysInput, lineAtATime: slots.count > 1) {
                case .success(let started): running.append(started)
                case .failure(let error):
                    Output.error(
                        "\(settings.label): cannot start \(String(decoding: child.argv[0], as: UTF8.self)) for "
                            + "\(child.name): \(error)")
                    running.append(nil)
                    failed.append((index, .exited(ExitCode.unavailable.rawValue)))
                }
            }
        }
        var input = InputRelay(active: relaysInput, label: settings.label)
        var exitCode: Int32?
        func carryOut(_ actions: [UserDelivery.Action]) {
            for action in actions {
                switch action {
                case .signal(let indices, let signal):
                    // Each child leads a session and a process group of its own.
                    for index in indices { if let pid = running[index]?.pid { kill(-pid, signal) } }
                case .kill(let indices):
                    for index in indices {
                        guard let pid = running[index]?.pid else { continue }
                        kill(-pid, SIGKILL)
                        kill(pid, SIGKILL)
                    }
                case .report(let line): Output.error(line)
                case .finish(let code): exitCode = code
                }
            }
        }
        for (index, end) in failed { carryOut(delivery.handle(.ended(index, end), at: now())) }
        // Ends that came before the handler saw them (none are lost: SIGCHLD is handled from the start).
        func lookAtChildren() {
            for (index, child) in running.enumerated() {
                guard let child, child.isAlive else { continue }
                for event in child.look(index) { carryOut(delivery.handle(event, at: now())) }
                if !child.isAlive { child.finishOutput() }
            }
        }
        lookAtChildren()
        while exitCode == nil {
            var descriptors: [pollfd] = [pollfd(fd: signals.readEnd, events: Int16(POLLIN), revents: 0)]
            var owners: [Owner] = [.signals]
            if input.wantsToRead(running) {
                descriptors.append(pollfd(fd: 0, events: Int16(POLLIN), revents: 0))
                owners.append(.input)
            }
            for (index, child) in running.enumerated() {
                guard let child else { continue }
                for stream in child.outputs where stream.isOpen {
                    descriptors.append(pollfd(fd: stream.descriptor, events: Int16(POLLIN), revents: 0))
                    owners.append(.output(index, stream.target))
                }
                if child.input.wantsToWrite {
                    descriptors.append(pollfd(fd: child.input.descriptor, events: Int16(POLLOUT), revents: 0))
                    owners.append(.childInput(index))
                }
            }
            let timeout = delivery.nextDeadline.map { milliseconds(until: $0, from: now()) } ?? -1
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR {
                Output.error("\(settings.label): cannot wait for the users' commands: \(Errno(errno)); they were ended")
                for child in running.compactMap({ $0 }) where child.isAlive { kill(-child.pid, SIGKILL) }
                break
            }
            for (slot, owner) in zip(descriptors, owners) where slot.revents != 0 {
                switch owner {
                case .signals:
                    for signal in signals.drain() {
                        if signal == SIGCHLD {
                            lookAtChildren()
                        } else {
                            carryOut(delivery.handle(.interrupted(signal), at: now()))
                        }
                    }
                case .input: input.read(into: running)
                case .output(let index, let target): running[index]?.copy(target)
                case .childInput(let index): running[index]?.input.write()
                }
            }
            // Each turn, not only on a SIGCHLD: an end is never missed.
            lookAtChildren()
            carryOut(delivery.handle(.tick, at: now()))
        }
        for child in running.compactMap({ $0 }) {
            child.finishOutput()
            // Killed by root: reaped here if it is gone already, never waited for (a process of the user's may not
            // end even when killed: stuck on a file system the user serves).
            if child.isAlive { _ = Spawn.wait(child.pid, blocking: false) }
        }
        return exitCode ?? ExitCode.software.rawValue
    }

    /// `poll`'s timeout for `deadline`: at least 0, at most a minute, rounded up.
    private static func milliseconds(until deadline: Duration, from now: Duration) -> Int32 {
        let left = deadline - now
        guard left > .zero else { return 0 }
        let whole = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
        return Int32(min(whole, 60_000))
    }

    private enum Owner {
        case signals, input
        case output(Int, Int32)
        case childInput(Int)
    }
}
