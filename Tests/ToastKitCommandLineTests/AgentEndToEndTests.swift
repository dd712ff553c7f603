import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

@testable import ToastKitCommandLine

/// The agent (issue 13) end to end: the built `toastkit` on real servers, each `send` a process of its own that
/// exits, the agent started on demand, a bus monitor reading what reaches the server.
@Suite(.timeLimit(.minutes(2))) struct AgentEndToEndTests {
    private func withDesktop(
        _ server: NotificationServerKind = .dunst, _ body: (NotificationEnvironment, BusWatcher) async throws -> Void
    ) async throws {
        try await NotificationEnvironment.withWatched(server, body)
    }

    /// Issue 43: two scripts' toasts of one application are on screen together, as notify-send's are; the newer is
    /// in front with the only running time, the older is kept on the server (told never to expire) with all its time,
    /// and runs again once the newer has gone.
    @Test func twoScriptsToastsStackTheNewestInFront() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.agentEnvironment
            // A minute: `list` finds it on screen however loaded the machine is; the test ends it itself below.
            let first = try await toastkit(["send", "--id", "a", "-d", "60", "Primero"], environment: env)
            #expect(first.status == 0 && first.error.isEmpty, "through the agent: \(first.error)")
            // No agent ran: `send` showed it, and the agent it started took it over.
            let (notifyA, idA) = try await watcher.nextNotifyTakenOver()
            #expect(notifyA.summary == "Primero")
            // A second script while the first toast is on screen: it is shown at once, in front.
            let second = try await toastkit(["send", "--id", "b", "-d", "1", "Segundo"], environment: env)
            #expect(second.status == 0, "\(second.error)")
            var idB: UInt32?
            var firstStopped = false
            while idB == nil || !firstStopped {
                let (notify, id) = try await watcher.nextNotifyAndReply()
                if notify.summary == "Segundo" {
                    #expect(notify.replacesID == 0 && notify.expireTimeout == 1000, "in front, running")
                    idB = id
                } else {
                    #expect(notify.replacesID == idA && id == idA, "the first is kept in place: \(notify.summary)")
                    firstStopped = notify.expireTimeout == 0
                }
            }
            let list = try await toastkit(["list"], environment: env)
            #expect(list.lines.contains { $0.hasPrefix("a\tshown\t") }, "\(list.output)")
            // The newer ends after its second: closed by the agent (3), or by dunst at the same `expire_timeout` a
            // moment earlier (1); the first runs again, in place, with what it had left (all of it but the moment
            // before it was covered).
            let reason = try await watcher.nextClosed(try #require(idB))
            #expect(reason == 1 || reason == 3, "NotificationClosed reason \(reason)")
            let (again, againID) = try await watcher.nextNotifyAndReply()
            #expect(again.replacesID == idA && againID == idA && again.summary == "Primero")
            #expect(again.expireTimeout > 50_000, "its time runs again: \(again.expireTimeout) ms")
            #expect(try await toastkit(["close", "--id", "a"], environment: env).status == 0)
            #expect(try await watcher.nextClose(of: idA) == idA)
            let empty = try await toastkit(["list"], environment: env)
            #expect(empty.output.isEmpty, "\(empty.output)")
        }
    }

    @Test func aHundredConcurrentSendsAreAllAnswered() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.agentEnvironment
            // Start the agent first, so that the hundred race only for its attention.
            #expect(
                try await toastkit(["send", "-d", "indefinite", "--id", "front", "Delante"], environment: env).status
                    == 0)
            let results = try await withThrowingTaskGroup(of: ToolProcess.Result.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        // Five minutes: the front one cannot end before `list` however long the hundred take
                        // (with 4 s it did, on a loaded machine, and 98 were left waiting).
                        try await toastkit(
                            ["send", "--id", "n\(index)", "-d", "300", "Toast \(index)"], environment: env)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.allSatisfy { $0.status == 0 }, "\(results.filter { $0.status != 0 }.map(\.error))")
            // The indefinite toast has a lane of its own; the hundred share their application's: three on screen,
            // the newest in front, the rest waiting for a room.
            let list = try await toastkit(["list"], environment: env)
            #expect(list.lines.filter { $0.contains("\twaiting\t") }.count == 97, "\(list.output)")
            #expect(list.lines.filter { $0.contains("\tshown\t") }.count == 2, "\(list.output)")
            #expect(list.lines.filter { $0.contains("\tfront\t") }.count == 2, "\(list.output)")
            #expect(list.lines.first?.hasPrefix("front\tfront\t") == true)
        }
    }

    @Test func badInputOverDBusGetsAnErrorAndTheAgentStaysUp() async throws {
        try await withDesktop { desktop, _ in
            let env = desktop.agentEnvironment
            #expect(try await toastkit(["send", "-d", "0.2", "Arranca"], environment: env).status == 0)
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            try await bus.awaitAgent()
            func present(_ fields: [(String, DBusValue)]) async -> String {
                do {
                    _ = try await bus.call(
                        destination: "org.toastkit.Agent1", path: "/org/toastkit/Agent1",
                        interface: "org.toastkit.Agent1", member: "Present", arguments: [.variantDictionary(fields)])
                    return "ok"
                } catch let error as DBusError {
                    return "\(error.name): \(error.message)"
                } catch {
                    return "\(error)"
                }
            }
            let invalid = "org.toastkit.Agent1.Error.InvalidToast"
            #expect(await present([("title", .int32(5))]) == "\(invalid): title must be a string (s), not i")
            #expect(
                await present([("title", .string("x")), ("colour", .string("red"))])
                    == "org.toastkit.Agent1.Error.UnknownKey: unknown key \"colour\"")
            #expect(await present([("message", .string("x"))]) == "\(invalid): title is missing")
            #expect(
                await present([("title", .string("x")), ("status", .string("loud"))])
                    == "\(invalid): status \"loud\" is not normal, success, warning, error or notification")
            #expect(
                await present([
                    ("title", .string("x")),
                    ("actions", .array("(sss)", [.structure([.string(""), .string("a"), .string("")])])),
                ])
                    == "\(invalid): an action's id is empty")
            #expect(
                await present([
                    ("title", .string("x")),
                    (
                        "on-action",
                        .dictionary(key: "s", value: "as", [DBusDictEntry(.string("go"), .strings(["true"]))])
                    ),
                ])
                    == "\(invalid): on-action \"go\": the toast has no action with this id")
            // A huge title: refused or shown, never a crash.
            let huge = await present([
                ("title", .string(String(repeating: "x", count: 1_000_000))), ("duration", .double(0.1)),
            ])
            #expect(huge == "ok" || huge.hasPrefix(invalid), "\(huge.prefix(200))")
            // A flood of calls from one connection: every one is answered.
            let answers = await withTaskGroup(of: String.self) { group in
                for index in 0..<500 {
                    group.addTask { await present([("title", .int32(Int32(index)))]) }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(answers.count == 500 && answers.allSatisfy { $0.hasPrefix(invalid) })
            let info = try await bus.call(
                destination: "org.toastkit.Agent1", path: "/org/toastkit/Agent1", interface: "org.toastkit.Agent1",
                member: "GetInfo")
            #expect(try info.arguments("a{sv}")[0].variantDictionaryValue?["version"] != nil, "still up")
        }
    }

    @Test func theAgentExitsWhenIdleAndHonoursItsConfigFile() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.agentEnvironment
            let config = "\(desktop.directory)/config/toastkit"
            try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
            try "# two at once\nmax-visible = 2\nidle-timeout = 0.5\n".write(
                toFile: "\(config)/agent.conf", atomically: true, encoding: .utf8)
            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            let changes = try await bus.bus.nameOwnerChanges(of: "org.toastkit.Agent1")
            let agent = try ToolProcess.start(["agent"].map { Array($0.utf8) }, environment: env)
            _ = try await Deadline.run(within: .seconds(5), "the agent's name") {
                for try await change in changes where change.newOwner != nil { return true }
                return nil
            }
            _ = try await toastkit(["send", "-d", "0.3", "Uno"], environment: env)
            _ = try await toastkit(["send", "-d", "0.3", "Dos"], environment: env)
            // (Should the agent have exited for being idle before the first send, that send shows its toast itself
            // and the agent it starts takes it over in place: the same toast again, not a second one.)
            let (one, oneID) = try await watcher.nextNotifyAndReply()
            var (two, twoID) = try await watcher.nextNotifyAndReply()
            if twoID == oneID, two.summary == one.summary { (two, twoID) = try await watcher.nextNotifyAndReply() }
            #expect([one.summary, two.summary] == ["Uno", "Dos"], "max-visible = 2: both at once")
            // Both end, then half a second with nothing live: the agent exits 0 by itself.
            let run = await agent.finish()
            #expect(run.status == 0, "\(run.error)")

            try "max-visible = 11\n".write(toFile: "\(config)/agent.conf", atomically: true, encoding: .utf8)
            let bad = try await toastkit(["agent"], environment: env)
            #expect(bad.status == 65)
            #expect(
                bad.error == "toastkit: \(config)/agent.conf:1: max-visible 11: expected a whole number from 1 to 10\n")
        }
    }
}
