import DBus
import Foundation
import Synchronization
import TestSupport
import Testing

/// The package-level `call(_:timeout:completion:)` the desktop presenter uses.
@Suite(.privateBus) struct CallbackCallTests {
    /// Makes a callback-style call and waits for its completion; returns the result and the completing thread.
    private func call(
        _ service: TestService,
        from client: DBusConnection,
        _ member: MemberName,
        _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(10)
    ) async throws -> (Result<DBusMessage, any Error>, thread: String) {
        let destination = try BusName(validating: service.connection.uniqueName)
        return try await withCheckedThrowingContinuation { continuation in
            do {
                try client.call(
                    DBusMethodCall(
                        destination: destination, path: TestService.path, interface: TestService.interface,
                        member: member, arguments: arguments),
                    timeout: timeout
                ) { result in
                    #expect(client.isOnIOThread, "completions run on the I/O thread")
                    continuation.resume(returning: (result, currentThreadName()))
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    @Test func repliesAndErrorsReachTheCompletionOnTheIOThread() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let arguments: [DBusValue] = [.string("hola"), .variantDictionary(["urgency": .byte(1)])]
        let (echo, thread) = try await call(service, from: client, "Echo", arguments)
        #expect(try echo.get().body == arguments)
        #expect(thread == "dbus-io")
        #expect(!client.isOnIOThread, "a test's task is not the I/O thread")

        let (nope, _) = try await call(service, from: client, "Fail", [.int32(1)])
        #expect(throws: DBusError(name: "org.toastkit.Error.Nope", message: "nope: 1 args")) { try nope.get() }

        let (held, _) = try await call(service, from: client, "Hold", timeout: .milliseconds(200))
        #expect { try held.get() } throws: { ($0 as? DBusError)?.name == DBusError.Name.noReply }
    }

    @Test func badArgumentsThrowAndNeverCallTheCompletion() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let calls = Atomic(0)
        #expect(throws: DBusError.self) {
            try client.call(
                DBusMethodCall(
                    destination: "org.toastkit.Nobody", path: "/", interface: nil, member: "Ping",
                    arguments: [.string("a\u{0}b")])
            ) { _ in calls.add(1, ordering: .relaxed) }
        }
        // A later call on the same connection completes (so the rejected one would have been seen by now).
        let (result, _) = try await call(service, from: client, "Echo")
        #expect((try? result.get()) != nil)
        #expect(calls.load(ordering: .relaxed) == 0)
    }

    @Test func aClosedConnectionCompletesAtOnceWithDisconnected() async throws {
        let client = try await PrivateBus.shared.connect()
        client.close()
        _ = await client.waitUntilClosed()
        let outcome = Mutex<Result<DBusMessage, any Error>?>(nil)
        try client.call(DBusMethodCall(destination: "org.toastkit.Nobody", path: "/", interface: nil, member: "Ping")) {
            result in outcome.withLock { $0 = result }
        }
        let result = try #require(outcome.withLock { $0 })
        #expect { try result.get() } throws: { ($0 as? DBusError)?.name == DBusError.Name.disconnected }
    }

    @Test func signalsReachAHandlerOnTheIOThreadInOrderUntilCancelledOrTheConnectionEnds() async throws {
        let listener = try await PrivateBus.shared.connect()
        let emitter = try await PrivateBus.shared.connect()
        defer { emitter.close() }
        let (arrivals, arrived) = AsyncStream<(Result<DBusMessage, DBusError>, onIOThread: Bool)>.makeStream()
        let rule = MatchRule(interface: "org.toastkit.Test", member: "Ping")
        let handler = try await listener.signals(matchingAny: [rule]) { result in
            arrived.yield((result, listener.isOnIOThread))
        }
        #expect(try await matchRules(of: listener, askedBy: listener).contains(rule.ruleString))
        var iterator = arrivals.makeAsyncIterator()
        for value: UInt32 in 1...3 {
            try emitter.emitSignal(
                path: "/test", interface: "org.toastkit.Test", member: "Ping", arguments: [.uint32(value)])
            try emitter.emitSignal(
                path: "/test", interface: "org.toastkit.Test", member: "Pong", arguments: [.uint32(9)])
        }
        for value: UInt32 in 1...3 {
            let (result, onIOThread) = try #require(await iterator.next())
            #expect(try result.get().body == [.uint32(value)], "in order, and only what matches")
            #expect(onIOThread, "on the connection's I/O thread, as replies are")
        }

        handler.cancel()
        handler.cancel()  // once is enough; twice changes nothing
        // RemoveMatch went out before this call on the same connection, so the bus has processed it.
        #expect(try await !matchRules(of: listener, askedBy: listener).contains(rule.ruleString))
        try emitter.emitSignal(path: "/test", interface: "org.toastkit.Test", member: "Ping", arguments: [.uint32(4)])
        // A call after it on the same connection: the bus has routed the signal by the time it answers.
        _ = try await emitter.bus.nameOwner(of: BusName(validating: listener.uniqueName))

        // A second handler on the same connection hears of its end.
        _ = try await listener.signals(matchingAny: [rule]) { result in arrived.yield((result, listener.isOnIOThread)) }
        listener.close()
        let (end, _) = try #require(await iterator.next(), "the cancelled handler got nothing more")
        #expect { try end.get() } throws: { ($0 as? DBusError)?.name == DBusError.Name.disconnected }
    }
}

private func currentThreadName() -> String {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
}
