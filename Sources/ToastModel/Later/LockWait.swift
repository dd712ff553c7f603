// Waiting for a `flock` with a bound: a thread of its own waits in the kernel's line, the caller at most the bound.
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A blocking `flock` on a thread of its own, waited for with a bound: the kernel serves waiters in turn, and one that
/// gives up leaves the descriptor to the thread, which closes it when (if ever) it gets the lock.
final class LockWait: Sendable {
    private enum Phase { case waiting, locked, abandoned }
    private let descriptor: Int32
    private let phase = Mutex(Phase.waiting)
    private let condition = ConditionBox()

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Whether the lock on `descriptor` was taken within `bound`; when not, the descriptor is the waiting thread's.
    static func wait(_ descriptor: Int32, bound: Duration) -> Bool {
        let wait = LockWait(descriptor: descriptor)
        var thread = pthread_t()
        let box = Unmanaged.passRetained(wait).toOpaque()
        guard
            pthread_create(
                &thread, nil,
                { argument in
                    let wait = Unmanaged<LockWait>.fromOpaque(argument!).takeRetainedValue()
                    wait.block()
                    return nil
                }, box) == 0
        else {
            Unmanaged<LockWait>.fromOpaque(box).release()
            return false
        }
        pthread_detach(thread)
        wait.condition.wait(until: bound)
        return wait.phase.withLock { phase in
            if phase == .locked { return true }
            phase = .abandoned
            return false
        }
    }

    private func block() {
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        let keep = phase.withLock { phase in
            guard phase == .waiting else { return false }
            phase = .locked
            return true
        }
        if !keep { close(descriptor) }
        condition.signal()
    }
}

/// A one-shot signal with a bounded wait (a pthread condition on the monotonic clock).
private final class ConditionBox: @unchecked Sendable {
    // Allocated: a pthread object must not move.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var signaled = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func signal() {
        pthread_mutex_lock(mutex)
        signaled = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until ``signal()`` or `bound` has passed.
    func wait(until bound: Duration) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanoseconds = Int64(now.tv_nsec) + bound.components.attoseconds / 1_000_000_000
        var deadline = timespec(
            tv_sec: now.tv_sec + Int(bound.components.seconds) + Int(nanoseconds / 1_000_000_000),
            tv_nsec: Int(nanoseconds % 1_000_000_000))
        pthread_mutex_lock(mutex)
        while !signaled {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        pthread_mutex_unlock(mutex)
    }
}
