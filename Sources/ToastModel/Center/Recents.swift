/// The values of the most recently remembered keys, at most ``capacity`` of them (the oldest goes first): answers
/// that may be asked for after the fact — how a toast ended, why it failed — without growing for ever.
package struct Recents<Value: Sendable>: Sendable {
    private var values: [String: Value] = [:]
    private var order: [String] = []
    /// How many keys are kept.
    package let capacity: Int

    /// An empty memory of `capacity` keys.
    package init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The value remembered for `key`, if it is still among the recent ones.
    package subscript(key: String) -> Value? { values[key] }

    /// Remembers `value` for `key` (a key remembered again keeps its place), dropping the oldest key beyond
    /// ``capacity``.
    package mutating func remember(_ value: Value, for key: String) {
        if values.updateValue(value, forKey: key) == nil { order.append(key) }
        if order.count > capacity { values[order.removeFirst()] = nil }
    }

    /// Forgets `key`.
    package mutating func forget(_ key: String) {
        guard !values.isEmpty, values.removeValue(forKey: key) != nil else { return }
        order.removeAll { $0 == key }
    }
}
