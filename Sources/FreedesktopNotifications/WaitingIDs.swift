/// Toast ids waiting for something (the link, a close to be answered), each once, in the order they began to wait:
/// both presenter machines keep their queues in it, so asking whether a toast waits costs the same with ten
/// thousand waiting as with one.
struct WaitingIDs: Sendable {
    private var order: [String] = []
    private var members: Set<String> = []

    /// Whether nobody waits.
    var isEmpty: Bool { members.isEmpty }

    /// Whether `id` waits.
    func contains(_ id: String) -> Bool { members.contains(id) }

    /// Lets `id` wait, unless it already does.
    mutating func insert(_ id: String) {
        if members.insert(id).inserted { order.append(id) }
    }

    /// `id` no longer waits (its place in the order is dropped when everyone is taken).
    mutating func remove(_ id: String) {
        members.remove(id)
        if members.isEmpty { order = [] }
    }

    /// Everyone who waits, in order.
    var all: [String] {
        guard order.count != members.count else { return order }
        var left = members
        return order.filter { left.remove($0) != nil }
    }

    /// Everyone who waits, in order; nobody waits afterwards.
    mutating func takeAll() -> [String] {
        defer { removeAll() }
        return all
    }

    /// Nobody waits any more.
    mutating func removeAll() {
        order = []
        members = []
    }
}
