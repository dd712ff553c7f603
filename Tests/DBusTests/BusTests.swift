@_spi(Testing) import DBus
import Foundation
import TestSupport
import Testing

@Suite(.privateBus) struct MethodCallTests {
    @Test func listNamesShowsTheBusAndThisConnection() async throws {
        let bus = try await PrivateBus.shared.connect()
        defer { bus.close() }
        let names = try await bus.bus.listNames()
        #expect(names.contains("org.freedesktop.DBus"))
        #expect(names.contains(bus.uniqueName))
        #expect(bus.uniqueName.hasPrefix(":"))
    }

    @Test func callToAnExportedObjectOnAnotherConnection() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let arguments: [DBusValue] = [
            .string("hola"), .variantDictionary(["urgency": .byte(1)]), .array("(iiibiiay)", []),
        ]
        let reply = try await service.call(from: client, "Echo", arguments)
        #expect(reply.kind == .methodReturn)
        #expect(reply.body == arguments)
        #expect(reply.sender == service.connection.uniqueName)
        #expect(try await service.call(from: client, "Add", [.int32(40), .int32(2)]).arguments("i") == [.int32(42)])
    }

    @Test func errorRepliesKeepTheirName() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let nope = await #expect(throws: DBusError.self) { try await service.call(from: client, "Fail", [.int32(1)]) }
        #expect(nope == DBusError(name: "org.toastkit.Error.Nope", message: "nope: 1 args"))

        let unknown = await #expect(throws: DBusError.self) { try await service.call(from: client, "Missing") }
        #expect(unknown?.name == DBusError.Name.unknownMethod)

        let wrongSignature = await #expect(throws: DBusError.self) {
            try await service.call(from: client, "Add", [.string("forty")])
        }
        #expect(wrongSignature?.name == DBusError.Name.invalidSignature)

        let failed = await #expect(throws: DBusError.self) { try await service.call(from: client, "Throw") }
        #expect(failed?.name == DBusError.Name.failed)

        let noOwner = await #expect(throws: DBusError.self) {
            try await client.call(
                destination: "org.toastkit.Nobody", path: "/", interface: nil, member: "Ping", timeout: .seconds(5))
        }
        #expect(noOwner?.name == DBusError.Name.serviceUnknown)

        // Matched by name in a catch, as swift-system's Errno is; a service's own name from a string literal.
        func outcome(_ member: MemberName) async -> String {
            do {
                _ = try await service.call(from: client, member, [.int32(1)])
                return "reply"
            } catch DBusError.Name.unknownMethod {
                return "unknown method"
            } catch let error as DBusError where error.name == "org.toastkit.Error.Nope" {
                return "nope: \(error.reason)"
            } catch {
                return "other: \(error)"
            }
        }
        #expect(await outcome("Missing") == "unknown method")
        #expect(await outcome("Fail") == "nope: nope: 1 args")
        #expect(DBusError(name: .failed, message: "").reason == DBusError.Name.failed.rawValue)
    }

    @Test func aCallWithNoReplyTimesOut() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let started = ContinuousClock.now
        let error = await #expect(throws: DBusError.self) {
            try await service.call(from: client, "Hold", timeout: .milliseconds(300))
        }
        #expect(error?.name == DBusError.Name.noReply)
        #expect(ContinuousClock.now - started >= .milliseconds(290))
        // The connection is still usable afterwards.
        #expect(try await service.call(from: client, "Echo", [.uint32(1)]).body == [.uint32(1)])
    }

    @Test func cancellingTheTaskEndsTheCall() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let task = Task { try await service.call(from: client, "Hold", timeout: .seconds(60)) }
        // Wait until the call has really reached the service, then cancel.
        while service.held.withLock({ $0.isEmpty }) { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func aThousandConcurrentCallsFromSixteenTasks() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let answered = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    var correct = 0
                    for index in 0..<(1000 / 16 + (worker < 1000 % 16 ? 1 : 0)) {
                        let arguments: [DBusValue] = [.int32(Int32(worker)), .string("call \(index)")]
                        let reply = try await service.call(from: client, "Echo", arguments)
                        if reply.body == arguments { correct += 1 }
                    }
                    return correct
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(answered == 1000)
    }

    @Test func badArgumentsAreRejectedBeforeSendingAndTheConnectionLives() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let error = await #expect(throws: DBusError.self) {
            try await service.call(from: client, "Echo", [.string("a\u{0}b")])
        }
        #expect(error?.message == "argument 0 contains a NUL byte at UTF-8 offset 1")
        #expect(throws: DBusError.self) { try BusName(validating: "not a name") }
        #expect(try await service.call(from: client, "Echo", [.string("ok")]).body == [.string("ok")])
    }

    @Test func anIdleConnectionDoesNotSpin() async throws {
        let client = try await PrivateBus.shared.connect()
        defer { client.close() }
        _ = try await client.bus.listNames()
        let before = try #require(client.ioThreadCPUTime)
        // Measuring idleness takes real time; nothing is awaited here but the clock.
        try await Task.sleep(for: .seconds(2))
        let after = try #require(client.ioThreadCPUTime)
        #expect(after - before < .milliseconds(20), "I/O thread used \(after - before) while idle")
        #expect(client.isConnected)
    }
}

@Suite(.privateBus) struct NameTests {
    @Test func requestAndReleaseNames() async throws {
        let first = try await PrivateBus.shared.connect()
        let second = try await PrivateBus.shared.connect()
        defer {
            first.close()
            second.close()
        }
        let name: BusName = "org.toastkit.Names.Test"
        #expect(try await first.bus.requestName(name, flags: .doNotQueue) == .primaryOwner)
        #expect(try await first.bus.requestName(name) == .alreadyOwner)
        #expect(try await second.bus.requestName(name, flags: .doNotQueue) == .exists)
        #expect(try await first.bus.nameOwner(of: name) == first.uniqueName)
        #expect(try await second.bus.releaseName(name) == .notOwner)
        #expect(try await first.bus.releaseName(name) == .released)
        #expect(try await first.bus.nameOwner(of: name) == nil)
        #expect(try await first.bus.releaseName(name) == .nonExistent)
    }

    @Test func nameOwnerChangedWhenTheOwnerDisconnects() async throws {
        let watcher = try await PrivateBus.shared.connect()
        let owner = try await PrivateBus.shared.connect()
        defer { watcher.close() }
        let name: BusName = "org.toastkit.Names.Owner"
        let changes = try await watcher.bus.nameOwnerChanges(of: name)
        var iterator = changes.makeAsyncIterator()

        #expect(try await owner.bus.requestName(name) == .primaryOwner)
        let acquired = try await iterator.next()
        #expect(acquired == NameOwnerChange(name: name.rawValue, oldOwner: nil, newOwner: owner.uniqueName))

        owner.close()
        let lost = try await iterator.next()
        #expect(lost == NameOwnerChange(name: name.rawValue, oldOwner: owner.uniqueName, newOwner: nil))
    }
}

@Suite(.privateBus) struct SignalTests {
    static let rule = MatchRule(interface: "org.toastkit.Test", member: "Ping")

    @Test func broadcastAndUnicastSignalsArriveAndStopAfterCancel() async throws {
        let listener = try await PrivateBus.shared.connect()
        let emitter = try await PrivateBus.shared.connect()
        defer {
            listener.close()
            emitter.close()
        }
        let subscription = try await listener.signals(matching: Self.rule)
        #expect(try await matchRules(of: listener, askedBy: listener).contains(Self.rule.ruleString))
        var iterator = subscription.makeAsyncIterator()

        try emitter.emitSignal(path: "/test", interface: "org.toastkit.Test", member: "Ping", arguments: [.uint32(1)])
        let broadcast = try #require(try await iterator.next())
        #expect(broadcast.body == [.uint32(1)])
        #expect(broadcast.sender == emitter.uniqueName)
        #expect(broadcast.destination == nil)

        // Other signals are filtered out; a unicast one addressed to the listener arrives.
        try emitter.emitSignal(path: "/test", interface: "org.toastkit.Test", member: "Pong", arguments: [.uint32(9)])
        try emitter.emitSignal(
            path: "/test", interface: "org.toastkit.Test", member: "Ping", arguments: [.uint32(2)],
            destination: BusName(validating: listener.uniqueName))
        let unicast = try #require(try await iterator.next())
        #expect(unicast.body == [.uint32(2)])
        #expect(unicast.destination == listener.uniqueName)

        subscription.cancel()
        #expect(try await iterator.next() == nil)
        // RemoveMatch went out before this call on the same connection, so the bus has processed it.
        #expect(try await !matchRules(of: listener, askedBy: listener).contains(Self.rule.ruleString))
    }

    @Test func aWellKnownSenderIsFollowedSoOnlyItsOwnerGetsThrough() async throws {
        let listener = try await PrivateBus.shared.connect()
        let owner = try await PrivateBus.shared.connect()
        let stranger = try await PrivateBus.shared.connect()
        let successor = try await PrivateBus.shared.connect()
        defer {
            for connection in [listener, owner, stranger, successor] { connection.close() }
        }
        let name: BusName = "org.toastkit.Test.Followed"
        #expect(try await owner.bus.requestName(name, flags: .allowReplacement) == .primaryOwner)
        let rule = MatchRule(sender: name, interface: "org.toastkit.Test", member: "Said")
        let subscription = try await listener.signals(matching: rule)
        var iterator = subscription.makeAsyncIterator()
        let me = try BusName(validating: listener.uniqueName)
        func say(_ text: String, from connection: DBusConnection) throws {
            // Unicast: the bus delivers it whatever the match rules say; only the connection can drop it.
            try connection.emitSignal(
                path: "/test", interface: "org.toastkit.Test", member: "Said", arguments: [.string(text)],
                destination: me)
        }

        try say("forged", from: stranger)
        try say("genuine", from: owner)
        #expect(try await iterator.next()?.body == [.string("genuine")], "the stranger's look-alike was dropped")

        // The name moves: the new owner speaks for it, the old one no longer does.
        #expect(try await successor.bus.requestName(name, flags: .replaceExisting) == .primaryOwner)
        // A call on the listener's connection after the move: its NameOwnerChanged has been read by then.
        _ = try await listener.bus.nameOwner(of: name)
        try say("stale", from: owner)
        try say("new owner", from: successor)
        #expect(try await iterator.next()?.body == [.string("new owner")])
        subscription.cancel()
    }

    @Test func cancellingTheConsumingTaskRemovesTheMatchRule() async throws {
        let listener = try await PrivateBus.shared.connect()
        let emitter = try await PrivateBus.shared.connect()
        defer {
            listener.close()
            emitter.close()
        }
        let rule = MatchRule(interface: "org.toastkit.Test", member: "Tick")
        let subscription = try await listener.signals(matching: rule)
        let consumer = Task {
            var count = 0
            for try await _ in subscription { count += 1 }
            return count
        }
        try emitter.emitSignal(path: "/test", interface: "org.toastkit.Test", member: "Tick")
        #expect(try await matchRules(of: listener, askedBy: emitter).contains(rule.ruleString))
        consumer.cancel()
        _ = try await consumer.value
        // The rule is removed once the consumer ends.
        #expect(try await !matchRules(of: listener, askedBy: listener).contains(rule.ruleString))
    }

    @Test func droppingTheSubscriptionRemovesTheMatchRule() async throws {
        let listener = try await PrivateBus.shared.connect()
        defer { listener.close() }
        let rule = MatchRule(interface: "org.toastkit.Test", member: "Dropped")
        do {
            let subscription = try await listener.signals(matching: rule)
            _ = subscription
        }
        #expect(try await !matchRules(of: listener, askedBy: listener).contains(rule.ruleString))
    }

    @Test func ruleStringsQuoteValues() {
        let rule = MatchRule(member: "Ping", arguments: [0: "it's"])
        #expect(rule.ruleString == "type='signal',member='Ping',arg0='it'\\''s'")
    }
}

@Suite(.privateBus) struct ExecutorTests {
    @Test func callsRunOnTheConnectionsOwnThread() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let (sequential, concurrent, threadName) = try await withTaskExecutorPreference(client.executor) {
            var sequential = 0
            for index in 0..<200 {
                let reply = try await service.call(from: client, "Echo", [.int32(Int32(index))])
                if reply.body == [.int32(Int32(index))] { sequential += 1 }
            }
            let concurrent = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        try await service.call(from: client, "Echo", [.int32(Int32(index))]).body.count == 1
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            return (sequential, concurrent, currentThreadName())
        }
        #expect(sequential == 200)
        #expect(concurrent == 200)
        #expect(threadName == "dbus-io")
    }

    @Test func tasksOnAClosedConnectionStillRun() async throws {
        let client = try await PrivateBus.shared.connect()
        client.close()
        _ = await client.waitUntilClosed()
        let error = await withTaskExecutorPreference(client.executor) {
            do {
                _ = try await client.bus.listNames()
                return nil as DBusError?
            } catch {
                return error as? DBusError
            }
        }
        #expect(error?.isDisconnected == true)
    }
}

private func currentThreadName() -> String {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
}
