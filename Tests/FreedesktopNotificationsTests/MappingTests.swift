import DBus
import FreedesktopNotifications
import Testing
import ToastModel

@Suite struct MappingTests {
    @Test func hintValuesGoBothWays() {
        let hints: [ToastHintValue] = [
            .byte(7), .bool(true), .int32(-3), .uint32(3), .int64(-4), .double(0.5), .string("x"),
        ]
        for hint in hints {
            #expect(ToastHintValue(dbusValue: hint.dbusValue) == hint)
        }
        #expect(ToastHintValue(dbusValue: .uint64(1)) == nil, "not a hint type")
    }

    static let dunst = ServerCapabilities([
        "actions", "body", "body-hyperlinks", "icon-static", "body-markup", "persistence",
    ])
    static let configuration = PresenterConfiguration(appName: "Fotos", desktopEntry: "org.example.Fotos")

    private func map(
        _ request: ToastRequest,
        expireTimeout: Duration? = nil,
        capabilities: ServerCapabilities = dunst,
        configuration: PresenterConfiguration = configuration
    ) throws -> MappedNotification {
        try NotificationMapping.notify(
            request, expireTimeout: expireTimeout, capabilities: capabilities, configuration: configuration)
    }

    /// Progress (issue 21 §1): the `value` hint, an int32 from 0 to 100, where the server draws it (dunst, mako,
    /// swaync, and xfce for a toast without a message, whose text its gauge hides); a text bar in the message elsewhere.
    @Test func progressIsTheValueHintWhereItIsDrawnAndTextElsewhere() throws {
        func server(_ name: String, _ vendor: String = "x") -> ServerCapabilities {
            ServerCapabilities(
                ["actions", "body"],
                information: ServerInformation(name: name, vendor: vendor, version: "1", specificationVersion: "1.2"))
        }
        func mapped(_ capabilities: ServerCapabilities, _ progress: ToastProgress, body: String? = "fotos") throws
            -> MappedNotification
        {
            try NotificationMapping.notify(
                ToastRequest(summary: "Copiando", body: body), expireTimeout: nil, capabilities: capabilities,
                configuration: Self.configuration, progress: progress)
        }
        for name in ["dunst", "mako", "SwayNotificationCenter"] {
            let drawn = try mapped(server(name), .fraction(0.4))
            #expect(drawn.call.hints["value"] == .int32(40), "\(name): int32 (mako refuses a uint32)")
            #expect(drawn.call.body == "fotos")
            #expect(drawn.degradations.isEmpty)
        }
        #expect(try mapped(server("Xfce Notify Daemon"), .fraction(1), body: nil).call.hints["value"] == .int32(100))
        let xfce = try mapped(server("Xfce Notify Daemon"), .fraction(0.25))
        #expect(xfce.call.hints["value"] == nil, "its gauge would hide the message")
        #expect(xfce.call.body == "fotos\n▰▰▱▱▱▱▱▱▱▱ 25 %")
        for name in ["gnome-shell", "Plasma", "Notification Daemon", "lxqt-notificationd"] {
            let text = try mapped(server(name), .fraction(0.999))
            #expect(text.call.hints["value"] == nil, "\(name)")
            #expect(text.call.body == "fotos\n▰▰▰▰▰▰▰▰▰▱ 99 %", "\(name): 100 % means done")
            #expect(text.degradations == ["the server draws no progress bar: shown as text in the message"])
        }
        let under = try mapped(server("dunst"), .indeterminate, body: nil)
        #expect(under.call.hints["value"] == nil && under.call.body == "…")
        #expect(try mapped(server("gnome-shell"), .fraction(7), body: nil).call.body == "▰▰▰▰▰▰▰▰▰▰ 100 %", "clamped")
    }

    @Test func fieldsHintsAndTimeout() throws {
        let request = ToastRequest(
            summary: "Poco espacio", body: "Libera espacio", icon: .system("photo.on.rectangle"), urgency: .critical,
            category: "device", soundName: "dialog-warning", actions: [.init(key: "default", label: "Abrir")],
            hints: ["x-custom": .int32(7)], isTransient: true)
        // A server that plays sounds (dunst plays none: SoundTests).
        let player = ServerCapabilities(Self.dunst.ordered + ["sound"], information: Self.dunst.information)
        let mapped = try map(request, expireTimeout: .milliseconds(4500), capabilities: player)
        let call = mapped.call
        #expect(mapped.localSound == nil)
        #expect(call.appName == "Fotos")
        #expect(call.summary == "Poco espacio")
        #expect(call.body == "Libera espacio")
        #expect(call.appIcon == "image-x-generic")
        #expect(call.expireTimeout == 4500)
        #expect(call.actions.map(\.key) == ["default"])
        #expect(call.hints["urgency"] == .byte(2))
        #expect(call.hints["category"] == .string("device"))
        #expect(call.hints["sound-name"] == .string("dialog-warning"))
        #expect(call.hints["transient"] == .boolean(true))
        #expect(call.hints["desktop-entry"] == .string("org.example.Fotos"))
        #expect(call.hints["image-path"] == .string("image-x-generic"))
        #expect(call.hints["x-custom"] == .int32(7))
        #expect(call.arguments.map(\.signature).joined() == "susssasa{sv}i")
    }

    /// An empty icon name, path or image is no icon (issue 43): the notification is sent, as notify-send sends
    /// `-i ""` — `app_icon` "" and no image hint; an action's empty icon leaves the buttons as text. An empty category
    /// is none, as notify-send sends `-c ""`.
    @Test func anEmptyIconOrCategoryIsSentAsNone() throws {
        for icon in [ToastIcon.system(""), .file(""), .image(width: 0, height: 0, rgba: [])] {
            var request = ToastRequest(summary: "Now Playing", body: "Portishead - Roads", icon: icon)
            request.actions = [.init(key: "play", label: "Play", icon: .system(""))]
            request.category = ""
            let icons = ServerCapabilities(Self.dunst.ordered + ["action-icons"], information: Self.dunst.information)
            let call = try map(request, capabilities: icons).call
            #expect(call.summary == "Now Playing")
            #expect(call.body == "Portishead - Roads")
            #expect(call.appIcon == "")
            #expect(call.hints["image-path"] == nil && call.hints["image-data"] == nil)
            #expect(call.hints["category"] == nil)
            #expect(call.hints["action-icons"] == nil)
            #expect(call.actions.map(\.key) == ["play"])
        }
    }

    @Test(
        "the server's timeout follows the toast's timer: the remaining time while it runs, 0 (never) while it does not",
        arguments: [
            (Duration.seconds(4), true, Int32(4000)), (.milliseconds(1500), true, 1500), (.seconds(4), false, 0),
            (.milliseconds(1), true, 1),
        ])
    func timeoutFollowsTheTimer(remaining: Duration, running: Bool, wire: Int32) throws {
        let toast = PresentedToast(
            id: "a", status: .normal, title: "x", remaining: remaining, isTimerRunning: running)
        let presentation = ToastPresentation(
            toast: toast, request: ThemedToastStyle(theme: .standard).makeRequest(for: toast))
        let call = try NotificationMapping.notify(
            presentation, capabilities: Self.dunst, configuration: Self.configuration
        ).call
        #expect(call.expireTimeout == wire)
        let indefinite = PresentedToast(id: "b", status: .normal, title: "x", remaining: nil, isTimerRunning: false)
        #expect(NotificationMapping.serverTimeout(for: indefinite) == nil)
    }

    @Test func lxqtNeverGetsZeroAndGetsAMarginForItsCoarseTimers() throws {
        let lxqt = ServerCapabilities(
            ["actions", "body"],
            information: ServerInformation(
                name: "lxqt-notificationd", vendor: "lxqt.org", version: "1.2.0", specificationVersion: "1.2"))
        #expect(try map(ToastRequest(summary: "x"), expireTimeout: nil, capabilities: lxqt).call.expireTimeout == .max)
        // Its coarse Qt timers may fire 5 % early: it is told 5 % more, so the center closes the toast first.
        #expect(
            try map(ToastRequest(summary: "x"), expireTimeout: .seconds(2), capabilities: lxqt).call.expireTimeout
                == 2100)
        #expect(lxqt.wireTimeout(for: .milliseconds(1)) == 2)
        #expect(Self.dunst.wireTimeout(for: .milliseconds(1)) == 1)
        #expect(Self.dunst.wireTimeout(for: .seconds(Int64.max)) == .max)
        #expect(try map(ToastRequest(summary: "x"), expireTimeout: nil).call.expireTimeout == 0)
    }

    /// GNOME Shell keeps the click handler of a notification's first `Notify`: every notification there carries the
    /// `default` action from the start, so a tap added by an update is the tap (the end-to-end proof:
    /// `AgentGNOMEQuirkTests.aTapAddedByAnInPlaceUpdateIsReportedAsTheTap`); nowhere else.
    @Test func onGNOMEShellEveryNotificationHasTheDefaultAction() throws {
        let gnome = ServerCapabilities(
            ["actions", "body"],
            information: ServerInformation(
                name: "gnome-shell", vendor: "GNOME", version: "43.9", specificationVersion: "1.2"))
        #expect(try map(ToastRequest(summary: "x"), capabilities: gnome).call.actionList == ["default", ""])
        var tapped = ToastRequest(summary: "x")
        tapped.actions = [ToastRequest.Action(key: "default", label: "Abrir")]
        #expect(try map(tapped, capabilities: gnome).call.actionList == ["default", "Abrir"], "not twice")
        #expect(try map(ToastRequest(summary: "x")).call.actionList.isEmpty, "dunst: as given")
    }

    @Test func aRequestMayNameItsOwnAppAndIcon() throws {
        var request = ToastRequest(summary: "x", icon: .system("archivebox"))
        request.appName = "backup"
        request.appIcon = "drive-harddisk"
        let call = try map(request).call
        #expect(call.appName == "backup")
        #expect(call.appIcon == "drive-harddisk")
        #expect(call.hints["image-path"] == .string("mail-archive"))
    }

    @Test func indefiniteIsZeroAndAppIconWins() throws {
        var configuration = Self.configuration
        configuration.appIcon = "org.example.Fotos"
        let call = try map(
            ToastRequest(summary: "x", icon: .system("archivebox")), expireTimeout: nil, configuration: configuration
        ).call
        #expect(call.expireTimeout == 0)
        #expect(call.appIcon == "org.example.Fotos")
        #expect(call.hints["image-path"] == .string("mail-archive"))
    }

    @Test(arguments: [
        ("photo.on.rectangle", "image-x-generic"), ("archivebox", "mail-archive"),
        ("xmark.circle.fill", "window-close"),
        ("dialog-warning", "dialog-warning"),
    ])
    func sfSymbolNames(_ symbol: String, _ freedesktop: String) {
        #expect(IconNames.freedesktopName(for: symbol) == freedesktop)
    }

    @Test func fileIconIsAFileURIAndImageIsImageData() throws {
        let file = try map(ToastRequest(summary: "x", icon: .file("/tmp/a b.png"))).call
        #expect(file.hints["image-path"] == .string("file:///tmp/a%20b.png"))
        let pixels = [UInt8](repeating: 200, count: 2 * 3 * 4)
        let image = try map(ToastRequest(summary: "x", icon: .image(width: 2, height: 3, rgba: pixels))).call
        #expect(
            image.hints["image-data"]
                == .structure([.int32(2), .int32(3), .int32(8), .boolean(true), .int32(8), .int32(4), .bytes(pixels)]))
        #expect(image.hints["image-data"]?.signature == "(iiibiiay)")
    }

    @Test func imageWithWrongByteCountIsAnError() {
        let error = #expect(throws: ToastValidationError.self) {
            try map(ToastRequest(summary: "x", icon: .image(width: 2, height: 2, rgba: [1, 2, 3])))
        }
        #expect(error?.field == "icon")
    }

    @Test func nulBytesNameTheField() {
        #expect(
            (#expect(throws: ToastValidationError.self) { try map(ToastRequest(summary: "a\u{0}b")) })?.field
                == "title")
        #expect(
            (#expect(throws: ToastValidationError.self) { try map(ToastRequest(summary: "a", body: "\u{0}")) })?.field
                == "message")
        let action = #expect(throws: ToastValidationError.self) {
            try map(ToastRequest(summary: "a", actions: [.init(key: "archive", label: "Arch\u{0}")]))
        }
        #expect(action?.field == "action \"archive\" title")
    }

    @Test func bodyIsEscapedForMarkupServersOnly() throws {
        let request = ToastRequest(summary: "a < b & c", body: "x < y && <b>z</b> > w")
        let escaped = try map(request).call
        #expect(escaped.body == "x &lt; y &amp;&amp; &lt;b&gt;z&lt;/b&gt; &gt; w")
        #expect(escaped.summary == "a < b & c", "summaries are plain text on every server")
        let plain = try map(request, capabilities: ServerCapabilities(["body", "actions"])).call
        #expect(plain.body == "x < y && <b>z</b> > w")
    }

    @Test func basicMarkupIsSanitizedOrStripped() throws {
        var configuration = Self.configuration
        configuration.markup = .basic
        let request = ToastRequest(
            summary: "s",
            body: "<b>bold</b> <script>x</script> <a href=\"https://e.org\" onclick=\"y\">link</a> <i>open")
        let sanitized = try map(request, configuration: configuration)
        #expect(
            sanitized.call.body
                == "<b>bold</b> &lt;script>x&lt;/script> <a href=\"https://e.org\">link</a> <i>open</i>")
        let stripped = try map(request, capabilities: ServerCapabilities(["body"]), configuration: configuration)
        #expect(stripped.call.body == "bold x link open")
        #expect(stripped.degradations == ["the server has no body-markup: markup stripped"])
    }

    @Test func withoutActionsOrBodyTheServerGetsLessAndItIsSaid() throws {
        let request = ToastRequest(
            summary: "Mensaje de Ana", body: "¿Comemos?",
            actions: [.init(key: "default", label: "Abrir"), .init(key: "later", label: "Más tarde")])
        let mapped = try map(request, capabilities: ServerCapabilities(["icon-static"]))
        #expect(mapped.call.actions.isEmpty)
        #expect(mapped.call.summary == "Mensaje de Ana: ¿Comemos?")
        #expect(mapped.call.body == "")
        #expect(
            mapped.degradations == [
                "the server shows no message body: the message was folded into the title",
                "the server does not support actions: 2 dropped (default, later)",
            ])
    }

    @Test func actionIconsWhenEveryButtonHasOne() throws {
        let request = ToastRequest(
            summary: "s",
            actions: [
                .init(key: "default", label: "Open"),
                .init(key: "archive", label: "Archive", icon: .system("archivebox")),
                .init(key: "delete", label: "Delete", icon: .system("trash")),
            ])
        let withIcons = try map(request, capabilities: ServerCapabilities(["actions", "action-icons", "body"]))
        #expect(withIcons.call.actions.map(\.key) == ["default", "mail-archive", "user-trash"])
        #expect(withIcons.call.hints["action-icons"] == .boolean(true))
        #expect(withIcons.actionKeys == ["mail-archive": "archive", "user-trash": "delete"])
        let withoutCapability = try map(request)
        #expect(withoutCapability.call.actions.map(\.key) == ["default", "archive", "delete"])
        #expect(withoutCapability.call.hints["action-icons"] == nil)
    }

    /// A reply action is the server's own field where it draws one (`inline-reply`: Plasma, swaync 0.9), with
    /// KDE's placeholder and submit hints; elsewhere it is a plain button under its own key (the presenter prompts).
    @Test func aReplyActionIsTheServersFieldWhereItHasOne() throws {
        let request = ToastRequest(
            summary: "Ana", body: "¿Comemos?",
            actions: [
                .init(key: "default", label: "Open"),
                .init(key: "archive", label: "Archive", icon: .system("archivebox")),
                .init(
                    key: "answer", label: "Responder",
                    reply: ToastReplyField(placeholder: "Escribe…", submitTitle: "Enviar")),
            ])
        let plasma = try map(
            request, capabilities: ServerCapabilities(["actions", "action-icons", "body", "inline-reply"]))
        #expect(plasma.call.actions.map(\.key) == ["default", "archive", "inline-reply"])
        #expect(plasma.call.actions.map(\.label) == ["Open", "Archive", "Responder"])
        #expect(plasma.actionKeys == ["inline-reply": "answer"])
        #expect(plasma.call.hints["x-kde-reply-placeholder-text"] == .string("Escribe…"))
        #expect(plasma.call.hints["x-kde-reply-submit-button-text"] == .string("Enviar"))
        #expect(plasma.call.hints["action-icons"] == nil, "not every button has an icon")

        let dunst = try map(request, capabilities: Self.dunst)
        #expect(dunst.call.actions.map(\.key) == ["default", "archive", "answer"])
        #expect(dunst.actionKeys.isEmpty)
        #expect(dunst.call.hints["x-kde-reply-placeholder-text"] == nil)

        // An ordinary action of the app's called `inline-reply` is not Plasma's field (and keeps its id).
        var named = request
        named.actions[1] = .init(key: "inline-reply", label: "Archive")
        let renamed = try map(named, capabilities: ServerCapabilities(["actions", "body", "inline-reply"]))
        #expect(renamed.call.actions.map(\.key) == ["default", "toastkit-inline-reply", "inline-reply"])
        #expect(renamed.actionKeys == ["toastkit-inline-reply": "inline-reply", "inline-reply": "answer"])
        named.actions.removeLast()
        let alone = try map(named, capabilities: ServerCapabilities(["actions", "body", "inline-reply"]))
        #expect(alone.call.actions.map(\.key) == ["default", "toastkit-inline-reply"])
        #expect(alone.call.hints["x-kde-reply-placeholder-text"] == nil)
        #expect(try map(named, capabilities: Self.dunst).call.actions.map(\.key) == ["default", "inline-reply"])

        var hostile = request
        hostile.actions[2].reply?.placeholder = "a\u{0}b"
        #expect(throws: ToastValidationError.self) {
            try map(hostile, capabilities: ServerCapabilities(["actions", "inline-reply"]))
        }
    }

    /// The prompt programs' arguments: the label as each shows it (zenity: text with `_` mnemonics; yad: markup; both
    /// expand backslashes), the message without its tags, and `--name=value` so no text is taken for an option.
    @Test func thePromptProgramsGetTheirTextAsTheyReadIt() {
        let prompt = ToastReplyPrompt(
            toastID: "t", title: "-Tom & Ana", message: "C:\\temp_dir <b>ya</b>", actionTitle: "Responder",
            field: ToastReplyField())
        let list = ReplyPrompter.automatic.candidates(for: prompt, environment: [:])
        #expect(list.map(\.name) == ["zenity", "yad", "kdialog"])
        #expect(list[0].argv == ["zenity", "--entry", "--title=-Tom & Ana", "--text=Responder: C:\\\\temp__dir ya"])
        #expect(list[1].argv == ["yad", "--entry", "--title=-Tom & Ana", "--text=Responder: C:\\\\temp_dir ya"])
        #expect(list[2].argv == ["kdialog", "--title=-Tom & Ana", "--inputbox=Responder: C:\\temp_dir ya"])
        let kde = ReplyPrompter.automatic.candidates(for: prompt, environment: ["XDG_CURRENT_DESKTOP": "KDE"])
        #expect(kde.first?.name == "kdialog")
        let given = ReplyPrompter.automatic.candidates(
            for: prompt, environment: ["TOASTKIT_REPLY_PROMPT": "rofi -dmenu"])
        #expect(given.map(\.argv) == [["/bin/sh", "-c", "rofi -dmenu"]])
    }

    @Test func longMessagesAreCutAndSaidSo() throws {
        var configuration = Self.configuration
        configuration.maximumMessageLength = 10
        let mapped = try map(
            ToastRequest(summary: "s", body: "ñññññññññññ"), capabilities: ServerCapabilities(["body"]),
            configuration: configuration)
        #expect(mapped.call.body == "ñññ…")
        #expect(mapped.degradations == ["message cut from 22 to 9 bytes (the limit is 10)"])
    }

    @Test func closeReasons() {
        #expect(NotificationCloseReason(rawValue: 1) == .expired)
        #expect(NotificationCloseReason(rawValue: 2) == .dismissedByUser)
        #expect(NotificationCloseReason(rawValue: 3) == .closedByCall)
        #expect(NotificationCloseReason(rawValue: 4) == .undefined)
        #expect(NotificationCloseReason(rawValue: 77) == .unknown(77))
        #expect(NotificationCloseReason(rawValue: 77).rawValue == 77)
    }
}
