import Testing
import ToastKitTesting

@testable import ToastModel

/// The stack's order (a ring buffer) against an array doing the same, operation for operation, with seeded random
/// sequences that wrap it around and grow it.
@Suite struct RingOrderTests {
    @Test(arguments: 0..<16)
    func itKeepsTheSameOrderAsAnArray(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var ring = RingOrder<Int>()
        var array: [Int] = []
        for step in 0..<2000 {
            let value = step
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                ring.prepend(value)
                array.insert(value, at: 0)
            case 25..<45:
                ring.append(value)
                array.append(value)
            case 45..<60:
                let position = Int.random(in: 0...array.count, using: &random)
                ring.insert(value, at: position)
                array.insert(value, at: position)
            case 60..<90 where !array.isEmpty:
                let position = Int.random(in: 0..<array.count, using: &random)
                #expect(ring.remove(at: position) == array.remove(at: position))
            case 90..<95 where !array.isEmpty:
                let position = Int.random(in: 0..<array.count, using: &random)
                ring[position] = -value
                array[position] = -value
            case 95..<97 where array.count > 2:
                let range = 1..<Int.random(in: 2..<array.count, using: &random)
                ring.replaceSubrange(range, with: [value, value + 1])
                array.replaceSubrange(range, with: [value, value + 1])
            case 97:
                ring.removeAll(where: { $0 % 3 == 0 })
                array.removeAll(where: { $0 % 3 == 0 })
            default:
                break
            }
            #expect(Array(ring) == array, "seed \(seed) step \(step)")
            if Array(ring) != array { return }
        }
        ring.removeAll(keepingCapacity: true)
        #expect(ring.isEmpty)
        ring.prepend(1)
        ring.append(2)
        #expect(Array(ring) == [1, 2])
    }

    @Test func theFrontAndTheBackAreConstantTime() {
        // 100,000 in front, then 100,000 behind: a quadratic order would take minutes.
        var ring = RingOrder<Int>()
        for value in 0..<100_000 { ring.prepend(value) }
        for value in 0..<100_000 { ring.append(-value) }
        #expect(ring.first == 99_999 && ring.last == -99_999 && ring.count == 200_000)
        while ring.count > 1 { ring.remove(at: 0) }
        #expect(Array(ring) == [-99_999])
    }
}
