// Short questions to other programs (`gsettings`, `getent`): what one prints, bounded in time and size.
import CSpawn
import Glibc

/// Short questions to other programs (`gsettings`, `getent`): what one prints, bounded in time and size.
package enum Subprocess {
    /// What `argv` prints on standard output, or nil when it cannot start, fails, or takes longer than two seconds
    /// (it is then killed).
    package static func output(of argv: [String], environment: [String: String]) -> String? {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe2(&pipeEnds, O_CLOEXEC) == 0 else { return nil }
        defer { close(pipeEnds[0]) }
        let started = Spawn.start(argv, environment: environment, output: pipeEnds[1], newSession: true)
        close(pipeEnds[1])
        guard case .success(let pid) = started else { return nil }
        var output: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(2)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var closed = false
        while !closed, output.count < 65536 {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            var poller = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            guard poll(&poller, 1, Int32(max(1, milliseconds))) > 0 else { break }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count <= 0 { closed = true } else { output += buffer.prefix(count) }
        }
        // Its output ended: it is exiting. Otherwise it took too long (or printed too much) and is stopped.
        if !closed { kill(pid, SIGKILL) }
        switch Spawn.wait(pid) {
        // Reaped by the kernel (SIGCHLD ignored by whoever started this process): its output is all there is.
        case .ended(.exited(0)) where closed, .notSeen where closed: return String(decoding: output, as: UTF8.self)
        default: return nil
        }
    }
}
