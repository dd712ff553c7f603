// End to end, the built toastkit against a recording server and against the real notify-send and dunstify: an empty
// value of an option that only decorates the toast never costs the toast (issue 43).
import DBus
import Foundation
import TestSupport
import Testing
import ToastKitAgent

/// A script whose variables for the status, the sound, the language, the category, an image hint and the icon were
/// all left empty still gets its toast: exit 0, the text on the server, none of the empty decorations sent, one
/// warning per decoration the person asked to see — directly and through the agent — and, called as notify-send or
/// dunstify, exactly what the real tools send.
@Suite(.timeLimit(.minutes(3))) struct EmptyValueTests {
    /// The empty options, then the issue's text.
    private let argv = [
        "-s", "", "--sound", "", "--lang", "", "-c", "", "-h", "string:image-path:", "-h", "string:sound-name:", "-i",
        "",
        "-p", "Now Playing", "Portishead - Roads",
    ]

    /// What stderr says: one line for each decoration that is missing from the toast.
    private let warnings = """
        toastkit: warning: -s/--status: the status is empty; the toast is shown without one
        toastkit: warning: --sound: the sound is empty; the toast is shown without one
        toastkit: warning: --lang: the language is empty; the locale's labels are used
        toastkit: warning: -i/--icon: the icon is empty; the toast is shown without one

        """

    /// The hints an empty decoration would have sent.
    private let decorations = ["category", "image-path", "image-data", "sound-name", "sound-file", "suppress-sound"]

    @Test func sendShowsTheToastWithoutItsEmptyDecorations() async throws {
        try await withFakeServer { environment, server in
            let run = try await toastkit(["send"] + argv, environment: environment.environment)
            #expect(run.status == 0, "\(run.error)")
            #expect(run.error == warnings)
            let notification = try #require(server.notifications.last)
            #expect(run.output == "\(notification.id)\n", "-p prints the server's id")
            #expect(notification.summary == "Now Playing")
            #expect(notification.body == "Portishead - Roads")
            #expect(notification.appIcon == "")
            #expect(notification.hints["urgency"] == .byte(1), "no status: normal urgency")
            #expect(!decorations.contains { notification.hints[$0] != nil }, "\(notification.hints)")
        }
    }

    @Test func throughTheAgentTheToastIsShownWithoutThem() async throws {
        try await withFakeServer { environment, server in
            let (run, shown) = try await environment.sendThroughRunningAgent(
                ["--id", "song"] + argv, summary: "Now Playing", server: server)
            #expect(run.status == 0, "\(run.error)")
            #expect(run.error == warnings)
            #expect(shown.body == "Portishead - Roads")
            #expect(shown.appIcon == "")
            #expect(!decorations.contains { shown.hints[$0] != nil }, "\(shown.hints)")
        }
    }

    /// notify-send 0.8.1 sends no category, image-path or sound-name for empty values, dunstify 1.9 no icon for
    /// `--icon=` (and drops the empty hint with a warning): toastkit by their names sends the same, prints the same
    /// and exits the same; `toastkit send` on the notify-send line sends what notify-send sends (with its own rules).
    @Test func asNotifySendAndDunstifyTheServerGetsWhatTheRealToolsSend() async throws {
        let links = try ToolLinks()
        defer { links.remove() }
        let text = ["-p", "Now Playing", "Portishead - Roads"]
        let lines = [
            CorpusLine(
                tool: "notify-send",
                argv: ["-c", "", "-h", "string:image-path:", "-h", "string:sound-name:", "--icon="] + text,
                source: "issue 43"),
            CorpusLine(tool: "dunstify", argv: ["--icon=", "-h", "string:image-path:"] + text, source: "issue 43"),
        ]
        for line in lines {
            let real = try await CorpusRun.run(line, executable: try Tools.require(line.tool, package: line.package))
            #expect(real.status == 0)
            #expect(real.notifies.count == 1 && real.notifies[0].contains("app_icon='' "), "\(real.notifies)")
            #expect(!real.notifies.joined().contains("category") && !real.notifies.joined().contains("image-path"))
            let ours = try await CorpusRun.run(line, executable: links.path(of: line.tool))
            #expect(real == ours, "\(line.label)\n\(CorpusRun.explain(real: real, ours: ours, tool: line.tool))")
            guard line.tool == "notify-send" else { continue }
            var send = line
            send.argv = ["send"] + line.argv
            let sent = try await CorpusRun.run(send, executable: ToolProcess.binary)
            let expected = real.asToastkitSend(line)
            #expect(
                expected.notifies == CorpusRun.withoutTakeOvers(sent.notifies) && sent.status == 0,
                "\(CorpusRun.explain(real: expected, ours: sent, tool: "notify-send (toastkit's rules)"))")
        }
    }
}
