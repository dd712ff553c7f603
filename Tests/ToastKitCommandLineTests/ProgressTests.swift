import DBus
import Foundation
import Glibc
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

    /// Plasma's notifications draw no bar; its job service does, for a process that stays (a view ends as a failed
    /// job when its connection leaves). So `send` leaves even the first step to the agent, which it starts (shown by
    /// `send` itself, it would be a notification with a text bar, closed again at once for the view); the agent draws
    /// the toast in a job view; the next steps update the view in place; the toast without progress ends the view
    /// without a word and is a notification of its own. (`toastkit progress` sends its steps this way.)
    @Test func onPlasmaTheAgentDrawsTheStepsInAJobView() async throws {
        try await NotificationEnvironment.withWatched(.plasma) { desktop, watcher in
            let env = desktop.agentEnvironment
            func send(_ arguments: [String]) async throws {
                let run = try await toastkit(["send", "--id", "copia", "-d", "60"] + arguments, environment: env)
                #expect(run.status == 0, "\(arguments): \(run.error)")
            }
            try await send(["--progress", "20", "Copiando", "12 fotos"])
            let (content, path) = try await watcher.nextJobView()
            let asked = String(describing: content)
            for expected in ["\"Copiando\"", "\"12 fotos\"", "uint32(20)", "\"toastkit\""] {
                #expect(asked.contains(expected), "\(expected) in \(asked)")
            }

            try await send(["--progress", "60", "Copiando", "7 de 12"])
            try await send(["--progress", "90", "Copiando", "11 de 12"])
            // The steps may merge (one update at most every 25 ms): the last one always goes.
            _ = try await watcher.nextJobViewCall("update", of: path) {
                let update = String(describing: $0)
                return update.contains("uint32(90)") && update.contains("11 de 12")
            }

            try await send(["Copiadas", "12 fotos"])
            #expect(try await watcher.nextJobViewCall("terminate", of: path).first == .uint32(1), "without a word")
            let (done, doneID) = try await watcher.nextNotifyAndReply()
            #expect(done.replacesID == 0 && done.summary == "Copiadas" && done.body == "12 fotos")
            #expect(try await toastkit(["close", "--id", "copia"], environment: env).status == 0)
            #expect(try await watcher.nextClose(of: doneID) == doneID)
            #expect(
                watcher.seen { $0.kind == .methodCall && $0.member == "Notify" }.count == 0,
                "no notification before the end's")
        }
    }

    /// The idiom of `notify-send -p` / `-r` with a progress: a job view has no notification id, so the agent gives
    /// the toast a number of its own (from 2³⁰ up); `send -p` prints it, `-r` with it updates the one view, never a
    /// new one, and prints it again.
    @Test func onPlasmaReplacingByThePrintedIDUpdatesTheOneView() async throws {
        try await NotificationEnvironment.withWatched(.plasma) { desktop, watcher in
            let env = desktop.agentEnvironment
            let first = try await toastkit(
                ["send", "-p", "-d", "60", "--progress", "10", "Copiando"], environment: env)
            let printed = first.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let id = try #require(UInt32(printed), "\(first.output)\(first.error)")
            #expect(id >= 1 << 30, "the agent's own number: \(id)")
            let (_, path) = try await watcher.nextJobView()
            for percent in [50, 80] {
                let step = try await toastkit(
                    ["send", "-p", "-r", "\(id)", "-d", "60", "--progress", "\(percent)", "Copiando"], environment: env)
                #expect(step.output == "\(id)\n", "the same id for the next step: \(step.output)\(step.error)")
                _ = try await watcher.nextJobViewCall("update", of: path) {
                    String(describing: $0).contains("uint32(\(percent))")
                }
            }
            #expect(watcher.seen { $0.kind == .methodCall && $0.member == "requestView" }.isEmpty, "one view")
        }
    }

    /// An agent that stops with a job view open (SIGTERM: its toasts are saved for the next one) ends the view
    /// before it exits — left open, Plasma shows it as a failed job, "Application closed unexpectedly" — and the next
    /// agent draws the saved toast in a view of its own.
    @Test func onPlasmaAStoppedAgentEndsItsJobViewAndTheNextDrawsItAgain() async throws {
        try await NotificationEnvironment.withWatched(.plasma) { desktop, watcher in
            let env = desktop.agentEnvironment
            let run = try await toastkit(
                ["send", "--id", "copia", "-d", "300", "--progress", "30", "Copiando", "12 fotos"], environment: env)
            #expect(run.status == 0, "\(run.error)")
            let (_, path) = try await watcher.nextJobView()

            let bus = try await desktop.bus.connect()
            defer { bus.close() }
            let pid = try await bus.agentPID()
            kill(pid, SIGTERM)
            #expect(try await watcher.nextJobViewCall("terminate", of: path).first == .uint32(1), "ended, not failed")
            #expect(try await processEnds(pid, within: 30), "the agent exits")

            // The next command starts the next agent, which adopts the saved toast before it answers.
            let waiting = try ToolProcess.start(
                ["wait", "--id", "copia", "--json"].map { Array($0.utf8) }, environment: env)
            let (content, again) = try await watcher.nextJobView()
            #expect(again != path && String(describing: content).contains("uint32(30)"), "\(content)")
            #expect(try await toastkit(["close", "--id", "copia"], environment: env).status == 0)
            #expect(try await watcher.nextJobViewCall("terminate", of: again).first == .uint32(1))
            let wait = await waiting.finish()
            #expect(wait.status == 4 && wait.output.contains(#""reason":"closed""#), "\(wait.output)\(wait.error)")
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
