import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// Bad input never crashes or hangs: each case ends with its documented exit code and one clear stderr line.
/// Where no drawing server is needed, the binary talks to a fake server (or none) on a private bus.
@Suite(.timeLimit(.minutes(2))) struct BadInputTests {

    @Test func invalidUTF8InAnArgument() async throws {
        try await withFakeServer { environment, server in
            let title: [UInt8] = [0x61, 0x62, 0x63, 0xFF]
            let run = try await toastkit(raw: [Array("send".utf8), title], environment: environment.environment)
            #expect(run.status == 65)
            #expect(run.error == "toastkit: TITLE is not valid UTF-8 (byte 0xff at offset 3)\n")
            let id = try await toastkit(
                raw: [Array("send".utf8), Array("--id".utf8), [0xC0, 0x80], Array("T".utf8)],
                environment: environment.environment)
            #expect(id.status == 65)
            #expect(id.error == "toastkit: the value of --id is not valid UTF-8 (byte 0xc0 at offset 0)\n")
            #expect(server.notifications.isEmpty)
        }
    }

    @Test func badStandardInput() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            let invalid = try await toastkit(["send", "T", "-"], environment: env, stdin: [0x6F, 0x6B, 0xFE, 0x0A])
            #expect(invalid.status == 65)
            #expect(
                invalid.error == "toastkit: MESSAGE from standard input is not valid UTF-8 (byte 0xfe at offset 2)\n")
            let nul = try await toastkit(["send", "T", "-"], environment: env, stdin: [0x61, 0x00, 0x62])
            #expect(nul.status == 65)
            #expect(nul.error == "toastkit: MESSAGE from standard input contains a NUL byte at offset 1\n")
            #expect(server.notifications.isEmpty)
        }
    }

    @Test func stdinPipeAndAnEightMebibyteMessage() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            let piped = try await toastkit(
                ["send", "-s", "error", "Build failed", "-"], environment: env,
                stdin: Array("error: x.swift:3\nerror: y.swift:9\n".utf8))
            #expect(piped.status == 0, "\(piped.error)")
            #expect(piped.error.isEmpty)
            let first = try #require(server.notifications.last)
            #expect(first.body == "error: x.swift:3\nerror: y.swift:9")
            #expect(first.summary == "Build failed")

            // (What it costs is a benchmark's to say: a bound on the time here failed at random in full runs.)
            let huge = [UInt8](repeating: UInt8(ascii: "a"), count: 8 * 1024 * 1024)
            let big = try await toastkit(["send", "Log", "-"], environment: env, stdin: huge)
            #expect(big.status == 0)
            #expect(big.error == "toastkit: warning: message from stdin cut from 8388608 to 65536 bytes\n")
            let body = try #require(server.notifications.last).body
            #expect(body.utf8.count == 65_536)
            #expect(body.hasSuffix("aa…"))
        }
    }

    /// The whole of standard input must be UTF-8, as it must be free of NUL bytes — also what lies beyond the
    /// 64 KiB cut, which is read and checked, then dropped.
    @Test func invalidUTF8BeyondTheCutIsRefused() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            var late = [UInt8](repeating: UInt8(ascii: "a"), count: 70_000)
            late[69_000] = 0xFF
            let invalid = try await toastkit(["send", "T", "-"], environment: env, stdin: late)
            #expect(invalid.status == 65)
            #expect(
                invalid.error
                    == "toastkit: MESSAGE from standard input is not valid UTF-8 (byte 0xff at offset 69000)\n")
            let truncated = [UInt8](repeating: UInt8(ascii: "a"), count: 66_000) + [0xE2, 0x82]
            let unfinished = try await toastkit(["send", "T", "-"], environment: env, stdin: truncated)
            #expect(unfinished.status == 65)
            #expect(
                unfinished.error
                    == "toastkit: MESSAGE from standard input is not valid UTF-8 (byte 0xe2 at offset 66000)\n")
            #expect(server.notifications.count == 0)
        }
    }

    /// The cut falls between characters as a person sees them: a flag (two regional indicators) is kept whole or
    /// dropped whole, never split into a lone letter.
    @Test func theStandardInputCutKeepsWholeCharacters() async throws {
        try await withFakeServer { environment, server in
            let text = String(repeating: "a", count: 65_529) + String(repeating: "🇪🇸", count: 10)
            let run = try await toastkit(
                ["send", "T", "-"], environment: environment.environment, stdin: Array(text.utf8))
            #expect(run.status == 0, "\(run.error)")
            let body = try #require(server.notifications.last).body
            #expect(body.utf8.count == 65_532)
            #expect(body.hasSuffix("aaa…"), "the flag is dropped whole: \(body.suffix(8).debugDescription)")
            #expect(run.error == "toastkit: warning: message from stdin cut from 65609 to 65532 bytes\n")
        }
    }

    @Test func unknownStatusBadHintMissingIcon() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            let status = try await toastkit(["send", "-s", "purple", "T"], environment: env)
            #expect(status.status == 65)
            #expect(
                status.error
                    == "toastkit: -s/--status purple: unknown status (use normal, success, warning, error, notification)\n"
            )
            let hint = try await toastkit(["send", "-h", "int:x:abc", "T"], environment: env)
            #expect(hint.status == 65)
            #expect(hint.error == "toastkit: -h/--hint int:x:abc: \"abc\" is not an integer\n")
            // A cosmetic problem never costs the message: shown without the icon, one warning, exit 0.
            let icon = try await toastkit(["send", "-i", "/nonexistent/icon.png", "T"], environment: env)
            #expect(icon.status == 0)
            #expect(
                icon.error
                    == "toastkit: warning: -i/--icon /nonexistent/icon.png: no such file or directory; the toast is shown without it\n"
            )
            #expect(server.notifications.map(\.summary) == ["T"])
            let usage = try await toastkit(["send", "-h"], environment: env)
            #expect(usage.status == 64)
            #expect(usage.error.contains("for help use --help"))
            let empty = try await toastkit(["send", ""], environment: env)
            #expect(empty.status == 65)
            #expect(empty.error == "toastkit: a toast needs a TITLE or a MESSAGE; both are empty\n")
            #expect(server.notifications.count == 1, "only the toast with the missing icon was shown")
        }
    }

    @Test func noSessionBusAtAll() async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-nobus")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        env["XDG_RUNTIME_DIR"] = directory
        env["XDG_STATE_HOME"] = directory
        env["TOASTKIT_USER_RUNTIME_ROOT"] = "\(directory)/run-user"
        let unset = try await toastkit(["send", "Hola"], environment: env)
        #expect(unset.status == 69)
        #expect(
            unset.error
                == "toastkit: cannot reach the session bus: no session bus: DBUS_SESSION_BUS_ADDRESS is not set, and "
                + "there is no bus at \(directory)/bus or \(directory)/run-user/\(geteuid())/bus; is this user logged in "
                + "to a desktop? From another user's job, run as that user (as root: toastkit --user NAME)\n")
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory)/nothing-here"
        for arguments in [["send", "Hola"], ["send", "--wait", "Hola"], ["capabilities"], ["listen"]] {
            let nowhere = try await toastkit(arguments, environment: env)
            #expect(nowhere.status == 69, "\(arguments)")
            #expect(nowhere.error.hasPrefix("toastkit: cannot reach the session bus: "), "\(arguments)")
            #expect(nowhere.error.filter { $0 == "\n" }.count == 1, "one line")
        }
    }

    @Test func noNotificationServerOnAWorkingBus() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let message = "toastkit: no notification server is running (org.freedesktop.Notifications has no owner)\n"
        for arguments in [
            ["send", "Hola"], ["send", "--id", "x", "Hola"], ["server-info"], ["close", "--server-id", "3"],
        ] {
            let run = try await toastkit(arguments, environment: environment.environment)
            #expect(run.status == 69, "\(arguments)")
            #expect(run.error == message, "\(arguments)")
        }
    }

    @Test func parallelRunsDoNotCorruptTheIDStore() async throws {
        try await withFakeServer { environment, server in
            let env = environment.environment
            let results = try await withThrowingTaskGroup(of: ToolProcess.Result.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await toastkit(["send", "--id", "job-\(index)", "Trabajo \(index)"], environment: env)
                    }
                }
                var all: [ToolProcess.Result] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.error))")
            let file = "\(environment.directory)/runtime/toastkit/ids.json"
            let data = try #require(FileManager.default.contents(atPath: file))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let ids = try #require(json["ids"] as? [String: [String: Any]])
            #expect(Set(ids.keys) == Set((0..<8).map { "job-\($0)" }))
            let serverIDs = Set(ids.values.compactMap { $0["server_id"] as? Int })
            #expect(serverIDs == Set(server.notifications.map { Int($0.id) }))
            var info = stat()
            #expect(stat("\(environment.directory)/runtime/toastkit", &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700)

            // A stale id (the server restarted: another unique name) falls back to a new toast.
            server.stop()
            let restarted = try await FakeNotificationServer.start(on: environment.bus, options: .init(firstID: 100))
            defer { restarted.stop() }
            let again = try await toastkit(["send", "--id", "job-0", "Otra vez"], environment: env)
            #expect(again.status == 0, "\(again.error)")
            #expect(restarted.notifications.first?.replacesID == 0)
        }
    }

    @Test func listenPrintsTheTrafficUntilSIGINT() async throws {
        try await withFakeServer(.init(unicastSignals: false)) { environment, server in
            let env = environment.environment
            let listener = try ToolProcess.start([Array("listen".utf8)], environment: env)
            #expect(
                await listener.nextErrorLine()
                    == "toastkit: listening for notifications on the session bus (Ctrl-C stops)")
            let sent = try await toastkit(["send", "-a", "app", "Hola", "Mundo"], environment: env)
            #expect(sent.status == 0)
            let notify = await listener.nextLine()
            #expect(notify.hasPrefix("notify :1."))
            #expect(notify.contains(#" id=1 app="app" summary="Hola" body="Mundo" replaces=0"#))
            #expect(notify.hasSuffix(" expire=-1"), "no duration given: the server's default, as notify-send")
            try server.emitClosed(id: 1, reason: 2)
            #expect(await listener.nextLine() == "closed id=1 reason=dismissed")
            try server.emitActionInvoked(id: 1, key: "default")
            #expect(await listener.nextLine() == #"action id=1 key="default""#)
            listener.signal(SIGINT)
            #expect(await listener.finish().status == 0)

            let json = try ToolProcess.start([Array("listen".utf8), Array("--json".utf8)], environment: env)
            _ = await json.nextErrorLine()
            try server.emitClosed(id: 1, reason: 1)
            #expect(
                await json.nextLine()
                    == #"{"event":"closed","sender":"\#(server.connection.uniqueName)","id":1,"reason":"expired","reason_code":1}"#
            )
            json.signal(SIGTERM)
            #expect(await json.finish().status == 0)
        }
    }
}
