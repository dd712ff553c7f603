// The user's store of scheduled toasts (``ScheduleStore``, issue 39): one file per schedule, named after its id and
// never by it, each checked alone when read (one bad or large file costs the others nothing), changed one at a time
// under the lock (of many claimers of one schedule, one gets it), and the single file of earlier versions taken in
// once. Real files in folders of the test's own.
import Foundation
import Glibc
import Synchronization
import Testing
import ToastModel

@testable import ToastKitAgent

@Suite struct ScheduleStoreTests {
    /// A user's state folder (and runtime folder) of the test's own, and a store of it.
    private func withStore(_ body: (ScheduleStore, String) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-store-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try body(try Self.store(root), "\(root)/state/toastkit")
    }

    private static func store(_ root: String) throws -> ScheduleStore {
        try FileManager.default.createDirectory(atPath: "\(root)/runtime", withIntermediateDirectories: true)
        return try ScheduleStore.open(environment: [
            "XDG_STATE_HOME": "\(root)/state", "XDG_RUNTIME_DIR": "\(root)/runtime",
        ])
    }

    private func entry(_ id: String, due: Double = 1_800_000_000, title: String? = nil) -> ScheduleStore.Entry {
        var options = SendOptions(title: title ?? "T \(id)")
        options.id = id
        return ScheduleStore.Entry(id: id, due: due, request: AgentRequest(options: options))
    }

    /// What the store holds, as id and due time.
    private func held(_ store: ScheduleStore) -> [String] {
        store.load().map { "\($0.id)@\(Int($0.due))" }
    }

    private func names(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    @Test func eachScheduleHasAFileOfItsOwnNamedAfterItsIdAndNeverByIt() throws {
        #expect(ScheduleStore.fileName(of: "cita") == "cita.json")
        #expect(ScheduleStore.fileName(of: "a/../b") == "a%2F%2E%2E%2Fb.json")
        #expect(ScheduleStore.fileName(of: "..") == "%2E%2E.json")
        #expect(ScheduleStore.fileName(of: "ñ 1") == "%C3%B1%201.json")
        #expect(ScheduleStore.fileName(of: "50%") == "50%25.json")
        let long = String(repeating: "x", count: 300)
        let hashed = ScheduleStore.fileName(of: long)
        #expect(hashed.hasPrefix("~") && hashed.utf8.count == 22, "\(hashed)")
        #expect(ScheduleStore.fileName(of: String(repeating: "é", count: 40)).hasPrefix("~"), "240 bytes escaped")
        for id in ["cita", "a/../b", "..", "ñ 1", "50%", "toastkit-6F1C", String(repeating: "y", count: 200)] {
            let name = ScheduleStore.fileName(of: id)
            #expect(!name.contains("/") && name.utf8.count <= 205)
            #expect(ScheduleStore.id(ofFileName: name) == id, "\(name)")
            #expect(ScheduleStore.isEntryFileName(name))
        }
        #expect(ScheduleStore.id(ofFileName: hashed) == nil && ScheduleStore.isEntryFileName(hashed))
        // Not an entry's file: what the store sets aside or leaves while writing, and names no id is given.
        for name in [
            "cita.json.refused", "cita.json.4242.tmp", "%41.json", "a%2f.json", "a%2.json", ".json", "cita", "~12.json",
            "~0123456789ABCDEF.json",
        ] {
            #expect(!ScheduleStore.isEntryFileName(name), "\(name)")
        }

        try withStore { store, state in
            try store.put(entry("../../escape"))
            try store.put(entry(long))
            #expect(names("\(state)/scheduled") == [hashed, "%2E%2E%2F%2E%2E%2Fescape.json"].sorted())
            #expect(!FileManager.default.fileExists(atPath: "\(state)/escape.json"))
            #expect(Set(store.load().map(\.id)) == ["../../escape", long])
            #expect(try store.remove(long) && store.remove("../../escape"))
            #expect(names("\(state)/scheduled").isEmpty)
        }
    }

    @Test func putRemoveClaimAndGiveBackKeepTheirMeaning() throws {
        try withStore { store, _ in
            try store.put(entry("a"))
            try store.put(entry("b", due: 1_700_000_000))
            try store.put(entry("a", due: 1_900_000_000))
            #expect(held(store) == ["b@1700000000", "a@1900000000"], "soonest first; a scheduled anew")
            #expect(try store.remove("a"))
            #expect(try !store.remove("a"), "gone already")
            #expect(try !store.claim("b", due: 1_700_000_001), "another time: scheduled anew meanwhile")
            #expect(try store.claim("b", due: 1_700_000_000))
            #expect(try !store.claim("b", due: 1_700_000_000), "claimed once")
            #expect(store.load().isEmpty)
            #expect(try store.giveBack([entry("b", due: 1_700_000_000)]) == ["b"])
            try store.put(entry("c", due: 1_950_000_000))
            #expect(try store.giveBack([entry("b"), entry("c"), entry("d")]) == ["d"], "the newer word wins")
            #expect(held(store) == ["b@1700000000", "d@1800000000", "c@1950000000"])
        }
    }

    /// Issue 39: one file that cannot be trusted — too large, not JSON, of another version, another toast's under this
    /// name, a link — is set aside alone as `<file>.refused`; every other schedule loads.
    @Test func anOversizedAndAGarbageEntryAreRefusedAloneAndTheRestLoad() throws {
        try withStore { store, state in
            let folder = "\(state)/scheduled"
            for id in ["a", "b", "c"] { try store.put(entry(id)) }
            let big = try #require(FileHandle(forWritingAtPath: creating("\(folder)/big.json")))
            try big.truncate(atOffset: UInt64(ScheduleStore.maximumSize + 1))
            try big.close()
            try Data("{\"format\":\"toastkit-sch".utf8).write(to: URL(fileURLWithPath: "\(folder)/torn.json"))
            let a = try String(contentsOfFile: "\(folder)/a.json", encoding: .utf8)
            try a.replacingOccurrences(of: "\"version\":2", with: "\"version\":3")
                .write(toFile: "\(folder)/later.json", atomically: false, encoding: .utf8)
            try a.write(toFile: "\(folder)/copy.json", atomically: false, encoding: .utf8)
            #expect(symlink("\(folder)/b.json", "\(folder)/link.json") == 0)
            let refused = ["big", "copy", "later", "link", "torn"]

            #expect(held(store) == ["a@1800000000", "b@1800000000", "c@1800000000"])
            #expect(
                names(folder) == (["a", "b", "c"].map { "\($0).json" } + refused.map { "\($0).json.refused" }).sorted())
            #expect(held(store).count == 3, "read again: the same, nothing more set aside")
            // The store goes on as before around them.
            try store.put(entry("big"))
            #expect(try store.claim("a", due: 1_800_000_000))
            #expect(held(store) == ["b@1800000000", "big@1800000000", "c@1800000000"])
        }
    }

    @Test func aScheduleTooLargeToKeepIsRefusedWhenPutAndCostsNoOther() throws {
        try withStore { store, state in
            try store.put(entry("a"))
            var large = entry("large", title: String(repeating: "x", count: ScheduleStore.maximumSize))
            large.request.options.message = .text("and more")
            #expect(throws: PrivateFileError.self) { try store.put(large) }
            #expect(names("\(state)/scheduled") == ["a.json"])
            #expect(held(store) == ["a@1800000000"])
        }
    }

    /// Two agents of the user (here: threads, each with a store of its own, so each takes the lock as a process
    /// does) reach the same schedules' time together: each is claimed, and shown, once.
    @Test func ofManyClaimersOfOneScheduleOneOnlyGetsIt() throws {
        try withStore { store, state in
            let ids = (0..<40).map { "r\($0)" }
            for id in ids { try store.put(entry(id)) }
            let root = String(state.dropLast("/state/toastkit".count))
            let wins = Mutex([String: Int]())
            let failures = Mutex([String]())
            DispatchQueue.concurrentPerform(iterations: 6) { index in
                do {
                    let mine = try Self.store(root)
                    var order = ids
                    var generator = SystemRandomNumberGenerator()
                    order.shuffle(using: &generator)
                    for id in order where try mine.claim(id, due: 1_800_000_000) {
                        wins.withLock { $0[id, default: 0] += 1 }
                    }
                } catch {
                    failures.withLock { $0.append("\(index): \(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            #expect(wins.withLock { $0 } == Dictionary(uniqueKeysWithValues: ids.map { ($0, 1) }))
            #expect(store.load().isEmpty)
        }
    }

    /// What a reader told of changed files reads: those files only, and the ids they stand for (a gone schedule's
    /// id too); a hashed name does not tell its id, so only a whole load can.
    @Test func aLoadOfSomeNamesReadsThoseFilesOnly() throws {
        try withStore { store, state in
            try store.put(entry("a"))
            try store.put(entry("b"))
            let some = try #require(store.load(names: ["a.json"]))
            #expect(some.entries.map(\.id) == ["a"] && some.ids == ["a"])
            #expect(try store.remove("a"))
            let gone = try #require(store.load(names: ["a.json", "b.json"]))
            #expect(gone.entries.map(\.id) == ["b"] && gone.ids == ["a", "b"])
            #expect(store.load(names: [ScheduleStore.fileName(of: String(repeating: "z", count: 300))]) == nil)
            // A writer that died left its temporary file: the next whole load removes it.
            let temporary = creating("\(state)/scheduled/b.json.999999.tmp")
            #expect(held(store) == ["b@1800000000"])
            #expect(!FileManager.default.fileExists(atPath: temporary))
        }
    }

    /// The agent's watch on the folder (``ScheduleWatch``) tells which entries' files changed — written, replaced,
    /// removed, set aside — and never a temporary file of the store or a file it set aside, with inotify and with the
    /// look every few milliseconds alike. (A file may be told once more than it changed: a process forked elsewhere
    /// while it was being written closes its copy of the descriptor later.)
    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func theWatchTellsWhichSchedulesChanged(inotify: Bool) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-store-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try Self.store(root)
        try store.put(entry("kept"))
        let told = Mutex<[Set<String>?]>([])
        let (watch, unwatched) = ScheduleWatch.start(
            folder: store.folder, inotify: inotify, pollInterval: .milliseconds(5)
        ) { names in told.withLock { $0.append(names) } }
        defer { watch.stop() }
        #expect((unwatched == nil) == inotify, "\(String(describing: unwatched))")
        /// Does `change`, then waits until `name` is told after it.
        func expectTold(_ name: String, after change: () throws -> Void) async throws {
            let mark = told.withLock { $0.count }
            try change()
            let deadline = ContinuousClock.now + .seconds(20)
            while !told.withLock({ $0[mark...].contains { $0?.contains(name) == true } }) {
                guard ContinuousClock.now < deadline else {
                    Issue.record("\(name) was not told: \(told.withLock { $0 })")
                    return
                }
                try await Task.sleep(for: .milliseconds(5))
            }
        }

        try await expectTold("a.json") { try store.put(entry("a")) }
        try await expectTold("a.json") { try store.put(entry("a", due: 1_900_000_000)) }
        try await expectTold("a.json") {
            let claimed = try store.claim("a", due: 1_900_000_000)
            #expect(claimed)
        }
        try await expectTold("bad.json") {
            try Data("{}".utf8).write(to: URL(fileURLWithPath: "\(store.folder)/kept.json.999999.tmp"))
            try Data("{}".utf8).write(to: URL(fileURLWithPath: "\(store.folder)/bad.json"))
        }
        // Set aside (and the temporary file removed): told as gone.
        try await expectTold("bad.json") { #expect(held(store) == ["kept@1800000000"]) }
        let names = told.withLock { $0 }
        #expect(!names.contains(nil), "no batch of events was lost")
        #expect(
            names.reduce(into: Set<String>()) { $0.formUnion($1 ?? []) }.isSubset(of: [
                "a.json", "bad.json", "kept.json",
            ]))
    }

    private func creating(_ path: String) -> String {
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        chmod(path, 0o600)
        return path
    }
}
