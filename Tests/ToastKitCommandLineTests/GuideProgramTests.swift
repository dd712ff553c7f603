import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// The getting-started guide's programs (`Sources/GuideExamples`, the guide's text) as short-lived processes on
/// dunst: the first one's toast reaches the server before it exits, and the one that waits for an action leaves
/// nothing on screen when it exits (its close was answered before `presentAndWait` returned).
@Suite(.timeLimit(.minutes(1))) struct GuideProgramTests {
    private static let binary = ToolProcess.builtExecutable("GuideExamples")

    private func run(_ program: String, _ desktop: NotificationEnvironment) throws -> ToolProcess {
        try ToolProcess.start([Array(program.utf8)], environment: desktop.toolEnvironment, executable: Self.binary)
    }

    @Test func theFirstProgramsToastReachesTheServerBeforeItExits() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let process = try run("first", desktop)
            let (notify, _) = try await watcher.nextNotifyAndReply()
            #expect(notify.summary == "Copia terminada")
            #expect(notify.body == "Se copiaron 12 fotos.")
            let result = await process.finish()
            #expect(result.status == 0 && result.error.isEmpty, "\(result.status): \(result.error)")
        }
    }

    @Test(arguments: 1...3)
    func theProgramThatWaitsLeavesNothingOnScreenWhenItExits(_ round: Int) async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let process = try run("save", desktop)
            let (notify, serverID) = try await watcher.nextNotifyAndReply()
            #expect(notify.actionList == ["save", "Guardar", "dismiss", "Dismiss"])
            try await desktop.waitUntilDisplayed(1)
            try await desktop.invokeAction("save", serverID: serverID, actionKeys: ["save", "dismiss"])
            let result = await process.finish()
            #expect(result.status == 0 && result.output == "guardado\n", "\(result.output) \(result.error)")
            // dunst keeps a notification after an action: the program closed it, and exited only after that.
            #expect(try await desktop.totalCount() == 0, "round \(round): the toast outlived the program")
        }
    }
}
