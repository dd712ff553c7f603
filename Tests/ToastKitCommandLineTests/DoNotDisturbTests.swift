import DBus
import Foundation
import TestSupport
import Testing

@testable import ToastKitCommandLine

/// Do Not Disturb (issue 21 §3) end to end on dunst, whose pause is its Do Not Disturb (`dunstctl set-paused`):
/// `toastkit send` holds a toast until it ends (`--dnd hold`, the default), drops it (`--dnd drop`, exit 6) or sends it
/// anyway (`--dnd show`), and says so with the `suppressed` event; notify-send and dunstify send as they always did.
/// What reaches dunst is read on the bus and in dunst's own queue of held notifications (`dunstctl count waiting`).
@Suite(.timeLimit(.minutes(2))) struct DoNotDisturbTests {
    private static let source = #""source":"dunst: org.dunstproject.cmd0.paused""#

    private func waiting(_ desktop: NotificationEnvironment) async throws -> String {
        try await desktop.dunstctl("count", "waiting").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The direct path: the waiting `send` holds the toast in its own center and shows it, with its whole duration,
    /// when Do Not Disturb ends.
    @Test func aWaitingSendHoldsTheToastUntilDoNotDisturbEnds() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            _ = try await desktop.dunstctl("set-paused", "true")
            let send = try ToolProcess.start(
                ["send", "--wait", "--json", "-d", "2", "--id", "held", "Hola", "mundo"].map { Array($0.utf8) },
                environment: desktop.toolEnvironment)
            let held = await send.nextLine()
            #expect(held.hasPrefix(#"{"event":"suppressed","id":"held","server_id":null,"how":"held","#), "\(held)")
            #expect(held.contains(Self.source), "\(held)")
            #expect(
                await send.nextErrorLine()
                    == "toastkit: note: Do Not Disturb is on (dunst: org.dunstproject.cmd0.paused): the toast waits "
                    + "until it ends")
            #expect(try await waiting(desktop) == "0", "nothing reached dunst while it is paused")
            // The held send does not keep the --id store locked: another send --id goes through meanwhile.
            let other = try await toastkit(
                ["send", "--id", "other", "--dnd", "show", "-p", "Otra"], environment: desktop.toolEnvironment)
            #expect(other.status == 0, "\(other.error)")
            let (otherNotify, _) = try await watcher.nextNotifyAndReply()
            #expect(otherNotify.summary == "Otra")
            _ = try await desktop.dunstctl("set-paused", "false")
            let (notify, id) = try await watcher.nextNotifyAndReply()
            #expect(notify.summary == "Hola" && notify.expireTimeout == 2000, "its whole duration, from now")
            #expect(await send.nextLine() == #"{"event":"presented","id":"held","server_id":\#(id)}"#)
            let end = await send.finish()
            #expect(end.status == 3, "\(end.error)")
            #expect(end.output == #"{"event":"closed","id":"held","server_id":\#(id),"reason":"expired"}"# + "\n")
        }
    }

    @Test func dropEndsTheToastWithExitSixAndShowSendsItAnyway() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let env = desktop.toolEnvironment
            _ = try await desktop.dunstctl("set-paused", "true")
            // Waiting, and not (a process that exits at once: its check is its own).
            for wait in [["--wait"], []] {
                let dropped = try await toastkit(
                    ["send", "--json", "--dnd", "drop", "--id", "copied", "Copiado"] + wait, environment: env)
                #expect(dropped.status == 6, "\(wait): \(dropped.error)")
                #expect(dropped.lines.first?.contains(#""id":"copied""#) == true, "\(dropped.output)")
                #expect(dropped.lines.first?.contains(#""how":"dropped""#) == true, "\(dropped.output)")
                #expect(dropped.error.contains("the toast was dropped (--dnd drop)"), "\(dropped.error)")
            }
            #expect(try await waiting(desktop) == "0")
            // show: dunst gets it now, and holds it itself (its pause holds critical toasts too).
            let shown = try await toastkit(["send", "--dnd", "show", "-p", "Urgente"], environment: env)
            #expect(shown.status == 0, "\(shown.error)")
            let (notify, id) = try await watcher.nextNotifyAndReply()
            #expect(notify.summary == "Urgente" && shown.output == "\(id)\n")
            #expect(
                shown.error.contains("the toast was sent to the server anyway; dunst holds toasts"), "\(shown.error)")
            #expect(try await waiting(desktop) == "1")
            _ = try await desktop.dunstctl("set-paused", "false")
        }
    }

    /// Through the agent: `send` returns at once with the toast held there, after the script is gone the agent
    /// shows it when Do Not Disturb ends; a dropped one ends with exit 6, said by the agent.
    @Test func theAgentHoldsTheToastAfterTheScriptExited() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let env = desktop.agentEnvironment
            _ = try await desktop.dunstctl("set-paused", "true")
            let held = try await toastkit(["send", "--json", "-d", "30", "--id", "later", "Luego"], environment: env)
            #expect(held.status == 0, "\(held.error)\n\(desktop.agentFiles)")
            #expect(
                held.output.hasPrefix(#"{"event":"suppressed","id":"later","server_id":null,"how":"held","#),
                "\(held.output)")
            let list = try await toastkit(["list"], environment: env)
            #expect(list.lines.first?.hasPrefix("later\t") == true, "\(list.output)")
            let dropped = try await toastkit(["send", "--dnd", "drop", "Efímero"], environment: env)
            #expect(dropped.status == 6, "\(dropped.error)")
            #expect(try await waiting(desktop) == "0")
            _ = try await desktop.dunstctl("set-paused", "false")
            let (notify, _) = try await watcher.nextNotifyAndReply()
            #expect(notify.summary == "Luego" && notify.expireTimeout == 30000)
        }
    }

    /// notify-send and dunstify hand every notification to the server whatever its state, and so does toastkit in
    /// their place: the scripts' output and exit status do not change.
    @Test func theDropInToolsSendAsTheyAlwaysDid() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, watcher in
            let links = try ToolLinks()
            defer { links.remove() }
            _ = try await desktop.dunstctl("set-paused", "true")
            for tool in ["notify-send", "dunstify"] {
                let run = try ToolProcess.start(
                    [Array("-p".utf8), Array("\(tool) en pausa".utf8)], environment: desktop.agentEnvironment,
                    executable: links.path(of: tool))
                let result = await run.finish()
                let (notify, id) = try await watcher.nextNotifyAndReply()
                #expect(notify.summary == "\(tool) en pausa")
                #expect(result.status == 0 && result.output == "\(id)\n" && result.error.isEmpty, "\(result.error)")
            }
            #expect(try await waiting(desktop) == "2")
            _ = try await desktop.dunstctl("set-paused", "false")
        }
    }
}
