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

    /// `toastkit progress`: the steps of standard input on one notification, then the final toast (the last
    /// message, no bar), as dunst receives them; a line that is not a step is skipped with a warning.
    @Test func theProgressCommandStepsOneToastAndEndsItAsANormalToast() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let input = "10\n\n50 Copiando 6 de 12\nmucho\n100 Copiadas\n"
            let run = try await toastkit(
                ["progress", "--id", "copia", "-d", "30", "Copiando", "12 fotos"], environment: desktop.toolEnvironment,
                stdin: Array(input.utf8))
            #expect(run.status == 0, "\(run.error)")
            #expect(
                run.error.contains(
                    "warning: progress: line 4: \"mucho\" is not a percentage from 0 to 100 or indeterminate; skipped"),
                "\(run.error)")
            // Every Notify until the final toast's: the first one's notification, replaced in place.
            var calls: [(NotifyCall, UInt32)] = []
            while calls.last.map({ $0.0.hints["value"] != nil || $0.0.body != "Copiadas" }) ?? true {
                calls.append(try await watcher.nextNotifyAndReply())
            }
            let first = try #require(calls.first)
            #expect(first.0.hints["value"] == .int32(100), "the newest step, shown at once")
            #expect(first.0.summary == "Copiando" && first.0.body == "Copiadas")
            for (call, id) in calls.dropFirst() {
                #expect(call.replacesID == first.1 && id == first.1, "one notification, replaced in place")
            }
            #expect(try await desktop.displayedCount() == 1)
        }
    }

    @Test func theStepsOfStandardInput() {
        #expect(ProgressCommand.step(of: "40") == .success(.init(progress: .fraction(0.4), message: nil)))
        #expect(
            ProgressCommand.step(of: "  12.5%   Copiando  6 de 12  ")
                == .success(.init(progress: .fraction(0.125), message: "Copiando  6 de 12")))
        #expect(
            ProgressCommand.step(of: "indeterminate Buscando")
                == .success(.init(progress: .indeterminate, message: "Buscando")))
        #expect(ProgressCommand.step(of: " \t ") == .success(nil))
        #expect(ProgressCommand.step(of: "101 demasiado") == .failure(.init(word: "101")))
        #expect(ProgressCommand.step(of: "Copiando") == .failure(.init(word: "Copiando")))
    }

    @Test func whatTheProgressCommandRefuses() {
        for arguments in [
            ["progress", "--progress", "40", "x"], ["progress", "--wait", "x"], ["progress", "-A", "ok=OK", "x"],
            ["progress", "--in", "5m", "x"], ["progress", "x", "-"],
        ] {
            #expect(throws: CommandFailure.self, "\(arguments)") { try CommandLineParser.parse(arguments) }
        }
        #expect(throws: Never.self) {
            try CommandLineParser.parse(["progress", "-A", "ok=OK", "--on-action", "ok=true", "x"])
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
