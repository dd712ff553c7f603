import Foundation
import Testing

@testable import ToastKitAgent

/// A scheduled toast is the user's until a server accepts it (``ClaimedSchedules``): claimed once, given back when its
/// agent leaves first, and never claimed by a leaving agent. Real files in a folder of the test's own.
@Suite struct ClaimedSchedulesTests {
    private func withStore(_ body: (ScheduleStore, String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-claimed-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try ScheduleStore.open(environment: ["XDG_STATE_HOME": folder])
        try body(store, store.path(of: "a"))
    }

    private func entry(_ id: String, due: Double = 1_800_000_000) -> ScheduleStore.Entry {
        ScheduleStore.Entry(id: id, due: due, request: AgentRequest(options: SendOptions(title: id)))
    }

    /// What the store holds, as id and due time (a request read back has its defaults filled in).
    private func held(_ store: ScheduleStore) -> [String] {
        store.load().map { "\($0.id)@\(Int($0.due))" }
    }

    /// Issue 39: what is read back is the toast of the entry's id — the saved request leaves the id out, and a toast
    /// read back without it came due as `toastkit-<uuid>`.
    @Test func aScheduleReadBackIsTheToastOfItsId() throws {
        try withStore { store, _ in
            var kept = entry("te")
            kept.request.options.id = "te"
            try store.put(kept)
            #expect(store.load().map(\.request.options.id) == ["te"])
        }
    }

    @Test func aClaimedToastGoesBackWhenItsAgentLeavesBeforeAServerHasIt() throws {
        try withStore { store, path in
            try store.put(entry("a"))
            try store.put(entry("b"))
            let claimed = ClaimedSchedules(store: store)
            #expect(try claimed.claim(entry("a")) && claimed.holds("a"))
            #expect(try claimed.claim(entry("b")))
            #expect(try !claimed.claim(entry("a")), "claimed once")
            #expect(store.load().isEmpty)
            claimed.settle("b")  // a server has it
            #expect(try claimed.giveBack { _ in false } == ["a"])
            #expect(held(store) == ["a@1800000000"], "due as it was: at once for the next agent")
            #expect(try !claimed.claim(entry("a")), "a leaving agent claims nothing")
            #expect(held(store) == ["a@1800000000"])
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func aNewerScheduleOfTheIdAndALiveToastAreNotGivenBack() throws {
        try withStore { store, _ in
            try store.put(entry("a"))
            try store.put(entry("live"))
            let claimed = ClaimedSchedules(store: store)
            #expect(try claimed.claim(entry("a")))
            #expect(try claimed.claim(entry("live")))
            // Scheduled anew meanwhile (`send --in` again): the newer word wins.
            try store.put(entry("a", due: 1_900_000_000))
            #expect(try claimed.giveBack { $0 == "live" } == [], "nothing put back")
            #expect(held(store) == ["a@1900000000"], "the live one goes with its journal")
        }
    }
}
