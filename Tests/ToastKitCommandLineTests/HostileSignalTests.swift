import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// A stranger on the bus cannot make a waiting `toastkit send` pay for its messages (issue 12 item 10): incoming
/// messages are matched on their header — sender (the owner of the well-known name), path, interface, member —
/// before their bodies are decoded, and what no handler wants is dropped undecoded.
@Suite(.timeLimit(.minutes(1))) struct HostileSignalTests {
    /// 24 MiB per look-alike signal, sent straight to the tool's connection.
    static let size = 24 * 1024 * 1024

    @Test func aStrangersHugeSignalsCostABoundedPeak() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let server = try await FakeNotificationServer.start(on: environment.bus)
        defer { server.stop() }
        let stranger = try await environment.bus.connect()
        defer { stranger.close() }

        // The tool's own peak, as GNU time reads it from a child it forks (``PeakMemory``).
        let peakMemory = try PeakMemory(file: "\(environment.directory)/peak-kib")
        let process = try ToolProcess.start(
            (peakMemory.arguments + [ToolProcess.binary]
                + ["send", "--wait", "--json", "-d", "indefinite", "Esperando"]).map { Array($0.utf8) },
            environment: environment.environment, executable: peakMemory.time)
        let notification = try await server.nextNotification()
        _ = await process.nextLine()  // presented: its subscription is in place
        let tool = try BusName(validating: notification.sender)

        // Shaped like the server's signals, on its path and interface, but from another connection: unicast to
        // the tool, in three forms (a forged ActionInvoked with a huge key, three million tiny strings, a byte array).
        let forged: [(MemberName, [DBusValue])] = [
            ("ActionInvoked", [.uint32(notification.id), .string(String(repeating: "k", count: Self.size))]),
            // One-letter strings: 8 bytes each on the wire, tens of bytes each as decoded values.
            ("NotificationClosed", [.strings(Array(repeating: "x", count: Self.size / 8 - 16))]),
            ("ActivationToken", [.bytes(Array(repeating: 7, count: Self.size))]),
        ]
        for (member, body) in forged {
            try stranger.emitSignal(
                path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications", member: member,
                arguments: body, destination: tool)
        }
        // The real server's signal comes after them on the bus; once the tool acts on it, it has read them all.
        try server.emitActionInvoked(id: notification.id, key: "default")
        try server.emitClosed(id: notification.id, reason: 2)
        let result = await process.finish()
        #expect(result.status == 2, "dismissed by the real server: \(result.error)")
        #expect(!result.output.contains("\"action\""), "the forged action changed nothing: \(result.output)")
        // The three messages alone are 72 MiB on the wire; libdbus holds one at a time while reading it. Decoding
        // them would have cost several times that (one Swift value per string: over 1 GiB before the fix).
        let peak = try peakMemory.kibibytes / 1024
        #expect(peak < 120, "peak RSS \(peak) MiB for three 24 MiB signals from a stranger")
    }
}
