// A script that updates one toast through the agent, `send --id` after `send --id` (a status line, a counter): each
// `send` is answered with the notification it updates, even when the update waits for the toast's update interval
// (it is not held to the server's pace), and the newest content reaches the server, in place.
import DBus
import Foundation
import Glibc
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(2))) struct AgentUpdateTests {
    @Test func aLoopOfUpdatesIsAnsweredWithItsNotificationAndTheNewestIsShown() async throws {
        try await withFakeServer { environment, server in
            let env = environment.agentEnvironment
            let first = try await toastkit(["send", "-p", "--id", "estado", "-d", "300", "Paso 0"], environment: env)
            #expect(first.status == 0 && first.error.isEmpty, "\(first.error)")
            let shown = try await server.nextNotification(summary: "Paso 0")
            #expect(first.output == "\(shown.id)\n")
            for step in 1...6 {
                let update = try await toastkit(
                    ["send", "-p", "--id", "estado", "-d", "300", "Paso \(step)"], environment: env)
                #expect(update.status == 0 && update.error.isEmpty, "step \(step): \(update.error)")
                #expect(update.output == "\(shown.id)\n", "step \(step) names the notification it updates")
            }
            // The newest content is on the server, in the one notification (updates that came within the interval
            // merged into it).
            let newest = try await server.nextNotification(summary: "Paso 6")
            #expect(newest.id == shown.id && newest.replacesID == shown.id)
            #expect(server.liveIDs == [shown.id], "one notification: \(server.liveIDs)")
            let list = try await toastkit(["list"], environment: env)
            #expect(list.lines.first?.hasPrefix("estado\tfront\t") == true, "\(list.output)")
            #expect(list.lines.first?.hasSuffix("\tPaso 6") == true, "\(list.output)")
        }
    }
}
