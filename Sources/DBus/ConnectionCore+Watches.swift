import Glibc

// The connection's watches and timeouts, as libdbus adds, removes and toggles them (called on the I/O thread, the
// only one that touches them; see ConnectionCore's invariant), and the poll timeout they give the I/O loop.
extension ConnectionCore {
    func addWatch(_ watch: RawConnection.Watch) {
        assertOnIOThread()
        watches.append(Watch(watch: watch, enabled: watch.isEnabled))
    }

    func removeWatch(_ watch: RawConnection.Watch) {
        assertOnIOThread()
        watches.removeAll { $0.watch == watch }
    }

    func toggleWatch(_ watch: RawConnection.Watch) {
        assertOnIOThread()
        if let index = watches.firstIndex(where: { $0.watch == watch }) {
            watches[index].enabled = watch.isEnabled
        }
    }

    private static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    private static func deadline(for timeout: RawConnection.Timeout) -> UInt64 {
        now() + UInt64(timeout.intervalMilliseconds) * 1_000_000
    }

    func addTimeout(_ timeout: RawConnection.Timeout) {
        assertOnIOThread()
        timeouts.set(timeout, enabled: timeout.isEnabled, deadline: Self.deadline(for: timeout))
    }

    func removeTimeout(_ timeout: RawConnection.Timeout) {
        assertOnIOThread()
        timeouts.remove(timeout)
    }

    func toggleTimeout(_ timeout: RawConnection.Timeout) {
        assertOnIOThread()
        guard timeouts.contains(timeout) else { return }
        timeouts.set(timeout, enabled: timeout.isEnabled, deadline: Self.deadline(for: timeout))
    }

    func nextTimeoutMilliseconds() -> Int32 {
        assertOnIOThread()
        guard let nearest = timeouts.nearest() else { return -1 }
        let now = Self.now()
        guard nearest > now else { return 0 }
        // Round up so the timeout has really passed when poll returns.
        return Int32(clamping: (nearest - now + 999_999) / 1_000_000)
    }

    func handleExpiredTimeouts() {
        assertOnIOThread()
        guard let nearest = timeouts.nearest() else { return }
        let now = Self.now()
        guard nearest <= now else { return }
        for timeout in timeouts.takeDue(now: now) {
            // An earlier handler may have removed it.
            guard timeouts.contains(timeout) else { continue }
            timeouts.set(timeout, enabled: timeout.isEnabled, deadline: Self.deadline(for: timeout))
            timeout.handle()
        }
    }
}
