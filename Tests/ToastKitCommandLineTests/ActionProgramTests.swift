import Foundation
import Glibc
import TestSupport
import Testing

/// Issue 40: an `--on-action` command runs exactly what its sender would have run — its program found on the
/// sender's PATH, never on the PATH of whichever script started the agent.
@Suite(.timeLimit(.minutes(2))) struct ActionProgramTests {
    @Test func theProgramIsFoundOnTheSendersPathNotTheAgents() async throws {
        try await withFakeServer { environment, server in
            let directory = environment.directory
            for owner in ["a", "b"] {
                let folder = "\(directory)/bin-\(owner)"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try "#!/bin/sh\necho \(owner) >> \"$OUT\"\n".write(
                    toFile: "\(folder)/hello", atomically: true, encoding: .utf8)
                #expect(chmod("\(folder)/hello", 0o755) == 0)
            }
            let out = "\(directory)/out.txt"
            // Script A starts the agent: its PATH finds A's `hello`.
            var scriptA = environment.agentEnvironment
            scriptA["PATH"] = "\(directory)/bin-a:/usr/bin:/bin"
            scriptA["OUT"] = out
            let first = try await toastkit(
                ["send", "--id", "a", "-d", "indefinite", "-A", "x=X", "--on-action", "x=hello", "De A"],
                environment: scriptA)
            #expect(first.status == 0, "\(first.error)")
            let shownA = try await server.nextNotification()
            // Script B's click must run B's `hello`.
            var scriptB = scriptA
            scriptB["PATH"] = "\(directory)/bin-b:/usr/bin:/bin"
            let second = try await toastkit(
                ["send", "--id", "b", "-d", "indefinite", "-A", "go=Ir", "--on-action", "go=hello", "De B"],
                environment: scriptB)
            #expect(second.status == 0, "\(second.error)")
            // B's toast waits behind A's (one application's toasts take turns): A's is dismissed.
            try server.emitClosed(id: shownA.id, reason: 2)
            var shown = try await server.nextNotification()
            while shown.summary != "De B" { shown = try await server.nextNotification() }
            try server.emitActionInvoked(id: shown.id, key: "go")
            let text = try await Deadline.run(within: .seconds(10), "the action's command") { () -> String? in
                while true {
                    if let text = try? String(contentsOfFile: out, encoding: .utf8), text.hasSuffix("\n") {
                        return text
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(text == "b\n", "the program on the sender's PATH")
        }
    }
}
