import Foundation
import Glibc
import Testing

@testable import ToastKitAgent

/// What a scheduled toast keeps of its sender's environment (issue 40): its file in the user's state folder, which
/// outlives the session and a reboot, has only the kept variables (``KeptEnvironment``); the rest is in a runtime file, merged back
/// while it is there, removed with its schedule, and its loss never costs the toast. Real files in folders of the
/// test's own.
@Suite struct KeptEnvironmentTests {
    /// A user's state and runtime folders, and the store of the state folder.
    private struct Folders {
        let root: String
        var state: String { "\(root)/state" }
        var runtime: String { "\(root)/runtime" }
        var environment: [String: String] { ["XDG_STATE_HOME": state, "XDG_RUNTIME_DIR": runtime] }
        /// The file of the schedule of `id`.
        func schedulePath(_ id: String) -> String { "\(state)/toastkit/scheduled/\(id).json" }
        /// The single file of earlier versions.
        var oldSchedulesPath: String { "\(state)/toastkit/scheduled.json" }

        /// The runtime files of the senders' variables.
        var runtimeFiles: [String] {
            let folder = "\(runtime)/toastkit"
            return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                .filter { $0.hasPrefix("scheduled-env-") }.sorted().map { "\(folder)/\($0)" }
        }

        /// Every file under the state folder, with its text.
        var stateFiles: [(path: String, text: String)] {
            let paths = FileManager.default.enumerator(atPath: state)?.compactMap { $0 as? String } ?? []
            return paths.map { "\(state)/\($0)" }.filter { !PrivateFilesProbe.isFolder($0) }.map {
                ($0, (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "")
            }
        }
    }

    private func withFolders(_ body: (Folders, ScheduleStore) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-kept-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folders = Folders(root: root)
        try FileManager.default.createDirectory(atPath: folders.runtime, withIntermediateDirectories: true)
        try body(folders, try ScheduleStore.open(environment: folders.environment))
    }

    /// A sender's environment with a secret in it.
    private let sender = [
        "HOME": "/home/ana", "PATH": "/usr/local/bin:/usr/bin", "DISPLAY": ":1", "LC_TIME": "es_ES.UTF-8",
        "API_TOKEN": "s3cr3t", "SCRIPT_NOTE": "nota",
    ]
    private let kept = [
        "HOME": "/home/ana", "PATH": "/usr/local/bin:/usr/bin", "DISPLAY": ":1", "LC_TIME": "es_ES.UTF-8",
    ]

    private func entry(_ id: String, environment: [String: String]?, due: Double = 1_800_000_000)
        -> ScheduleStore.Entry
    {
        var options = SendOptions(title: id)
        options.actions = [ActionOption(id: "x", label: "X", confirmation: nil, reply: nil)]
        var request = AgentRequest(options: options, onAction: ["x": ["true"]])
        request.environment = environment
        request.workingDirectory = "/home/ana"
        return ScheduleStore.Entry(id: id, due: due, request: request)
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    @Test func theStateFolderKeepsOnlyTheKeptVariablesAndTheRuntimeFileTheRest() throws {
        try withFolders { folders, store in
            try store.put(entry("cita", environment: sender))
            let stateFiles = folders.stateFiles
            #expect(stateFiles.map(\.path).contains(folders.schedulePath("cita")))
            for (path, text) in stateFiles {
                #expect(!text.contains("s3cr3t") && !text.contains("SCRIPT_NOTE"), "\(path): \(text)")
                #expect(mode(path) == 0o600, "\(path): \(String(mode(path), radix: 8))")
            }
            let schedules = try String(contentsOfFile: folders.schedulePath("cita"), encoding: .utf8)
            for (name, value) in kept { #expect(schedules.contains("\"\(name)\":\"\(value)\""), "\(schedules)") }

            let runtimeFiles = folders.runtimeFiles
            #expect(runtimeFiles.count == 1, "\(runtimeFiles)")
            let runtimeFile = try #require(runtimeFiles.first)
            #expect(mode(runtimeFile) == 0o600)
            let rest = try String(contentsOfFile: runtimeFile, encoding: .utf8)
            #expect(rest.contains("s3cr3t") && !rest.contains("/usr/local/bin"), "\(rest)")

            // Read back in the same session: the sender's whole environment, for the command of a click.
            let read = try #require(store.load().first)
            #expect(read.request.environment == sender && !read.setAsideLost)
            let environment = ActionEnvironment.environment(
                of: read.request, action: "x", toastID: "cita", activationToken: nil, fallback: [:])
            #expect(environment["API_TOKEN"] == "s3cr3t")

            // Claimed (shown): its runtime file goes with its schedule.
            #expect(try store.claim("cita", due: read.due))
            #expect(folders.runtimeFiles.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: folders.schedulePath("cita")))
        }
    }

    @Test func withoutTheRuntimeFileTheToastComesWithTheKeptVariables() throws {
        try withFolders { folders, store in
            try store.put(entry("cita", environment: sender))
            // A reboot: the runtime folder is empty again.
            try FileManager.default.removeItem(atPath: "\(folders.runtime)/toastkit")
            let read = try #require(store.load().first)
            #expect(read.request.environment == kept, "the kept variables only")
            #expect(read.setAsideLost && read.request.onAction == ["x": ["true"]])
            // Another schedule written meanwhile leaves it as it is: still known to have lost its rest.
            try store.put(entry("otra", environment: ["PATH": "/usr/bin"]))
            let again = try #require(store.load().first { $0.id == "cita" })
            #expect(again.setAsideLost && again.request.environment == kept)
            #expect(try store.remove("cita") && store.remove("otra"))
            #expect(folders.runtimeFiles.isEmpty)
        }
    }

    @Test func aBadRuntimeFileCostsNoToast() throws {
        try withFolders { folders, store in
            try store.put(entry("a", environment: sender))
            try store.put(entry("b", environment: sender))
            let files = folders.runtimeFiles
            #expect(files.count == 2)
            // One torn, the other a link to somewhere else.
            try Data("{\"format\":".utf8).write(to: URL(fileURLWithPath: files[0]))
            try FileManager.default.removeItem(atPath: files[1])
            #expect(symlink("/etc/hostname", files[1]) == 0)
            let read = store.load()
            #expect(read.map(\.id).sorted() == ["a", "b"], "both toasts stay")
            #expect(read.allSatisfy { $0.setAsideLost && $0.request.environment == kept })
            #expect(folders.runtimeFiles.isEmpty, "what could not be trusted is removed")
        }
    }

    @Test func aScheduleReplacedOrLeftAsItWasKeepsOneRuntimeFile() throws {
        try withFolders { folders, store in
            try store.put(entry("a", environment: sender))
            let first = folders.runtimeFiles
            // Another toast's schedule does not write a's again.
            try store.put(entry("b", environment: ["PATH": "/usr/bin"]))
            #expect(folders.runtimeFiles == first, "b has nothing beyond the kept variables")
            // a scheduled anew: a new file, the old one gone.
            var changed = sender
            changed["API_TOKEN"] = "n3w"
            try store.put(entry("a", environment: changed, due: 1_900_000_000))
            let second = folders.runtimeFiles
            #expect(second.count == 1 && second != first)
            #expect(store.load().first { $0.id == "a" }?.request.environment == changed)
            // A toast with no environment (a D-Bus caller that sent none) stays without one.
            try store.put(entry("c", environment: nil))
            #expect(store.load().first { $0.id == "c" }?.request.environment == nil)
        }
    }

    @Test func aFileOfAnEarlierVersionLoadsAndIsWrittenAnewWithTheKeptVariables() throws {
        try withFolders { folders, store in
            try FileManager.default.createDirectory(
                atPath: "\(folders.state)/toastkit", withIntermediateDirectories: true)
            let environment = try String(
                decoding: JSONSerialization.data(withJSONObject: sender, options: [.sortedKeys]), as: UTF8.self)
            let old = """
                {"format":"toastkit-scheduled","version":1,"toasts":[{"id":"vieja","due":1800000000,"request":\
                {"title":"Vieja","actions":[{"id":"x","label":"X"}],"on_action":{"x":["true"]},\
                "environment":\(environment)}}]}
                """
            #expect(FileManager.default.createFile(atPath: folders.oldSchedulesPath, contents: Data(old.utf8)))
            #expect(chmod(folders.oldSchedulesPath, 0o600) == 0)
            let read = try #require(store.load().first)
            #expect(read.id == "vieja" && read.request.environment == sender && !read.setAsideLost)
            #expect(!FileManager.default.fileExists(atPath: folders.oldSchedulesPath), "taken into the folder")
            let schedules = try String(contentsOfFile: folders.schedulePath("vieja"), encoding: .utf8)
            #expect(!schedules.contains("s3cr3t") && schedules.contains("environment_set_aside"), "\(schedules)")
            #expect(folders.runtimeFiles.count == 1)
            #expect(store.load().first?.request.environment == sender)
        }
    }

    @Test func theKeptListIsWhatReachesTheDesktopAndFindsAProgram() {
        for name in ActionEnvironment.sessionVariables { #expect(KeptEnvironment.isKept(name), "\(name)") }
        for name in ["LC_ALL", "LC_MESSAGES", "LANGUAGE", "XDG_CURRENT_DESKTOP", "XAUTHORITY", "USER"] {
            #expect(KeptEnvironment.isKept(name), "\(name)")
        }
        for name in ["API_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "GITHUB_TOKEN", "TERM", "PWD", "OLDPWD"] {
            #expect(!KeptEnvironment.isKept(name), "\(name)")
        }
        let token = KeptEnvironment.newToken()
        #expect(KeptEnvironment.isToken(token) && token != KeptEnvironment.newToken())
        #expect(!KeptEnvironment.isToken("../../etc/passwd") && !KeptEnvironment.isToken(""))
    }
}

/// Whether a path is a folder, for the tests' walk of a folder.
private enum PrivateFilesProbe {
    static func isFolder(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
    }
}
