// The reply prompt's program, run for real: its text comes when it exits even if a child of its own still holds its
// output, and a prompt closed by the center (its task cancelled) closes the program and everything it started.
import Foundation
import Glibc
import TestSupport
import Testing
import ToastModel

@testable import FreedesktopNotifications

@Suite("Reply prompt programs")
struct ReplyPrompterTests {
    private let prompt = ToastReplyPrompt(
        toastID: "M", title: "Ana", message: "¿Comemos?", actionTitle: "Responder", field: ToastReplyField())

    /// A folder with a FIFO the prompt's script reports to.
    private func fifo() throws -> (folder: String, fifo: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-prompt-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let fifo = "\(folder)/pids"
        #expect(mkfifo(fifo, 0o600) == 0)
        return (folder, fifo)
    }

    @Test func theTextComesWhenTheProgramExitsEvenIfItsChildHoldsTheOutput() async throws {
        let (folder, fifo) = try fifo()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The background sleep keeps the pipe open for an hour; the text is the program's all the same.
        let prompter = ReplyPrompter.command(["/bin/sh", "-c", "sleep 3600 & echo $! > \(fifo); echo Voy"])
        async let leftover = firstLine(ofFIFO: fifo, within: 30)
        let result = try await Deadline.run(within: .seconds(60), "the prompt's answer") {
            await prompter.prompt(prompt, environment: ["PATH": "/usr/bin:/bin"])
        }
        #expect(result == .text("Voy"))
        let pid = try #require(Int32(try await leftover))
        kill(pid, SIGKILL)
    }

    @Test(arguments: [
        ("a program that ends on SIGTERM", ""),
        ("a program that ignores SIGTERM (SIGKILL a second later)", "trap '' TERM; "),
    ])
    func aClosedPromptClosesTheProgramAndWhatItStarted(_ kind: String, _ preamble: String) async throws {
        let (folder, fifo) = try fifo()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let prompter = ReplyPrompter.command([
            "/bin/sh", "-c", "\(preamble)sleep 3600 & echo \"$$ $!\" > \(fifo); wait; echo tarde",
        ])
        let asking = Task { await prompter.prompt(prompt, environment: ["PATH": "/usr/bin:/bin"]) }
        let pids = try await firstLine(ofFIFO: fifo, within: 30).split(separator: " ").compactMap { Int32($0) }
        try #require(pids.count == 2, "the prompt's script did not start (\(kind))")
        asking.cancel()
        #expect(await asking.value == .cancelled, "\(kind)")
        #expect(try await processEnds(pids[0], within: 30), "the prompt program \(pids[0]) is still there (\(kind))")
        #expect(
            try await processEnds(pids[1], within: 30), "the prompt program's child \(pids[1]) is still there (\(kind))"
        )
    }

    @Test func aPromptClosedBeforeItsProgramStartsStartsNothing() async {
        let asking = Task {
            // Cancelled before it runs: withTaskCancellationHandler closes the prompt at once.
            withUnsafeCurrentTask { $0?.cancel() }
            return await ReplyPrompter.command(["/bin/sh", "-c", "echo Voy"]).prompt(prompt, environment: [:])
        }
        #expect(await asking.value == .cancelled)
    }
}
