import DBus
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

/// The built `toastkit` binary against dunst on a private bus (Xvfb), with a bus monitor reading every `Notify`.
@Suite(.timeLimit(.minutes(2))) struct DunstEndToEndTests {
    private func withDesktop(_ body: (NotificationEnvironment, BusWatcher) async throws -> Void) async throws {
        try await NotificationEnvironment.withWatched(.dunst, body)
    }

    @Test func everyFlagReachesTheServer() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.toolEnvironment
            let run = try await toastkit(
                [
                    "send", "-a", "backup", "-n", "drive-harddisk", "-s", "warning", "-i", "photo.on.rectangle",
                    "-u", "low", "-c", "transfer.complete", "-h", "int:x-count:5", "-h", "boolean:x-flag:true",
                    "-h", "double:x-ratio:1.5", "-h", "string:x-name:a:b", "-h", "byte:x-byte:0x05", "-h",
                    "variant:x-variant:<uint32 7>", "-e", "-d", "7", "-p", "Copia lista", "Tus fotos <están> a salvo",
                ], environment: env)
            #expect(run.status == 0, "\(run.error)")
            let (notify, id) = try await watcher.nextNotifyAndReply()
            #expect(run.output == "\(id)\n", "-p prints the server id")
            #expect(notify.appName == "backup")
            #expect(notify.appIcon == "drive-harddisk")
            #expect(notify.summary == "Copia lista")
            #expect(notify.body == "Tus fotos &lt;están> a salvo", "not a tag: kept valid for a body-markup server")
            #expect(notify.replacesID == 0)
            #expect(notify.expireTimeout == 7000)
            #expect(notify.hints["urgency"] == .byte(0), "-u low beats the warning status's urgency")
            #expect(notify.hints["category"] == .string("transfer.complete"))
            #expect(notify.hints["transient"] == .boolean(true))
            #expect(notify.hints["image-path"] == .string("image-x-generic"), "with -n, -i is the image")
            #expect(notify.hints["x-count"] == .int32(5))
            #expect(notify.hints["x-flag"] == .boolean(true))
            #expect(notify.hints["x-ratio"] == .double(1.5))
            #expect(notify.hints["x-name"] == .string("a:b"))
            #expect(notify.hints["x-byte"] == .byte(5))
            #expect(notify.hints["x-variant"] == .uint32(7))

            // -t in milliseconds, -r N, an icon file, the status's own decoration.
            let icon = "\(desktop.directory)/icon.png"
            _ = FileManager.default.createFile(atPath: icon, contents: Data([0x89, 0x50, 0x4E, 0x47]))
            let second = try await toastkit(
                ["send", "-t", "2500", "-r", "\(id)", "-i", icon, "-s", "error", "Otra"], environment: env)
            #expect(second.status == 0, "\(second.error)")
            let (replacing, sameID) = try await watcher.nextNotifyAndReply()
            #expect(replacing.replacesID == id)
            #expect(sameID == id)
            #expect(replacing.expireTimeout == 2500)
            #expect(replacing.appIcon == icon, "-i is the app icon, as libnotify sends it")
            #expect(replacing.hints["image-path"] == nil)
            #expect(replacing.hints["urgency"] == .byte(2))
            #expect(replacing.appName == "toastkit")

            let forever = try await toastkit(["send", "-t", "0", "--json", "Siempre"], environment: env)
            let (indefinite, foreverID) = try await watcher.nextNotifyAndReply()
            #expect(indefinite.expireTimeout == 0)
            let line = try #require(forever.lines.first)
            #expect(line.hasPrefix(#"{"event":"presented","id":"toastkit-"#))
            #expect(line.hasSuffix(#","server_id":\#(foreverID)}"#))
            #expect(forever.status == 0)
        }
    }

    @Test func replaceByIDAcrossTwoRunsLeavesOneNotification() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.toolEnvironment
            let first = try await toastkit(
                ["send", "--id", "sync", "-d", "indefinite", "Sincronizando…"], environment: env)
            #expect(first.status == 0, "\(first.error)")
            let (sending, id) = try await watcher.nextNotifyAndReply()
            #expect(sending.replacesID == 0)
            let second = try await toastkit(
                ["send", "--id", "sync", "-s", "success", "Sincronizado"], environment: env)
            #expect(second.status == 0, "\(second.error)")
            let (done, sameID) = try await watcher.nextNotifyAndReply()
            #expect(done.replacesID == id)
            #expect(sameID == id)
            #expect(done.summary == "Sincronizado")
            #expect(done.hints["image-path"] == .string("emblem-default"))
            #expect(try await desktop.totalCount() == 1)

            // close --id closes it on the server and forgets it.
            let close = try await toastkit(["close", "--id", "sync"], environment: env)
            #expect(close.status == 0, "\(close.error)")
            #expect(try await watcher.nextClose() == id)
            #expect(try await watcher.nextClosed(id) == 3)
            #expect(try await desktop.totalCount() == 0)
            let again = try await toastkit(["close", "--id", "sync"], environment: env)
            #expect(again.status == 65)
            #expect(
                again.error
                    == "toastkit: close --id sync: no toast with this id is known (it was not sent with --id, or was "
                    + "closed already)\n")
        }
    }

    @Test func waitPrintsTheInvokedActionAndExitsWithItsCode() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.toolEnvironment
            let process = try ToolProcess.start(
                [
                    "send", "--tap", "open=Abrir", "-A", "archive=Archivar", "-A", "later", "--confirm",
                    "archive=Archivado", "Mensaje de Ana",
                ].map {
                    Array($0.utf8)
                }, environment: env)
            let (notify, id) = try await watcher.nextNotifyAndReply()
            #expect(notify.actionList == ["default", "Abrir", "archive", "Archivar", "later", "Later"])
            try await desktop.waitUntilDisplayed(1)
            try desktop.chooseInContextMenu("\\[\(id),archive\\]$")
            try await desktop.dunstctl("context")
            #expect(await process.nextLine() == "archive")
            let (confirmation, confirmationID) = try await watcher.nextNotifyAndReply()
            #expect(confirmation.summary == "Archivado", "--confirm replaces the toast with its text")
            #expect(confirmation.replacesID == id && confirmationID == id)
            #expect(confirmation.hints["transient"] == .boolean(true))
            #expect(confirmation.actions.isEmpty)
            let result = await process.finish()
            #expect(result.status == 0, "\(result.error)")
            // The confirmation leaves after its time: the tool closes it, or dunst's own timer (sent the same time)
            // expires it first; either way it is gone, and not left for the next script.
            let reason = try await watcher.nextClosed(id)
            #expect(reason == 3 || reason == 1, "closed by the tool, or expired by dunst; not dismissed (2)")

            // --json: presented, then the action with its token (dunst sends none).
            let json = try ToolProcess.start(
                ["send", "--json", "--tap", "open=Abrir", "Otro"].map { Array($0.utf8) }, environment: env)
            let (_, jsonID) = try await watcher.nextNotifyAndReply()
            let presented = await json.nextLine()
            #expect(presented.hasSuffix(#""server_id":\#(jsonID)}"#))
            try await desktop.waitUntilDisplayed(1)
            try await desktop.dunstctl("action", "0")
            let action = await json.nextLine()
            #expect(action.hasPrefix(#"{"event":"action","id":"toastkit-"#))
            #expect(action.hasSuffix(#""server_id":\#(jsonID),"action":"open","activation_token":null}"#))
            #expect(await json.finish().status == 0)
        }
    }

    /// `--reply` on dunst (no reply field): choosing the button opens a real dialog (zenity, which
    /// scripts/install-deps.sh installs), the person types in it and presses Return, and the text is what the script
    /// reads — sent directly, and through the agent, which opens the dialog on the sender's display.
    @Test(arguments: [false, true]) func aReplyIsTypedInARealDialog(throughAgent: Bool) async throws {
        try await withDesktop { desktop, watcher in
            var env = throughAgent ? desktop.agentEnvironment : desktop.toolEnvironment
            env["TOASTKIT_REPLY_PROMPT"] = nil
            env["XDG_CURRENT_DESKTOP"] = nil
            let title = throughAgent ? "Ana (agente)" : "Ana"
            let process = try ToolProcess.start(
                ["send", "--reply", "Responder", title, "¿Comemos?"].map { Array($0.utf8) }, environment: env)
            let (notify, id) = try await watcher.nextNotifyAndReply()
            #expect(notify.actionList == ["reply", "Responder"])
            try await desktop.waitUntilDisplayed(1)
            try desktop.chooseInContextMenu("\\[\(id),reply\\]$")
            try await desktop.dunstctl("context")
            try await desktop.answerDialog(titled: title, with: "Voy a las dos")
            let result = await process.finish()
            #expect(result.status == 0, "\(result.error)")
            #expect(result.output == "Voy a las dos\n")
        }
    }

    @Test func outcomesHaveTheirExitCodes() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.toolEnvironment
            // Expired: the duration holds, enforced by the tool while it waits.
            let started = ContinuousClock.now
            let expired = try await toastkit(["send", "--wait", "--json", "-d", "1", "Copiado"], environment: env)
            let elapsed = ContinuousClock.now - started
            #expect(expired.status == 3)
            #expect(expired.lines.dropFirst().first?.hasSuffix(#""reason":"expired"}"#) == true)
            // Not before its second; the exact time is the model's (on a manual clock): the upper bound only shows it
            // ended, with a margin for a loaded machine (5 s was passed beside a build).
            #expect(elapsed > .milliseconds(900) && elapsed < .seconds(30), "expired after \(elapsed)")
            let (_, expiredID) = try await watcher.nextNotifyAndReply()
            // Gone from the server: closed by the tool, or by dunst's own timer, told the same time.
            #expect([1, 3].contains(try await watcher.nextClosed(expiredID)))

            // Dismissed by the person (dunstctl close): 2.
            let dismissed = try ToolProcess.start(
                ["send", "--wait", "-d", "indefinite", "Ciérrame"].map { Array($0.utf8) }, environment: env)
            _ = try await watcher.nextNotifyAndReply()
            try await desktop.waitUntilDisplayed(1)
            try await desktop.dunstctl("close")
            let dismissedResult = await dismissed.finish()
            #expect(dismissedResult.status == 2, "\(dismissedResult.error)")
            #expect(dismissedResult.output.isEmpty)

            // Closed by another program (toastkit close --id): 4.
            let waiting = try ToolProcess.start(
                ["send", "--wait", "--id", "job", "-d", "indefinite", "Trabajo"].map { Array($0.utf8) },
                environment: env)
            let (_, jobID) = try await watcher.nextNotifyAndReply()
            let close = try await toastkit(["close", "--id", "job"], environment: env)
            #expect(close.status == 0)
            let closedResult = await waiting.finish()
            #expect(closedResult.status == 4, "\(closedResult.error)")
            try await watcher.nextClose(of: jobID)
        }
    }

    @Test func sigintAndSigtermDuringWaitCloseTheToast() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.toolEnvironment
            for (signal, code) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
                let process = try ToolProcess.start(
                    ["send", "--wait", "--json", "-d", "indefinite", "Esperando"].map { Array($0.utf8) },
                    environment: env)
                let (_, id) = try await watcher.nextNotifyAndReply()
                _ = await process.nextLine()
                process.signal(signal)
                #expect(try await watcher.nextClose() == id, "the toast is closed on the server")
                let result = await process.finish()
                #expect(result.status == code)
                let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
                #expect(result.output.hasSuffix(#""reason":"interrupted","signal":"\#(name)"}"# + "\n"))
                #expect(try await watcher.nextClosed(id) == 3)
            }
            #expect(try await desktop.totalCount() == 0)
        }
    }

    @Test func laterRoundTrip() async throws {
        try await withDesktop { desktop, watcher in
            let env = desktop.toolEnvironment
            let process = try ToolProcess.start(
                ["send", "-A", "later", "--id", "review", "-s", "warning", "Revisar el informe"].map {
                    Array($0.utf8)
                }, environment: env)
            let (notify, id) = try await watcher.nextNotifyAndReply()
            #expect(notify.actionList == ["later", "Later"])
            try await desktop.waitUntilDisplayed(1)
            try desktop.chooseInContextMenu("\\[\(id),later\\]$")
            try await desktop.dunstctl("context")
            let deferred = await process.finish()
            #expect(deferred.status == 5, "\(deferred.error)")
            #expect(deferred.output == "later\n")
            #expect(try await watcher.nextClose() == id, "Later takes it off the screen")

            let list = try await toastkit(["later"], environment: env)
            #expect(list.status == 0)
            let fields = list.output.split(separator: "\t").map(String.init)
            #expect(fields.count == 4)
            #expect(fields.first == "review")
            #expect(fields.dropFirst().first == "warning")
            #expect(fields.last == "Revisar el informe\n")
            let json = try await toastkit(["later", "--json"], environment: env)
            #expect(json.output.hasPrefix(#"{"id":"review","status":"warning","title":"Revisar el informe","#))

            let show = try ToolProcess.start(["later", "--show"].map { Array($0.utf8) }, environment: env)
            let (again, newID) = try await watcher.nextNotifyAndReply()
            #expect(again.summary == "Revisar el informe")
            #expect(again.actionList == ["later", "Later"])
            #expect(await show.nextLine() == "review\t\(newID)\tRevisar el informe")
            #expect(try await toastkit(["later"], environment: env).output.isEmpty, "the list is empty again")
            // Later again on the re-shown toast: off the screen, and kept once more.
            try await desktop.waitUntilDisplayed(1)
            try desktop.chooseInContextMenu("\\[\(newID),later\\]$")
            try await desktop.dunstctl("context")
            let shown = await show.finish()
            #expect(shown.status == 0, "\(shown.error)")
            #expect(shown.output == "review\tlater\n")
            #expect(try await watcher.nextClose() == newID, "Later again takes it off the screen")
            #expect(try await toastkit(["later"], environment: env).output.hasPrefix("review\twarning\t"))
        }
    }

    @Test func capabilitiesAndServerInfo() async throws {
        try await withDesktop { desktop, _ in
            let env = desktop.toolEnvironment
            let capabilities = try await toastkit(["capabilities"], environment: env)
            #expect(capabilities.status == 0)
            #expect(capabilities.lines.contains("actions"))
            let json = try await toastkit(["capabilities", "--json"], environment: env)
            #expect(json.output.hasPrefix(#"{"capabilities":["#))
            let info = try await toastkit(["server-info"], environment: env)
            #expect(info.lines.first == "name: dunst")
            let infoJSON = try await toastkit(["server-info", "--json"], environment: env)
            #expect(infoJSON.output.hasPrefix(#"{"name":"dunst","vendor":"knopwob","version":"#))
        }
    }
}
