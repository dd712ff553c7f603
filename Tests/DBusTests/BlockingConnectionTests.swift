import DBus
import Foundation
import TestSupport
import Testing

/// The connection for short-lived processes: no I/O thread, batches of calls in one round trip.
@Suite(.timeLimit(.minutes(1))) struct BlockingConnectionTests {
    @Test func helloAndTheFirstCallsAreAnsweredInOrder() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let (name, owner, nobody, names) = try await onOwnThread {
            let (connection, replies) = try BlockingDBusConnection.connect(
                to: .address(bus.address), timeout: .seconds(5),
                calling: [
                    .bus("GetNameOwner", [.string("org.freedesktop.DBus")]),
                    .bus("GetNameOwner", [.string("org.example.Nobody")]),
                    .bus("ListNames"),
                ])
            defer { connection.close() }
            return (
                connection.uniqueName, try replies[0].get().arguments("s")[0].stringValue, errorName(replies[1]),
                try replies[2].get().arguments("as")[0].stringsValue ?? []
            )
        }
        #expect(name.hasPrefix(":"))
        #expect(owner == "org.freedesktop.DBus")
        #expect(nobody == DBusError.Name.nameHasNoOwner)
        #expect(names.contains(name), "the bus knew the connection by the time ListNames ran")
    }

    @Test func aBatchIsSentWholeBeforeAnyReplyIsAwaited() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await TestService.start(on: bus)
        defer { service.connection.close() }
        let destination = try BusName(validating: service.connection.uniqueName)
        let batch = Task {
            try await onOwnThread {
                let (connection, _) = try BlockingDBusConnection.connect(to: .address(bus.address))
                defer { connection.close() }
                let calls = (1...3).map { index in
                    DBusMethodCall(
                        destination: destination, path: TestService.path, interface: TestService.interface,
                        member: "Hold", arguments: [.int32(Int32(index))])
                }
                return connection.call(calls, timeout: .seconds(5)).map { try? $0.get().body }
            }
        }
        // The service answers only once all three calls are in: a client that waited for each reply before
        // sending the next would see its first calls time out.
        var calls: [IncomingCall] = []
        for await call in service.heldCalls {
            calls.append(call)
            if calls.count == 3 { break }
        }
        for call in calls.reversed() { call.reply(call.message.body) }
        #expect(try await batch.value == [[.int32(1)], [.int32(2)], [.int32(3)]])
    }

    @Test func aBadArgumentFailsItsCallOnlyAndIsNotSent() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let results = try await onOwnThread {
            let (connection, _) = try BlockingDBusConnection.connect(to: .address(bus.address))
            defer { connection.close() }
            return connection.call([.bus("GetNameOwner", [.string("org.free\0desktop")]), .bus("GetId")]).map(errorName)
        }
        #expect(results == [DBusError.Name.invalidArgs, nil])
    }

    @Test func noBusIsAClearErrorAndALostBusFailsTheNextCall() async throws {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-blocking")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let missing = try await onOwnThread { () -> DBusError? in
            do throws(DBusError) {
                _ = try BlockingDBusConnection.connect(to: .address("unix:path=\(directory)/no-bus"))
                return nil
            } catch {
                return error
            }
        }
        #expect(missing?.message.contains("\(directory)/no-bus") == true, "\(String(describing: missing))")

        let bus = try await PrivateBus.start()
        let lost = try await onOwnThread {
            let (connection, _) = try BlockingDBusConnection.connect(to: .address(bus.address))
            bus.kill()
            return errorName(Result { () throws(DBusError) in try connection.call(.bus("GetId")) })
        }
        bus.stop()
        #expect(lost == DBusError.Name.disconnected)
    }
}

extension BlockingConnectionTests {
    /// A batch whose peer never answers ends after one timeout, not one per call, and says how long it waited.
    @Test func unansweredCallsOfABatchShareOneDeadline() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await TestService.start(on: bus)
        defer { service.connection.close() }
        let destination = try BusName(validating: service.connection.uniqueName)
        let (errors, elapsed) = try await onOwnThread {
            let (connection, _) = try BlockingDBusConnection.connect(to: .address(bus.address))
            defer { connection.close() }
            let calls = (1...3).map { index in
                DBusMethodCall(
                    destination: destination, path: TestService.path, interface: TestService.interface,
                    member: "Hold", arguments: [.int32(Int32(index))])
            }
            let started = ContinuousClock.now
            let results = connection.call(calls, timeout: .seconds(2))
            let errors = results.map { result -> DBusError? in
                if case .failure(let error) = result { error } else { nil }
            }
            return (errors, ContinuousClock.now - started)
        }
        // One deadline: about 2 s for the batch, where one timeout per call took 6 s.
        #expect(elapsed >= .seconds(2) && elapsed < .seconds(4), "took \(elapsed)")
        for error in errors {
            #expect(error?.name == DBusError.Name.noReply)
            #expect(error?.message == "no reply within 2.0 seconds")
            #expect(error?.isRecipientDisconnected == false)
        }
    }

    /// A peer that leaves the bus with a call unanswered: the bus says so at once, and the error says it left
    /// (it did not time out).
    @Test func aPeerThatLeavesMidCallIsNotReportedAsATimeout() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await TestService.start(on: bus)
        let destination = try BusName(validating: service.connection.uniqueName)
        let call = DBusMethodCall(
            destination: destination, path: TestService.path, interface: TestService.interface, member: "Hold")
        let started = ContinuousClock.now
        let blocking = Task {
            try await onOwnThread { () -> DBusError? in
                let (connection, _) = try BlockingDBusConnection.connect(to: .address(bus.address))
                defer { connection.close() }
                do throws(DBusError) {
                    _ = try connection.call(call, timeout: .seconds(20))
                    return nil
                } catch {
                    return error
                }
            }
        }
        for await _ in service.heldCalls { break }
        service.connection.close()
        let error = try await blocking.value
        #expect(error?.isRecipientDisconnected == true, "\(String(describing: error))")
        #expect(error?.name == DBusError.Name.noReply)
        #expect(ContinuousClock.now - started < .seconds(15), "well before the 20 s timeout")

        // The same through the async connection.
        let second = try await TestService.start(on: bus)
        let client = try await bus.connect()
        defer { client.close() }
        let asyncCall = Task { try await second.call(from: client, "Hold", timeout: .seconds(20)) }
        for await _ in second.heldCalls { break }
        second.connection.close()
        await #expect {
            _ = try await asyncCall.value
        } throws: { error in
            (error as? DBusError)?.isRecipientDisconnected == true
        }
    }
}

/// The error's name, or nil for a reply.
private func errorName(_ result: Result<DBusMessage, DBusError>) -> DBusError.Name? {
    if case .failure(let error) = result { error.name } else { nil }
}
