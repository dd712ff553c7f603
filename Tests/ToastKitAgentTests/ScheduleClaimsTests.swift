import Foundation
import Testing

@testable import ToastKitAgent

/// A scheduled toast is the user's until a server accepts it (``ScheduleClaims``, and the store's claim and give-back as
/// the agent runs them): claimed once, given back when its agent leaves first, and never claimed by a leaving agent.
/// Real files in a folder of the test's own.
@Suite struct ScheduleClaimsTests {
    /// Claims `entry` as the agent does: in the store, while the claims are open.
    private func claim(_ entry: ScheduleStore.Entry, _ store: ScheduleStore, _ claims: inout ScheduleClaims) throws
        -> Bool
    {
        guard claims.isOpen, try store.claim(entry.id, due: entry.due) else { return false }
        claims.claimed(entry)
        return true
    }

    /// Gives back as the agent does as it leaves: the ids put back.
    private func giveBack(_ store: ScheduleStore, _ claims: inout ScheduleClaims, keeping: (String) -> Bool) throws
        -> [String]
    {
        let entries = claims.close(keeping: keeping)
        return entries.isEmpty ? [] : try store.giveBack(entries)
    }

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
            var claims = ScheduleClaims()
            #expect(try claim(entry("a"), store, &claims) && claims.holds("a"))
            #expect(try claim(entry("b"), store, &claims))
            #expect(try !claim(entry("a"), store, &claims), "claimed once")
            #expect(store.load().isEmpty)
            claims.settle("b")  // a server has it
            #expect(try giveBack(store, &claims) { _ in false } == ["a"])
            #expect(held(store) == ["a@1800000000"], "due as it was: at once for the next agent")
            #expect(try !claim(entry("a"), store, &claims), "a leaving agent claims nothing")
            #expect(held(store) == ["a@1800000000"])
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func aNewerScheduleOfTheIdAndALiveToastAreNotGivenBack() throws {
        try withStore { store, _ in
            try store.put(entry("a"))
            try store.put(entry("live"))
            var claims = ScheduleClaims()
            #expect(try claim(entry("a"), store, &claims))
            #expect(try claim(entry("live"), store, &claims))
            // Scheduled anew meanwhile (`send --in` again): the newer word wins.
            try store.put(entry("a", due: 1_900_000_000))
            #expect(try giveBack(store, &claims) { $0 == "live" } == [], "nothing put back")
            #expect(held(store) == ["a@1900000000"], "the live one goes with its journal")
        }
    }
}
