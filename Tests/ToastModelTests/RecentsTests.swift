import Testing

@testable import ToastModel

/// The bounded memory behind `outcome(of:)` after the end, the presenters' failure reasons and the agent's ends.
@Suite struct RecentsTests {
    @Test func keepsTheMostRecentKeysAndForgets() {
        var recents = Recents<Int>(capacity: 3)
        for (index, key) in ["a", "b", "c"].enumerated() { recents.remember(index, for: key) }
        recents.remember(10, for: "a")  // again: a new value, its place kept
        recents.remember(3, for: "d")  // the oldest, "a", goes
        #expect(recents["a"] == nil)
        #expect([recents["b"], recents["c"], recents["d"]] == [1, 2, 3])
        recents.forget("c")
        #expect(recents["c"] == nil)
        recents.remember(4, for: "e")  // room again: nothing else goes
        #expect([recents["b"], recents["d"], recents["e"]] == [1, 3, 4])
    }
}
