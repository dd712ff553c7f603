// When another process ends, as the kernel tells it (a pidfd): for a test that must see a program it did not start
// (a dialog, a player, a child of a child) go away.
import CSpawn
import Glibc

/// Whether the process `pid` (any process, not only a child) ends within `seconds`: a pidfd, so the kernel says
/// when; true if it is already gone.
public func processEnds(_ pid: Int32, within seconds: Int32) async throws -> Bool {
    try await onOwnThread {
        let descriptor = pidfd_open(pid, 0)
        guard descriptor >= 0 else { return errno == ESRCH }
        defer { close(descriptor) }
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        var count: Int32
        repeat { count = poll(&ready, 1, seconds * 1000) } while count < 0 && errno == EINTR
        return count == 1
    }
}
