// Messages larger than a connection reads ahead (issue 39): one held by whoever received it — a method's handler, a
// caller, a subscriber — never stops its connection from reading, and an exported object refuses calls larger than
// its limit before any handler sees them.
import DBus
import Synchronization
import TestSupport
import Testing

@Suite(.privateBus) struct BigMessageTests {
    /// More than the 4 MiB a connection reads ahead of what it has handled.
    static let big = 5 * 1024 * 1024

    /// Before: while a handler held a received call larger than the read-ahead, libdbus counted it as unhandled and
    /// read nothing more: the handler's own call to the bus was never answered (no answer within 15 s; the connection
    /// stood still until that call's 25 s timeout), and the handler's release of the call, on a pool thread, then made
    /// libdbus toggle the socket's watch there (the I/O thread's assertion stopped the test process).
    @Test func aHandlerHoldingABigCallCanStillCallTheBus() async throws {
        let service = try await PrivateBus.shared.connect()
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.close()
        }
        var object = DBusObject(interface: "org.toastkit.Test")
        object.asyncMethod("Relay") { message in
            // The call is held (its body not read) across a call of the handler's own.
            let id = try await service.bus.id()
            let text = try message.arguments("s")[0].stringValue ?? ""
            return [.uint32(UInt32(text.utf8.count)), .string(id)]
        }
        service.export(object, at: "/test")
        let answer = try await Deadline.run(
            within: .seconds(15), "answer of a handler that called the bus while it held a 5 MiB call"
        ) {
            try await client.call(
                destination: BusName(validating: service.uniqueName), path: "/test", interface: "org.toastkit.Test",
                member: "Relay", arguments: [.string(String(repeating: "a", count: Self.big))]
            ).arguments("us")
        }
        #expect(answer[0].uint32Value == UInt32(Self.big))
        #expect(answer[1].stringValue == (try await client.bus.id()))
    }

    /// Before: the caller's task released the 5 MiB reply, the last reference to a message libdbus counted against
    /// the read-ahead, and libdbus toggled the socket's watch on that thread: the I/O thread's assertion stopped the
    /// test process (a release build raced on the watch table, and could sleep without polling the socket).
    @Test func aCallerHoldingABigReplyGetsItsNextAnswer() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let text = String(repeating: "b", count: Self.big)
        let reply = try await service.call(from: client, "Echo", [.string(text)])
        let next = try await Deadline.run(within: .seconds(15), "answer to a call made while a 5 MiB reply is held") {
            try await service.call(from: client, "Echo", [.string("siguiente")]).body
        }
        #expect(next == [.string("siguiente")])
        #expect(reply.body == [.string(text)])
    }

    /// Before: as for the reply, the subscriber's release of the 5 MiB signal stopped the test process.
    @Test func aSubscriberHoldingABigSignalGetsItsNextAnswer() async throws {
        let service = try await TestService.start(on: PrivateBus.shared)
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.connection.close()
        }
        let signals = try await client.signals(
            matching: MatchRule(interface: "org.toastkit.Test", member: "Big", path: "/test"))
        var iterator = signals.makeAsyncIterator()
        let text = String(repeating: "c", count: Self.big)
        try service.connection.emitSignal(
            path: "/test", interface: "org.toastkit.Test", member: "Big", arguments: [.string(text)],
            destination: BusName(validating: client.uniqueName))
        let signal = try #require(try await iterator.next())
        let next = try await Deadline.run(within: .seconds(15), "answer to a call made while a 5 MiB signal is held") {
            try await service.call(from: client, "Echo", [.string("siguiente")]).body
        }
        #expect(next == [.string("siguiente")])
        #expect(signal.body == [.string(text)])
    }

    /// A call larger than its object's limit is answered `LimitsExceeded`, naming the limit, and its handler never
    /// runs; a call of exactly the limit is handled.
    @Test func aCallOverItsObjectsLimitIsRefusedBeforeItsHandlerRuns() async throws {
        let service = try await PrivateBus.shared.connect()
        let client = try await PrivateBus.shared.connect()
        defer {
            client.close()
            service.close()
        }
        let limit = 1024 * 1024
        let handled = Atomic(0)
        var object = DBusObject(interface: "org.toastkit.Test")
        object.maximumCallSize = limit
        object.asyncMethod("Count") { message in
            handled.add(1, ordering: .relaxed)
            return [.uint32(UInt32(try message.arguments("s")[0].stringValue?.utf8.count ?? 0))]
        }
        service.export(object, at: "/test")
        func count(_ bytes: Int) async throws -> DBusMessage {
            try await client.call(
                destination: BusName(validating: service.uniqueName), path: "/test", interface: "org.toastkit.Test",
                member: "Count", arguments: [.string(String(repeating: "d", count: bytes))])
        }
        // A string argument is its length (4 bytes), its bytes and a NUL.
        await #expect(
            throws: DBusError(
                name: DBusError.Name.limitsExceeded,
                message: "Count: the call's arguments are 1048577 bytes; org.toastkit.Test takes at most 1048576")
        ) {
            try await count(limit - 4)
        }
        // An array is its length and its bytes, however many elements: a dictionary of a million entries is measured
        // in one step, as a byte array is.
        let entries = (0..<100_000).map { (String($0), DBusValue.string("e")) }
        await #expect {
            try await client.call(
                destination: BusName(validating: service.uniqueName), path: "/test", interface: "org.toastkit.Test",
                member: "Count", arguments: [.variantDictionary(entries)])
        } throws: { error in
            let message = (error as? DBusError)?.message ?? ""
            return (error as? DBusError)?.name == DBusError.Name.limitsExceeded
                && message.hasPrefix("Count: the call's arguments are ") && message.hasSuffix(" at most 1048576")
        }
        #expect(handled.load(ordering: .relaxed) == 0, "the handler never saw the refused calls")
        let answer = try await count(limit - 5)
        #expect(try answer.arguments("u")[0].uint32Value == UInt32(limit - 5))
        #expect(handled.load(ordering: .relaxed) == 1)
    }
}
