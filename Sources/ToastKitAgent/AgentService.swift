// The agent's service on the bus: its name, the methods it exports, the enter/leave that counts each call, the check
// that the caller is this user, and the wait for the adoption.
import DBus
import FreedesktopNotifications
import Glibc

extension ToastAgent {
    /// Exports `org.toastkit.Agent1` as ``AgentInterface/methods`` lists it (each method one job's, run through
    /// ``run(_:checked:_:)``), and its introspection.
    func export() {
        let handlers: [MemberName: @Sendable (DBusMessage) async throws -> [DBusValue]] = [
            "Present": { [weak self] message in
                guard let self else { throw Self.gone }
                return try await run(message, checked: true) {
                    // The caller's uid is asked of the bus while the toast is decoded and checked (nothing is done
                    // with it before the answer): one round trip less on the path every `send` takes.
                    async let check: Void = self.checkCaller(message.sender)
                    // After adoption: a `-r` of an adopted toast's server id must find it.
                    await self.adopted()
                    let prepared = Result { try self.prepare(message) }
                    try await check
                    return try await self.present(prepared.get())
                }
            },
            "Close": { [weak self] message in
                guard let self else { throw Self.gone }
                return try await run(message) { try await self.close(message) }
            },
            "Wait": { [weak self] message in
                guard let self else { throw Self.gone }
                return try await run(message) { try await self.wait(message) }
            },
            "List": { [weak self] message in
                guard let self else { throw Self.gone }
                return try await run(message) { self.list() }
            },
            "TakeHandOver": { [weak self] message in
                guard let self else { throw Self.gone }
                // No caller check: `send` calls without waiting and exits, so the bus may no longer know its uid;
                // and the call only makes the agent read this user's own private file, checked as the journal is.
                return try await run(message, checked: true) {
                    await self.adopted()
                    await self.takeHandOver()
                    return []
                }
            },
            "GetInfo": { [weak self] message in
                guard let self else { throw Self.gone }
                return try await run(message) {
                    // What it reports is on disk: a killed agent's successor adopts what this answer counted.
                    self.saver.flush()
                    return self.info()
                }
            },
        ]
        precondition(
            Set(handlers.keys) == Set(AgentInterface.methods.map(\.name)), "the agent exports what its interface says")
        var object = DBusObject(interface: AgentInterface.interface)
        object.maximumCallSize = AgentLimits.maximumCallSize
        for (name, _) in AgentInterface.methods {
            if let handler = handlers[name] { object.asyncMethod(name, handler) }
        }
        connection.export(object, at: AgentInterface.path)
        var introspectable = DBusObject(interface: "org.freedesktop.DBus.Introspectable")
        introspectable.method("Introspect") { call in call.reply([.string(AgentInterface.introspection)]) }
        connection.export(introspectable, at: AgentInterface.path)
    }

    static let gone = DBusError(name: DBusError.Name.failed, message: "the agent is stopping")

    /// The answer to a call that reaches an agent about to exit (idle, or leaving): its sender calls again, and the
    /// bus (or the sender) starts the next agent.
    static let stopping = DBusError(
        name: AgentInterface.ErrorName.stopping, message: "the agent is exiting for being idle; call again")

    /// Runs one call: counted as activity from the moment its handler starts, before any wait (the idle exit can only
    /// come while no call is in hand; once it is decided, the call is refused with ``stopping``); unless `checked`
    /// (the body checks), the caller must be this user and the saved toasts adopted first.
    private func run(
        _ message: DBusMessage, checked: Bool = false, _ body: () async throws -> [DBusValue]
    ) async throws -> [DBusValue] {
        let actions = ledger.withLock { $0.handle(.callArrived) }
        if actions.contains(.refuseStopping) { throw Self.stopping }
        defer { leave() }
        if !checked {
            try await checkCaller(message.sender)
            await adopted()
        }
        return try await body()
    }

    /// The end of a call ``run(_:checked:_:)`` (or a schedule's fire) counted.
    func leave() {
        perform(ledger.withLock { $0.handle(.callAnswered(now: now())) })
    }

    /// The session bus is per user, but any process that reaches it could call: only this user's may.
    private func checkCaller(_ sender: String?) async throws {
        guard let sender else { throw Self.denied("no sender") }
        if let known = ledger.withLock({ $0.caller(sender) }) {
            if known { return }
            throw Self.denied(sender)
        }
        let uid = try await connection.bus.connectionUnixUser(of: sender)
        let same = uid == getuid()
        ledger.withLock { $0.checked(sender, sameUser: same) }
        if !same { throw Self.denied("\(sender) (uid \(uid))") }
    }

    private static func denied(_ who: String) -> DBusError {
        DBusError(
            name: AgentInterface.ErrorName.accessDenied, message: "only uid \(getuid()) may use this agent, not \(who)")
    }

    /// Returns once the saved toasts are adopted (at once after): a `Wait` or `Present` for an adopted toast finds it.
    func adopted() async {
        await waiters.wait { waiter in perform(ledger.withLock { $0.handle(.awaitAdoption(waiter: waiter)) }) }
    }
}

extension ToastAgent {
    /// Takes `org.toastkit.Agent1` with `flags`: whether this agent owns it now.
    ///
    /// A process killed a moment ago may still own the name: the bus frees it only once it sees the dead process's
    /// socket close, and the agent's keeper starts the next agent at once. So when the owner's process is gone (or a
    /// zombie), the name is asked for again once the bus has freed it (within `limit`); a live owner keeps it.
    static func takeName(
        on connection: DBusConnection, flags: NameRequestFlags, limit: Duration = .seconds(10)
    ) async throws -> Bool {
        let name = AgentInterface.busName
        let changes = try await connection.bus.nameOwnerChanges(of: name)
        defer { changes.cancel() }
        var reply = try await connection.bus.requestName(name, flags: flags)
        if reply == .exists, try await ownerIsDead(on: connection) {
            // Freed (or taken by a live agent meanwhile): the bus has settled who owns it.
            await FirstOf.wait(
                for: {
                    do {
                        for try await _ in changes { return }
                    } catch {}
                }, orAfter: limit)
            reply = try await connection.bus.requestName(name, flags: flags)
        }
        return reply == .primaryOwner || reply == .alreadyOwner
    }

    /// Whether the process that owns the agent's name has died (or the name has no owner any more).
    private static func ownerIsDead(on connection: DBusConnection) async throws -> Bool {
        guard let owner = try await connection.bus.nameOwner(of: AgentInterface.busName) else { return true }
        // Not answered: the owner's connection is gone already (the bus freed the name after it told its owner).
        guard
            let pid = try? await connection.call(
                .bus("GetConnectionUnixProcessID", [.string(owner)]), timeout: .seconds(10)
            ).arguments("u")[0].uint32Value
        else { return true }
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT }
        defer { Glibc.close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 512)
        let count = read(descriptor, &bytes, bytes.count)
        return count > 0 && isEnding(stat: bytes[..<count])
    }

    /// Whether a `/proc/PID/stat` line says its process is gone or going: a zombie or dead (`Z`, `X`), or still
    /// exiting (PF_EXITING, 0x4). A SIGKILLed agent has closed its files — its keeper's pipe, so the keeper starts the
    /// next agent at once — before it is a zombie, and the bus may not have freed its name yet. A line that cannot be
    /// read says nothing (false).
    package static func isEnding(stat bytes: ArraySlice<UInt8>) -> Bool {
        // `pid (comm) S ppid pgrp session tty tpgid flags …`: the fields follow the last parenthesis.
        guard let end = bytes.lastIndex(of: UInt8(ascii: ")")), end + 2 < bytes.endIndex else { return false }
        let fields = bytes[(end + 2)...].split(separator: UInt8(ascii: " "))
        if let state = fields.first?.first, state == UInt8(ascii: "Z") || state == UInt8(ascii: "X") { return true }
        guard fields.count > 6, let flags = UInt64(String(decoding: fields[6], as: UTF8.self)) else { return false }
        return flags & 0x4 != 0
    }
}
