// The single `scheduled.json` of earlier versions (version 1) taken into the folder of one file per schedule
// (``ScheduleStore``, issue 39): once, by the first load or change, then removed; its schedules as they were, with
// their runtime files; one it cannot trust kept aside in `scheduled.json.refused`, costing the others nothing. Real
// files in folders of the test's own.
import Foundation
import Glibc
import Testing

@testable import ToastKitAgent

@Suite struct ScheduleMigrationTests {
    /// A user's state and runtime folders of the test's own.
    private struct Folders {
        let root: String
        var environment: [String: String] {
            ["XDG_STATE_HOME": "\(root)/state", "XDG_RUNTIME_DIR": "\(root)/runtime"]
        }
        var state: String { "\(root)/state/toastkit" }
        var old: String { "\(state)/scheduled.json" }
        var runtime: String { "\(root)/runtime/toastkit" }

        /// Writes `toasts` (their JSON) as the file of an earlier version.
        func writeOld(_ toasts: [String]) throws {
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            let text = #"{"format":"toastkit-scheduled","version":1,"toasts":["# + toasts.joined(separator: ",") + "]}"
            #expect(FileManager.default.createFile(atPath: old, contents: Data(text.utf8)))
            #expect(chmod(old, 0o600) == 0)
        }

        func names(_ folder: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        }
    }

    private func withFolders(_ body: (Folders) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-migration-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        // The runtime folder is there (else the store's runtime files go to the fallback, /tmp/toastkit-<uid>).
        try FileManager.default.createDirectory(atPath: "\(root)/runtime", withIntermediateDirectories: true)
        try body(Folders(root: root))
    }

    private func toast(_ id: String, due: Int = 1_800_000_000, more: String = "") -> String {
        #"{"id":"\#(id)","due":\#(due),"request":{"title":"T \#(id)"}\#(more)}"#
    }

    @Test func theFileOfAnEarlierVersionIsTakenInOnceAndRemoved() throws {
        try withFolders { folders in
            // A runtime file an earlier version wrote for one of them.
            let token = KeptEnvironment.newToken()
            let store = try ScheduleStore.open(environment: folders.environment)
            try store.environments.write(["API_TOKEN": "s3cr3t"], id: "b", token: token)
            try folders.writeOld([
                toast("a"), toast("b", due: 1_700_000_000, more: #","environment_set_aside":"\#(token)""#),
                toast("x/y"),
            ])
            let loaded = store.load()
            #expect(loaded.map(\.id) == ["b", "a", "x/y"], "soonest first")
            #expect(loaded.first?.request.environment == ["API_TOKEN": "s3cr3t"], "its runtime file stays its own")
            #expect(!FileManager.default.fileExists(atPath: folders.old), "removed once taken in")
            #expect(folders.names(store.folder) == ["a.json", "b.json", "x%2Fy.json"])
            #expect(folders.names(folders.runtime) == ["scheduled-env-\(token).json"])
            // From then on, the folder only.
            #expect(try store.claim("b", due: 1_700_000_000))
            #expect(store.load().map(\.id) == ["a", "x/y"])
            #expect(folders.names(folders.runtime).isEmpty)
        }
    }

    /// No agent ran since the update: `close --id` (a change, not a load) takes the file in first, and finds the
    /// schedule; a schedule of an id the folder has already is the folder's (the newer word).
    @Test func aChangeTakesTheFileInFirstAndTheFoldersScheduleWins() throws {
        try withFolders { folders in
            let store = try ScheduleStore.open(environment: folders.environment)
            try store.put(
                ScheduleStore.Entry(id: "a", due: 1_900_000_000, request: AgentRequest(options: .init(title: "A"))))
            try folders.writeOld([toast("a"), toast("b")])
            #expect(try store.remove("b"))
            #expect(!FileManager.default.fileExists(atPath: folders.old))
            #expect(store.load().map { "\($0.id)@\(Int($0.due))" } == ["a@1900000000"])
        }
    }

    /// One schedule of the file it cannot trust (a time out of range, a request that is not valid) is left out and
    /// kept, with the file, as `scheduled.json.refused`; the others are taken in. A file that is not one of schedules
    /// at all is set aside whole, and the folder's schedules are untouched.
    @Test func whatTheFileCannotTrustIsKeptAsideAndCostsTheOthersNothing() throws {
        try withFolders { folders in
            let store = try ScheduleStore.open(environment: folders.environment)
            try folders.writeOld([
                toast("a"), toast("early", due: 1000), #"{"id":"bad","due":1800000000,"request":{"title":7}}"#,
                toast("b"),
            ])
            #expect(store.load().map(\.id) == ["a", "b"])
            #expect(!FileManager.default.fileExists(atPath: folders.old))
            let refused = try String(contentsOfFile: folders.old + ".refused", encoding: .utf8)
            #expect(refused.contains("\"early\"") && refused.contains("\"bad\""))

            try Data("{\"format\":\"toastkit-sch".utf8).write(to: URL(fileURLWithPath: folders.old))
            #expect(store.load().map(\.id) == ["a", "b"])
            #expect(!FileManager.default.fileExists(atPath: folders.old))
            #expect(try String(contentsOfFile: folders.old + ".refused", encoding: .utf8).hasPrefix("{\"format\""))
        }
    }
}
