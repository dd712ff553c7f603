// The stack's order, front first, kept in a ring buffer: a toast goes in front, or waits at the back, in constant time
// however many are in the order (an array moved every other one for each toast put in front: decision 0011's P2).

/// A sequence of elements in a ring buffer, indexed 0 (the front) to `count − 1`: inserting or removing at either
/// end is O(1); in the middle, only the shorter side moves. Everything else a `RangeReplaceableCollection` does works,
/// by rebuilding (O(n)).
struct RingOrder<Element>: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    /// The slots; `count` of them, from `head` on (wrapping), hold the elements.
    private var slots: [Element?] = []
    private var head = 0
    /// How many elements it holds.
    private(set) var count = 0

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "index \(position) out of 0..<\(count)")
            return slots[slot(position)]!
        }
        set {
            precondition(position >= 0 && position < count, "index \(position) out of 0..<\(count)")
            slots[slot(position)] = newValue
        }
    }

    /// The slot of the element at `position` (0 ≤ position < slots.count).
    private func slot(_ position: Int) -> Int {
        let slot = head + position
        return slot >= slots.count ? slot - slots.count : slot
    }

    /// Twice the room (at least 8), the elements moved to the start of the slots.
    private mutating func grow() {
        var larger: [Element?] = []
        larger.reserveCapacity(Swift.max(8, slots.count * 2))
        for position in 0..<count { larger.append(slots[slot(position)]) }
        larger.append(contentsOf: repeatElement(nil, count: Swift.max(8, slots.count * 2) - count))
        slots = larger
        head = 0
    }

    mutating func append(_ element: Element) {
        if count == slots.count { grow() }
        slots[slot(count)] = element
        count += 1
    }

    /// Puts `element` in front (index 0).
    mutating func prepend(_ element: Element) {
        if count == slots.count { grow() }
        head = head == 0 ? slots.count - 1 : head - 1
        slots[head] = element
        count += 1
    }

    mutating func insert(_ element: Element, at position: Int) {
        precondition(position >= 0 && position <= count, "index \(position) out of 0...\(count)")
        if position < count - position {
            // The front side is shorter: in front, then moved back into place.
            prepend(element)
            for index in 0..<position { swapAt(index, index + 1) }
        } else {
            append(element)
            for index in stride(from: count - 1, to: position, by: -1) { swapAt(index, index - 1) }
        }
    }

    @discardableResult
    mutating func remove(at position: Int) -> Element {
        precondition(position >= 0 && position < count, "index \(position) out of 0..<\(count)")
        if position < count - 1 - position {
            // The front side is shorter: it moves back one, and the front goes.
            for index in stride(from: position, to: 0, by: -1) { swapAt(index, index - 1) }
            let element = slots[head]!
            slots[head] = nil
            head = head + 1 == slots.count ? 0 : head + 1
            count -= 1
            return element
        }
        for index in position..<(count - 1) { swapAt(index, index + 1) }
        count -= 1
        let last = slot(count)
        let element = slots[last]!
        slots[last] = nil
        return element
    }

    mutating func swapAt(_ i: Int, _ j: Int) {
        guard i != j else { return }
        slots.swapAt(slot(i), slot(j))
    }

    mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
        slots = keepCapacity ? Array(repeating: nil, count: slots.count) : []
        head = 0
        count = 0
    }

    mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == Element {
        precondition(subrange.lowerBound >= 0 && subrange.upperBound <= count, "range \(subrange) out of 0..<\(count)")
        var rebuilt = RingOrder()
        for position in 0..<subrange.lowerBound { rebuilt.append(self[position]) }
        for element in newElements { rebuilt.append(element) }
        for position in subrange.upperBound..<count { rebuilt.append(self[position]) }
        self = rebuilt
    }
}

extension RingOrder: Sendable where Element: Sendable {}
