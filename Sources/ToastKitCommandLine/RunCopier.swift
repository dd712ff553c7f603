// How `toastkit run` carries its command's output: each piece to run's own output the moment it is read, and, gathered
// in the order it was read, into the log and the toast's last lines in large pieces.
import Glibc

/// Copies a run's output from the command's pipes. What a pipe brings is written at once to its descriptor (the
/// passthrough: the command is seen at its own pace; a command writing in bulk is read ``gatherMicroseconds`` late, in
/// large pieces; run's own output, when it is a pipe, is as large as the command's); the same bytes are gathered, in
/// the order they were read, into one buffer that goes to the log and the toast's tail when it is full, when its first
/// byte has waited ``quietFlush`` milliseconds, and at the end. Memory stays bounded: the buffer, and the tail's few
/// lines.
enum RunCopier {
    /// How many bytes are gathered before the log is written. A file system takes one 1 MiB write for a fraction of
    /// what 256 writes of 4 KiB (a program's usual piece) cost it (ext4: 2.5 ms against 12 ms for 11 MiB).
    static let batch = 1 << 20

    /// How long (ms) output may wait in the buffer before it goes to the log: a command that writes a little now and
    /// then has its log written as it goes, not only at 1 MiB.
    static let quietFlush: Int32 = 100

    /// How long (µs) run lets a pipe fill before reading it when the last read brought at least a page (4 KiB, what
    /// a program's buffered output writes at a time): a command writing in bulk is read in pieces of what it wrote
    /// meanwhile, not woken for each page it writes (`seq 1 1500000`: about 40 context switches instead of 1,000, and
    /// half the system time). Output written a line at a time is read at once.
    static let gatherMicroseconds: UInt32 = 100

    /// The size asked for the command's pipes (Linux's limit for a user, `/proc/sys/fs/pipe-max-size`): a chatty
    /// command writes on while run gathers or writes a batch to the log, instead of waiting for room in a 64 KiB pipe.
    static let pipeSize: Int32 = 1 << 20

    /// Asks for a ``pipeSize`` pipe; a pipe that cannot grow (the user's pipe pages are used up) stays as it is.
    static func enlarge(_ pipe: Int32) {
        _ = fcntl(pipe, 1031 /* F_SETPIPE_SZ, which Glibc's module does not export */, pipeSize)
    }

    /// Enlarges `target` when it is a smaller pipe (`toastkit run … | less`), so that run passes a batch on without
    /// waiting for its reader to empty 64 KiB at a time: run in a pipeline then costs about what the command writing
    /// into the pipe itself does (P9 on a quiet machine: 0.85–1.11× `seq | cat`, against 1.05–1.25× before). A larger
    /// pipe is left as it is; its pages are taken only when used.
    private static func enlargeIfPipe(_ target: Int32) {
        var status = stat()
        guard fstat(target, &status) == 0, status.st_mode & S_IFMT == S_IFIFO,
            fcntl(target, 1032 /* F_GETPIPE_SZ */) < pipeSize
        else { return }
        enlarge(target)
    }

    /// Copies what each pipe (`source`) brings to its `target` and into the log and `tail`, until every pipe is
    /// closed or `exit` is readable (the command ended): then what the pipes hold at that moment is copied and the
    /// copy stops, so a background program that keeps a pipe open, or writes on, cannot hold `run` up.
    static func copy(
        _ pipes: [(source: Int32, target: Int32)], until exit: Int32, log: Int32?, tail: OutputTail
    ) {
        for pipe in pipes { enlargeIfPipe(pipe.target) }
        var gathered = Gathered(log: log, tail: tail)
        var lastRead = 0
        var open = pipes
        var polled: [pollfd] = []
        while !open.isEmpty {
            if polled.isEmpty {
                polled = open.map { pollfd(fd: $0.source, events: Int16(POLLIN), revents: 0) }
                if exit >= 0 { polled.append(pollfd(fd: exit, events: Int16(POLLIN), revents: 0)) }
            }
            let ready = poll(&polled, nfds_t(polled.count), gathered.timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if ready == 0 {
                gathered.flush()  // the first byte has waited long enough
                continue
            }
            if exit >= 0, polled.last!.revents != 0 { break }
            if lastRead >= 4096 { usleep(gatherMicroseconds) }  // in bulk: let more come
            lastRead = 0
            var closed: [Int32] = []
            for (index, pipe) in open.enumerated() where polled[index].revents != 0 {
                if let count = gathered.take(from: pipe.source, to: pipe.target, atMost: batch) {
                    lastRead += count
                } else {
                    closed.append(pipe.source)
                }
            }
            if !closed.isEmpty {
                for source in closed { Glibc.close(source) }
                open.removeAll { closed.contains($0.source) }
                polled = []
            }
        }
        // The command ended: what its pipes hold now (FIONREAD), never more; in the order the pipes are listed.
        for pipe in open {
            var waiting: Int32 = 0
            if ioctl(pipe.source, 0x541B /* FIONREAD */, &waiting) == 0 {
                var left = Int(waiting)
                while left > 0, let count = gathered.take(from: pipe.source, to: pipe.target, atMost: left) {
                    left -= count
                }
            }
            Glibc.close(pipe.source)
        }
        gathered.flush()
    }

    /// The bytes read since the log was last written, in the order they were read.
    private struct Gathered {
        let log: Int32?
        let tail: OutputTail
        var buffer = [UInt8](repeating: 0, count: RunCopier.batch)
        var count = 0
        /// When the first byte in the buffer was read (ms, monotonic).
        var since = 0

        init(log: Int32?, tail: OutputTail) {
            (self.log, self.tail) = (log, tail)
        }

        /// How long poll may wait: for ever when nothing waits for the log, else until the first byte has waited
        /// ``quietFlush`` ms (and at once when it has, and poll found more to read).
        var timeout: Int32 {
            guard count > 0 else { return -1 }
            return Int32(clamping: Swift.max(0, since + Int(RunCopier.quietFlush) - Self.now()))
        }

        private static func now() -> Int {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return time.tv_sec * 1000 + time.tv_nsec / 1_000_000
        }

        /// Reads at most `limit` bytes from `source` (one read), writes them to `target` and keeps them. Returns how
        /// many were read (0 when interrupted), or nil at the pipe's end or on an error.
        mutating func take(from source: Int32, to target: Int32, atMost limit: Int) -> Int? {
            let start = count
            let read = buffer.withUnsafeMutableBytes {
                Glibc.read(source, $0.baseAddress! + start, Swift.min(limit, $0.count - start))
            }
            if read < 0 { return errno == EINTR || errno == EAGAIN ? 0 : nil }
            if read == 0 { return nil }
            if start == 0 { since = Self.now() }
            count += read
            RunCommand.writeAll(target, buffer[start..<count])
            if count == buffer.count || timeout == 0 { flush() }
            return read
        }

        /// Writes what is gathered to the log and the tail.
        mutating func flush() {
            guard count > 0 else { return }
            if let log { RunCommand.writeAll(log, buffer[0..<count]) }
            tail.append(buffer[0..<count])
            count = 0
        }
    }
}
