// Which file a program named without a slash is: found on the PATH of the environment it runs with, never on this
// process's (issue 40: root's getent, the agent's --on-action commands).
import Foundation
import Glibc
import Testing

@testable import FreedesktopNotifications

@Suite struct ProgramPathTests {
    private func find(_ name: String, path: String?, in folder: String? = nil) -> Result<String, Errno> {
        ProgramPath.find(Array(name.utf8), path: path, workingDirectory: folder).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    @Test func theGivenPathIsSearchedInOrderAndRelativeEntriesFromTheWorkingFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-path-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (sub, mode) in [("first", 0o644), ("second", 0o755), ("third", 0o755)] {
            try FileManager.default.createDirectory(atPath: "\(folder)/\(sub)", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: "\(folder)/\(sub)/tool", contents: Data("#!/bin/sh\n".utf8)))
            #expect(chmod("\(folder)/\(sub)/tool", mode_t(mode)) == 0)
        }
        // Not executable in `first`: the search goes on, as execvp's does.
        #expect(try find("tool", path: "\(folder)/first:\(folder)/second").get() == "\(folder)/second/tool")
        #expect(try find("tool", path: "third:/usr/bin", in: folder).get() == "\(folder)/third/tool")
        // An empty entry is the working folder.
        #expect(try find("tool", path: ":/usr/bin", in: "\(folder)/third").get() == "\(folder)/third/./tool")
        #expect(find("tool", path: "\(folder)/first").failure?.code == EACCES)
        #expect(find("tool", path: "/nonexistent").failure?.code == ENOENT)
        // With a slash, the name is the file; without PATH, glibc's default.
        #expect(try find("./tool", path: "/nonexistent").get() == "./tool")
        #expect(try find("sh", path: nil).get() == "/bin/sh")
        // Never this process's PATH.
        #expect(find("sh", path: "/nonexistent").failure?.code == ENOENT)
    }

    @Test func spawnRunsTheProgramOnTheEnvironmentsPath() throws {
        let started = Spawn.start(
            ["sh", "-c", "exit 7"], environment: ["PATH": "/nonexistent"], output: nil, newSession: true)
        #expect(started.failure?.code == ENOENT)
        let pid = try Spawn.start(["sh", "-c", "exit 7"], environment: ["PATH": "/bin"], output: nil, newSession: true)
            .get()
        #expect(Spawn.wait(pid) == .ended(.exited(7)))
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
