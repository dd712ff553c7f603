import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// The store of toasts kept with Later (`$XDG_STATE_HOME/toastkit/later/toastkit.json`): nothing is lost when processes
/// defer at the same moment or one is killed while writing, the file is private, and a toast that could not be
/// kept is never reported as deferred.
@Suite(.timeLimit(.minutes(3))) struct LaterStoreTests {

    private func storePath(_ environment: BusOnlyEnvironment) -> String {
        "\(environment.directory)/state/toastkit/later/toastkit.json"
    }

    /// Writes a store holding `count` kept toasts (`old-0`…), each with a message of `messageBytes` bytes.
    private func writeStore(at path: String, count: Int, messageBytes: Int = 40) throws {
        let message = String(repeating: "m", count: messageBytes)
        let toasts = (0..<count).map { index in
            #"{"actions":[],"deferredAt":"2026-12-01T08:00:00Z","duration":"automatic","id":"old-\#(index)","#
                + #""message":"\#(message)","status":"normal","title":"Guardado \#(index)"}"#
        }
        let json = #"{"toasts":["# + toasts.joined(separator: ",") + #"],"version":1}"#
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try json.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// The ids in the store, as `toastkit later --json` lists them.
    private func keptIDs(_ environment: [String: String]) async throws -> [String] {
        let list = try await toastkit(["later", "--json"], environment: environment)
        #expect(list.status == 0, "\(list.error)")
        return list.lines.filter { !$0.isEmpty }.compactMap { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["id"] as? String
        }
    }

    /// Starts `send -A later` for `id`, waits until the server has it, and returns the process and server id.
    private func startDeferrable(
        _ id: String, environment: [String: String], extra: [String] = []
    ) async throws -> (ToolProcess, UInt32) {
        let process = try ToolProcess.start(
            (["send", "-p", "-d", "indefinite", "-A", "later", "--id", id] + extra + ["Tarea \(id)"]).map {
                Array($0.utf8)
            }, environment: environment)
        // `-p` prints the server id; with `--json` the `presented` line carries it.
        let line = await process.nextLine()
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        let serverID = try #require(
            UInt32(line) ?? (object?["server_id"] as? Int).map(UInt32.init), "send printed \(line.debugDescription)")
        return (process, serverID)
    }

    // MARK: - Item 1

    @Test func showingSeveralKeptToastsShowsThemAll() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            try writeStore(at: storePath(environment), count: 3)
            let show = try await toastkit(["later", "--show"], environment: env)
            #expect(show.status == 0, "\(show.error)")
            #expect(show.error.isEmpty)
            let lines = show.lines.filter { !$0.isEmpty }
            #expect(lines.count == 3)
            #expect(lines.map { $0.split(separator: "\t").first.map(String.init) } == ["old-0", "old-1", "old-2"])
            // They are sent together, so the server may get them in any order.
            #expect(server.notifications.map(\.summary).sorted() == ["Guardado 0", "Guardado 1", "Guardado 2"])
            #expect(try await keptIDs(env).isEmpty, "every toast left the list")
            #expect(try await toastkit(["later", "--show"], environment: env).output.isEmpty, "nothing comes twice")
        }
    }

    // MARK: - Item 2

    @Test func manyProcessesDeferringAtOnceKeepEveryRecord() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            // A store of some size, so each read-change-write takes long enough to overlap with the others.
            try writeStore(at: storePath(environment), count: 300, messageBytes: 2_000)
            let count = 12
            var waiting: [(ToolProcess, UInt32)] = []
            for index in 0..<count { waiting.append(try await startDeferrable("job-\(index)", environment: env)) }
            for (_, serverID) in waiting { try server.emitActionInvoked(id: serverID, key: "later") }
            for (process, _) in waiting {
                let result = await process.finish()
                #expect(result.status == 5, "\(result.error)")
            }
            let kept = Set(try await keptIDs(env))
            #expect(kept.count == 300 + count)
            #expect(
                kept.isSuperset(of: (0..<count).map { "job-\($0)" }), "missing: \(kept.filter { $0.hasPrefix("job") })")
        }
    }

    // MARK: - Item 3

    @Test func theStoreIsPrivateAndWiderModesAreFixed() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            let path = storePath(environment)
            let folder = (path as NSString).deletingLastPathComponent
            try writeStore(at: path, count: 1)
            chmod(folder, 0o755)
            chmod(path, 0o644)
            let (process, serverID) = try await startDeferrable("private", environment: env)
            try server.emitActionInvoked(id: serverID, key: "later")
            #expect(await process.finish().status == 5)
            for (file, mode) in [(folder, 0o700), (path, 0o600), (path + ".lock", 0o600)] {
                var info = stat()
                #expect(stat(file, &info) == 0, "\(file)")
                #expect(Int(info.st_mode & 0o777) == mode, "\(file) is \(String(info.st_mode & 0o777, radix: 8))")
            }

            // A state folder that does not exist yet is created private, all the way down.
            var fresh = env
            fresh["XDG_STATE_HOME"] = "\(environment.directory)/new/state"
            let (second, secondID) = try await startDeferrable("fresh", environment: fresh)
            try server.emitActionInvoked(id: secondID, key: "later")
            #expect(await second.finish().status == 5)
            for folder in ["new", "new/state", "new/state/toastkit", "new/state/toastkit/later"] {
                var info = stat()
                #expect(stat("\(environment.directory)/\(folder)", &info) == 0)
                #expect(info.st_mode & 0o777 == 0o700, "\(folder) is \(String(info.st_mode & 0o777, radix: 8))")
            }
        }
    }

    // MARK: - Item 4

    @Test func aStoreThatCannotBeWrittenIsNeverReportedAsDeferred() async throws {
        try await withFakeServer { environment, server in
            var env = environment.environment
            // A file where the state folder should be: nothing can be created under it (even as root).
            let blocker = "\(environment.directory)/state-is-a-file"
            try "".write(toFile: blocker, atomically: false, encoding: .utf8)
            env["XDG_STATE_HOME"] = blocker
            let (process, serverID) = try await startDeferrable("lost", environment: env)
            try server.emitActionInvoked(id: serverID, key: "later")
            let result = await process.finish()
            #expect(result.status == 74, "\(result.error)")
            #expect(
                result.error
                    == "toastkit: the toast was not kept for later: later store \(blocker)/toastkit/later/toastkit.json is "
                    + "unwritable: cannot create \(blocker)/toastkit: Not a directory\n")
            #expect(!result.error.contains("Error("), "no raw error dump")
            #expect(result.output == "later\n", "the chosen action is still printed")

            let (json, jsonID) = try await startDeferrable("lost-json", environment: env, extra: ["--json"])
            try server.emitActionInvoked(id: jsonID, key: "later")
            let jsonResult = await json.finish()
            #expect(jsonResult.status == 74)
            let last = try #require(jsonResult.lines.last { !$0.isEmpty })
            #expect(
                last.hasPrefix(
                    #"{"event":"failed","id":"lost-json","server_id":\#(jsonID),"reason":"the toast was not kept for later: "#
                ))
        }
    }

    // MARK: - Crash safety

    /// Watches a folder for new files (inotify), from the moment it is made.
    private final class FolderWatch: Sendable {
        private let descriptor: Int32

        init(_ folder: String) throws {
            descriptor = inotify_init1(Int32(IN_CLOEXEC))
            guard descriptor >= 0 else {
                throw TestEnvironmentError("inotify_init1: \(String(cString: strerror(errno)))")
            }
            guard inotify_add_watch(descriptor, folder, UInt32(IN_CREATE)) >= 0 else {
                close(descriptor)
                throw TestEnvironmentError("inotify_add_watch: \(String(cString: strerror(errno)))")
            }
        }

        deinit { close(descriptor) }

        /// Waits (on its own thread, at most `limit`) until a file whose name contains `fragment` is created;
        /// true when one was.
        func waitForFile(containing fragment: String, limit: Duration) async throws -> Bool {
            let milliseconds = Int32(limit.components.seconds * 1000)
            let descriptor = self.descriptor
            return try await onOwnThread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                var pollFD = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                while poll(&pollFD, 1, milliseconds) > 0 {
                    let count = read(descriptor, &buffer, buffer.count)
                    guard count > 0 else { return false }
                    var offset = 0
                    while offset + MemoryLayout<inotify_event>.size <= count {
                        let length = buffer.withUnsafeBytes {
                            $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self).len
                        }
                        let nameStart = offset + MemoryLayout<inotify_event>.size
                        let name = String(
                            decoding: buffer[nameStart..<nameStart + Int(length)].prefix { $0 != 0 }, as: UTF8.self)
                        if name.contains(fragment) { return true }
                        offset = nameStart + Int(length)
                    }
                }
                return false
            }
        }
    }

    @Test func aWriterKilledMidWriteLeavesTheOldOrTheNewStore() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            let path = storePath(environment)
            let folder = (path as NSString).deletingLastPathComponent
            // A big store (about 6 MB), so writing it takes a while.
            try writeStore(at: path, count: 100, messageBytes: 60_000)
            var kept = Set((0..<100).map { "old-\($0)" })
            var killedBeforeRename = 0
            for attempt in 0..<4 {
                let id = "killed-\(attempt)"
                // Half the writers are held between their write and their rename (the fail point), so at least two
                // are killed at that moment whatever the machine's load; the others are killed wherever they are.
                var writerEnvironment = env
                if attempt % 2 == 0 { writerEnvironment["TOASTKIT_FAILPOINT_HOLD_BEFORE_RENAME"] = "toastkit.json" }
                let (process, serverID) = try await startDeferrable(id, environment: writerEnvironment)
                // Watching before the action is sent, so the writer's temporary file cannot be missed.
                let watch = try FolderWatch(folder)
                try server.emitActionInvoked(id: serverID, key: "later")
                let sawTemporary = try await watch.waitForFile(containing: ".tmp", limit: .seconds(60))
                process.signal(SIGKILL)
                let status = await process.finish().status
                #expect(sawTemporary, "the writer made its temporary file")
                #expect(status == 137 || status == 5, "killed (or done just before): \(status)")
                // The store reads back whole: the old list, or the old list and this toast.
                let now = Set(try await keptIDs(env))
                #expect(now == kept || now == kept.union([id]), "attempt \(attempt): \(now.count) records")
                if !now.contains(id) { killedBeforeRename += 1 }
                kept = now
            }
            #expect(killedBeforeRename >= 2, "the held writers were killed before their rename")
            // A later write removes what killed writers left behind.
            let (last, lastID) = try await startDeferrable("after", environment: env)
            try server.emitActionInvoked(id: lastID, key: "later")
            #expect(await last.finish().status == 5)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tmp") }
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
    }

    // MARK: - Each application its own (issue 23)

    @Test func theSharedFileOfEarlierVersionsMovesIntoTheCommandLinesStore() async throws {
        try await withFakeServer { environment, _ in
            let env = environment.environment
            let shared = "\(environment.directory)/state/toastkit/later.json"
            try writeStore(at: shared, count: 2)
            #expect(try await keptIDs(env) == ["old-0", "old-1"])
            let emptied = try String(contentsOfFile: shared, encoding: .utf8)
            #expect(!emptied.contains("old-0"), "the shared file is emptied (kept, never unlinked): \(emptied)")
            #expect(FileManager.default.fileExists(atPath: storePath(environment)))
            // Kept again by an old version after the move: taken in too, without duplicates.
            try writeStore(at: shared, count: 3)
            #expect(try await keptIDs(env) == ["old-0", "old-1", "old-2"])
        }
    }

    @Test func laterAppListsAnApplicationsOwnStoreAndNotTheCommandLines() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            try writeStore(at: storePath(environment), count: 1)
            let fotos = "\(environment.directory)/state/toastkit/later/org.example.Fotos.json"
            try writeStore(at: fotos, count: 2, messageBytes: 5)
            #expect(try await keptIDs(env) == ["old-0"])
            let list = try await toastkit(["later", "--app", "org.example.Fotos"], environment: env)
            #expect(list.status == 0, "\(list.error)")
            #expect(
                list.lines.filter { !$0.isEmpty }.map { $0.split(separator: "\t").first.map(String.init) } == [
                    "old-0", "old-1",
                ])
            let show = try await toastkit(["later", "--show", "--app", "org.example.Fotos"], environment: env)
            #expect(show.status == 0, "\(show.error)")
            #expect(Set(server.notifications.map(\.appName)) == ["org.example.Fotos"])
            #expect(try await keptIDs(env) == ["old-0"], "the command line's own store is untouched")
            let empty = try await toastkit(["later", "--app", ""], environment: env)
            #expect(empty.status == 64)
            #expect(empty.error == "toastkit: later: --app needs an application name\n")
        }
    }
}
