/// libdbus's timeouts on the I/O thread, by key: O(1) add, remove and toggle, and the nearest deadline from a
/// min-heap whose stale entries (removed, disabled or re-armed timeouts) are dropped when they reach the top.
///
/// Every pending call has a timeout, so with thousands of calls in flight a list scanned on every change and every
/// turn of the loop costs O(n) per call.
struct DeadlineQueue<Key: Hashable> {
    private struct Entry {
        var enabled: Bool
        var deadline: UInt64
        var generation: UInt64
    }

    private struct Node {
        var deadline: UInt64
        var key: Key
        var generation: UInt64
    }

    private var entries: [Key: Entry] = [:]
    private var heap: [Node] = []
    private var generation: UInt64 = 0

    /// How many timeouts are registered (enabled or not).
    var count: Int { entries.count }

    /// Adds `key`, or replaces what was known about it.
    mutating func set(_ key: Key, enabled: Bool, deadline: UInt64) {
        generation &+= 1
        entries[key] = Entry(enabled: enabled, deadline: deadline, generation: generation)
        if enabled { push(Node(deadline: deadline, key: key, generation: generation)) }
        compactIfNeeded()
    }

    /// Forgets `key`.
    mutating func remove(_ key: Key) {
        entries[key] = nil
        compactIfNeeded()
    }

    /// Whether `key` is registered.
    func contains(_ key: Key) -> Bool { entries[key] != nil }

    /// The nearest deadline of an enabled timeout.
    mutating func nearest() -> UInt64? {
        dropStaleTop()
        return heap.first?.deadline
    }

    /// Takes every enabled timeout whose deadline is at or before `now`, nearest first. They stay registered but
    /// leave the heap: re-arm each with ``set(_:enabled:deadline:)``.
    mutating func takeDue(now: UInt64) -> [Key] {
        var due: [Key] = []
        while true {
            dropStaleTop()
            guard let top = heap.first, top.deadline <= now else { return due }
            popTop()
            due.append(top.key)
        }
    }

    /// Forgets everything.
    mutating func removeAll() {
        entries = [:]
        heap = []
    }

    private func isLive(_ node: Node) -> Bool {
        guard let entry = entries[node.key] else { return false }
        return entry.enabled && entry.generation == node.generation
    }

    private mutating func dropStaleTop() {
        while let top = heap.first, !isLive(top) { popTop() }
    }

    /// Rebuilds the heap from the live entries when stale nodes outnumber them (amortized O(1) per change).
    private mutating func compactIfNeeded() {
        guard heap.count > 64, heap.count > 2 * entries.count else { return }
        heap = entries.compactMap { key, entry in
            entry.enabled ? Node(deadline: entry.deadline, key: key, generation: entry.generation) : nil
        }
        guard heap.count > 1 else { return }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func push(_ node: Node) {
        heap.append(node)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count, heap[left + 1].deadline < heap[left].deadline { smallest = left + 1 }
            guard heap[smallest].deadline < heap[parent].deadline else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
