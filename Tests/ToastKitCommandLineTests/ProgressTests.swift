import DBus
import Foundation
import TestSupport
import Testing
import ToastKit

@testable import ToastKitCommandLine

/// `send --progress` (issue 21 §1, first step): the `value` hint on dunst, a text bar on GNOME Shell, as the real
/// servers receive them.
@Suite(.timeLimit(.minutes(2))) struct ProgressTests {
    @Test func onDunstProgressIsTheValueHint() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let run = try await toastkit(
                ["send", "--progress", "40", "-d", "30", "Copiando", "12 fotos"], environment: desktop.toolEnvironment)
            #expect(run.status == 0 && run.error.isEmpty, "\(run.error)")
            let (notify, _) = try await watcher.nextNotifyAndReply()
            #expect(notify.hints["value"] == .int32(40))
            #expect(notify.body == "12 fotos")
            let under = try await toastkit(
                ["send", "--progress", "indeterminate", "Buscando"], environment: desktop.toolEnvironment)
            #expect(under.status == 0)
            let (searching, _) = try await watcher.nextNotifyAndReply()
            #expect(searching.hints["value"] == nil && searching.body == "…")
        }
    }

    @Test func onGNOMEProgressIsATextBar() async throws {
        try await NotificationEnvironment.withWatched(.gnomeShell) { desktop, watcher in
            let run = try await toastkit(
                ["send", "--progress", "75%", "-d", "30", "Copiando", "12 fotos"], environment: desktop.toolEnvironment)
            #expect(run.status == 0, "\(run.error)")
            #expect(
                run.error.contains("the server draws no progress bar: shown as text in the message"), "\(run.error)")
            let (notify, _) = try await watcher.nextNotifyAndReply()
            #expect(notify.hints["value"] == nil)
            #expect(notify.body == "12 fotos\n▰▰▰▰▰▰▰▱▱▱ 75 %")
            try await desktop.clear()
        }
    }

    @Test func whatProgressTakes() throws {
        func progress(_ value: String) throws -> ToastProgress? {
            guard case .send(let options) = try CommandLineParser.parse(["send", "--progress", value, "x"]) else {
                return nil
            }
            return options.progress
        }
        #expect(try progress("40") == .fraction(0.4))
        #expect(try progress("12.5%") == .fraction(0.125))
        #expect(try progress("-") == .indeterminate)
        for bad in ["101", "-1", "mucho", "nan"] {
            #expect(throws: CommandFailure.self) { try progress(bad) }
        }
    }
}
