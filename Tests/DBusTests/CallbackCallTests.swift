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
}

private func currentThreadName() -> String {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
}
