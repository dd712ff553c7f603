import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// The `--id` store (`$XDG_RUNTIME_DIR/toastkit/ids.json`): bounded, private, and never the reason a shown toast
/// reports a failure.
@Suite(.timeLimit(.minutes(2))) struct IDStoreTests {

    private func storePath(_ environment: BusOnlyEnvironment) -> String {
        "\(environment.directory)/runtime/toastkit/ids.json"
    }

    /// Writes an id store with `count` entries `old-N` → server id N on `server`, used at N seconds after 1970.
    private func writeStore(at path: String, count: Int, server: String) throws {
        var text = #"{"ids":{"#
        for index in 0..<count {
            if index > 0 { text += "," }
            text += #""old-\#(index)":{"server":"\#(server)","server_id":\#(index + 1),"used":\#(index)}"#
        }
        text += "},\"version\":1}"
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    private func entries(_ path: String) throws -> [String: [String: Any]] {
        let data = try #require(FileManager.default.contents(atPath: path))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(json["ids"] as? [String: [String: Any]])
    }

    @Test func theStoreIsBoundedAndKeepsTheMostRecentlyUsed() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            let path = storePath(environment)
            let owner = server.connection.uniqueName
            // A store grown by years of scripts: 100,000 entries.
            try writeStore(at: path, count: 100_000, server: owner)
            let first = try await toastkit(["send", "--id", "new", "Nuevo"], environment: env)
            #expect(first.status == 0, "\(first.error)")
            let trimmed = try entries(path)
            #expect(trimmed.count == 256, "at most 256 ids are remembered")
            #expect(trimmed["new"] != nil)
            #expect(trimmed["old-99999"] != nil, "the most recently used stay")
            #expect(trimmed["old-0"] == nil, "the least recently used go")

            // Sending with a remembered id replaces that toast and keeps the entry.
            let again = try await toastkit(["send", "--id", "old-99999", "Otra vez"], environment: env)
            #expect(again.status == 0, "\(again.error)")
            #expect(server.notifications.last?.replacesID == 100_000)
            #expect(try entries(path).count == 256)
        }
    }

    @Test func idsOfAServerThatIsGoneAreDropped() async throws {
        try await withFakeServer { environment, server in
            let path = storePath(environment)
            try writeStore(at: path, count: 50, server: ":1.9999")
            let run = try await toastkit(["send", "--id", "now", "Ahora"], environment: environment.environment)
            #expect(run.status == 0, "\(run.error)")
            #expect(server.notifications.last?.replacesID == 0)
            #expect(Array(try entries(path).keys) == ["now"], "ids from another server mean nothing now")
        }
    }

    @Test func aBrokenStoreAfterTheToastWasShownIsAWarning() async throws {
        try await withFakeServer { environment, server in
            let path = storePath(environment)
            // A folder where the file should be: it can be neither read nor replaced (even as root).
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let run = try await toastkit(
                ["send", "-p", "--id", "sync", "Sincronizando"], environment: environment.environment)
            #expect(run.status == 0, "the toast was shown: \(run.error)")
            #expect(run.output == "1\n")
            #expect(
                run.error
                    == "toastkit: warning: cannot remember --id sync: cannot read \(path): it is not a regular file; "
                    + "the next send --id sync shows a new toast\n")
            #expect(server.notifications.count == 1)
            let close = try await toastkit(["close", "--id", "sync"], environment: environment.environment)
            #expect(close.status == 74)
            #expect(close.error == "toastkit: close --id sync: cannot read \(path): it is not a regular file\n")
        }
    }

    @Test func theStoreIsPrivateAndWiderModesAreFixed() async throws {
        try await withFakeServer { environment, _ in
            let path = storePath(environment)
            let folder = (path as NSString).deletingLastPathComponent
            try writeStore(at: path, count: 1, server: ":1.1")
            chmod(folder, 0o755)
            chmod(path, 0o644)
            let run = try await toastkit(["send", "--id", "x", "T"], environment: environment.environment)
            #expect(run.status == 0, "\(run.error)")
            for (file, mode) in [(folder, 0o700), (path, 0o600), ("\(folder)/ids.lock", 0o600)] {
                var info = stat()
                #expect(stat(file, &info) == 0, "\(file)")
                #expect(Int(info.st_mode & 0o777) == mode, "\(file) is \(String(info.st_mode & 0o777, radix: 8))")
            }
        }
    }
}
