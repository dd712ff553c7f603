import DBus
import Foundation
import TestSupport
import Testing
import ToastKitAgent

/// An empty icon never costs the toast (issue 43): `-i ""` is sent as notify-send sends it — no icon — on every path:
/// `toastkit send` directly and through the agent, and toastkit called as notify-send or dunstify.
@Suite(.timeLimit(.minutes(3))) struct EmptyIconTests {
    /// The line of the issue: a script whose icon variable was empty.
    private let argv = ["-p", "Now Playing", "Portishead - Roads", "-i", ""]

    @Test func sendShowsTheToastWithoutAnIconAndSaysSo() async throws {
        try await withFakeServer { environment, server in
            let run = try await toastkit(["send"] + argv, environment: environment.environment)
            #expect(run.status == 0, "\(run.error)")
            #expect(run.error == "toastkit: warning: -i/--icon: the icon is empty; the toast is shown without one\n")
            let notification = try #require(server.notifications.last)
            #expect(run.output == "\(notification.id)\n", "-p prints the server's id")
            #expect(notification.summary == "Now Playing")
            #expect(notification.body == "Portishead - Roads")
            #expect(notification.appIcon == "", "no icon, as notify-send sends it")
            #expect(notification.hints["image-path"] == nil)
        }
    }

    @Test func throughTheAgentTheToastIsShownWithoutAnIcon() async throws {
        try await withFakeServer { environment, server in
            let (run, shown) = try await environment.sendThroughRunningAgent(
                ["--id", "song"] + argv, summary: "Now Playing", server: server)
            #expect(run.status == 0, "\(run.error)")
            #expect(shown.body == "Portishead - Roads")
            #expect(shown.appIcon == "")
            #expect(shown.hints["image-path"] == nil)
        }
    }

    /// notify-send 0.8.1 and dunstify 1.9 send the toast without an icon (`app_icon` ""); toastkit called by their
    /// names sends the same, prints the same id and exits 0, and `toastkit send` sends it too (with its own app name).
    @Test func asNotifySendAndDunstifyTheServerGetsWhatTheRealToolsSend() async throws {
        let links = try ToolLinks()
        defer { links.remove() }
        for tool in ["notify-send", "dunstify"] {
            let line = CorpusLine(tool: tool, argv: argv, source: "issue 43")
            let real = try await CorpusRun.run(line, executable: try Tools.require(tool, package: line.package))
            #expect(real.status == 0)
            #expect(real.notifies.count == 1 && real.notifies[0].contains("app_icon='' "), "\(real.notifies)")
            let ours = try await CorpusRun.run(line, executable: links.path(of: tool))
            #expect(real == ours, "\(line.label)\n\(CorpusRun.explain(real: real, ours: ours, tool: tool))")
            guard tool == "notify-send" else { continue }
            var send = line
            send.argv = ["send"] + argv
            let sent = try await CorpusRun.run(send, executable: ToolProcess.binary)
            let expected = real.asToastkitSend(line)
            #expect(
                expected.notifies == CorpusRun.withoutTakeOvers(sent.notifies) && sent.status == 0,
                "\(CorpusRun.explain(real: expected, ours: sent, tool: "notify-send (toastkit's rules)"))")
        }
    }
}
