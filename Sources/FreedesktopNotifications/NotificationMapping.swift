public import DBus
import FoundationEssentials
public import ToastModel

/// What the server can do, from `GetCapabilities` and `GetServerInformation`.
public struct ServerCapabilities: Sendable, Hashable {
    /// The capability strings.
    public var capabilities: Set<String>
    /// The server's identity.
    public var information: ServerInformation?
    /// The capability strings in the order the server listed them.
    public var ordered: [String]
    /// Whether the server is Plasma with its job service on the bus, and the presenter may draw progress there
    /// (``PresenterConfiguration/drawsProgressAsJobs``). False unless the presenter found it so.
    public var drawsJobViews = false

    /// Creates the value.
    public init(_ capabilities: some Sequence<String>, information: ServerInformation? = nil) {
        ordered = Array(capabilities)
        self.capabilities = Set(ordered)
        self.information = information
    }

    /// Whether the server has `capability`.
    public func has(_ capability: String) -> Bool { capabilities.contains(capability) }

    /// The `expire_timeout` that means "never" for this server: 0, as the specification says, except on
    /// lxqt-notificationd. It deletes a notification's timer when an update sets the timeout to 0 but keeps the
    /// pointer, and crashes (SIGSEGV) on the next update of that notification or when the pointer enters it
    /// (`src/notification.cpp`, `setValues`; seen on 1.2.0, still so upstream). There "never" is `Int32.max`
    /// milliseconds, about 24.8 days, so its timer is always a live one.
    public var neverExpireTimeout: Int32 {
        isLXQt ? Int32.max : 0
    }

    /// The `expire_timeout` that makes the server close a notification no earlier than after `duration`: the
    /// duration in milliseconds (at least 1), except on lxqt-notificationd, whose Qt timers are coarse and may fire
    /// up to 5 % early (measured: a 5 s timeout closed after 4.76 s): there it is 5 % longer, rounded up, so the
    /// center, which closes the toast on time, is never overtaken.
    public func wireTimeout(for duration: Duration) -> Int32 {
        // Within Int32's range first: the 5 % cannot overflow.
        // Rounded up (a server told 2799 ms for 2799.6 would close it before the center does), but not for the
        // attoseconds a Double's seconds leave over (1.999 s is 1999 ms).
        var milliseconds = min((duration - .microseconds(1)).milliseconds(roundingUp: true), Int64(Int32.max))
        if isLXQt { milliseconds += (milliseconds + 19) / 20 }
        return Int32(clamping: max(1, milliseconds))
    }

    private var isLXQt: Bool { information?.name == "lxqt-notificationd" }

    /// Whether a click on a notification keeps doing what the notification's *first* `Notify` said, whatever an
    /// update says: GNOME Shell (43 and later, `js/ui/notificationDaemon.js`) connects a new click handler on every
    /// update and never removes the old one; without a `default` action the first handler opens the app and destroys
    /// the notification, so a tap added by an update is reported as a dismissal. There every notification carries
    /// the `default` action from its first `Notify`: a click on a toast without a tap is still a dismissal (the
    /// presenter has no action for it, and GNOME closes the notification with reason 2).
    public var keepsFirstClickHandler: Bool { information?.name == "gnome-shell" }

    /// Whether the server may leave a waiting notification in its queue, never shown, when the banner in front of it
    /// is closed: GNOME Shell 43 hides a banner closed by a call or by the person without the animation whose end
    /// shows the next one (`messageTray.js`, `_onNotificationDestroy` → `_updateState` → `_hideNotification(false)`),
    /// and looks at its queue again only on the next notification. The presenter then sends its other live
    /// notifications again, in place.
    public var forgetsQueueOnClose: Bool { information?.name == "gnome-shell" }

    /// Whether the server draws the `value` hint as a progress bar: dunst, mako and SwayNotificationCenter always;
    /// xfce4-notifyd only for a toast without a message, since its gauge takes the message's place. Elsewhere the
    /// bar is text in the message (GNOME Shell, Plasma, notification-daemon, MATE, LXQt ignore `value`;
    /// `../shared/research/rich-features.md`). Plasma draws a bar in its job service's views, which the presenter
    /// uses instead where it can (``drawsJobViews``).
    public func drawsProgressValue(withBody: Bool) -> Bool {
        switch information?.name {
        case "dunst", "mako", "SwayNotificationCenter": true
        case "Xfce Notify Daemon": !withBody
        default: false
        }
    }
}

extension ServerCapabilities {
    /// Whether the server itself plays `sound` when sent as a hint (`sound-name` or `sound-file`): where it lists
    /// the `sound` capability and means it. notification-daemon lists it and plays nothing; MATE's daemon plays only
    /// files; dunst, mako, SwayNotificationCenter 0.7, LXQt, Plasma 5 and xfce4-notifyd as Debian builds it (without
    /// libcanberra) list no `sound` and play nothing (`../shared/research/rich-features.md` §3). Elsewhere the
    /// presenter plays it itself.
    public func playsSound(_ sound: ToastSound) -> Bool {
        switch (information?.name, information?.vendor, sound) {
        case (_, _, .silent): true
        case ("Notification Daemon", "MATE", .file): true
        case ("Notification Daemon", _, _): false
        default: has("sound")
        }
    }
}

/// The `Notify` call for one toast, with what had to be left out and how to read action keys back.
public struct MappedNotification: Sendable, Hashable {
    /// The call to send.
    public var call: NotifyCall
    /// Why something was degraded, one sentence each (empty when nothing was).
    public var degradations: [String]
    /// Wire action key → presenter action key, where they differ (icon-named actions).
    public var actionKeys: [String: String]
    /// The sound the presenter plays itself once the server accepted the call, because the server plays none.
    public var localSound: ToastSound?
}

/// Turns a ``ToastModel/ToastRequest`` into a `Notify` call for a server with given capabilities (pure; no I/O).
public enum NotificationMapping {
    /// Maps a presentation: its request, with the server's timeout from the toast's timer
    /// (``serverTimeout(for:)``). Throws a ``ToastModel/ToastValidationError`` naming the field for input no server can take
    /// (a NUL byte, an image whose bytes don't match its size). `soundIsNew` says whether the request's sound is new
    /// for the notification (its first `Notify`, or an update that asks for another sound): only then does it go out
    /// as a hint, or come back as ``MappedNotification/localSound``.
    public static func notify(
        _ presentation: ToastPresentation,
        replacesID: UInt32 = 0,
        capabilities: ServerCapabilities,
        configuration: PresenterConfiguration,
        soundIsNew: Bool = true
    ) throws(ToastValidationError) -> MappedNotification {
        try notify(
            presentation.request, expireTimeout: serverTimeout(for: presentation.toast), replacesID: replacesID,
            capabilities: capabilities, configuration: configuration, progress: presentation.toast.progress,
            soundIsNew: soundIsNew)
    }

    /// The action key of the server's own reply field (`inline-reply`, KDE's extension of the spec): the server
    /// answers it with `NotificationReplied(id, text)` instead of `ActionInvoked`.
    public static let inlineReplyKey = "inline-reply"
    /// The key an ordinary action with the id `inline-reply` is sent under where the server draws reply fields.
    static let renamedInlineReplyKey = "toastkit-inline-reply"

    /// What the server is told about expiry, so that it never contradicts the center: the remaining time while
    /// the toast's timer runs, `nil` (never, `0` on the wire) while it is covered, waiting, paused or indefinite.
    public static func serverTimeout(for toast: PresentedToast) -> Duration? {
        toast.isTimerRunning ? toast.remaining : nil
    }

    /// Maps `request` with an explicit `expire_timeout` (`nil`: never). Throws a ``ToastModel/ToastValidationError`` naming
    /// the field for input no server can take (a NUL byte, an image whose bytes don't match its size); `soundIsNew` as
    /// above.
    public static func notify(
        _ request: ToastRequest,
        expireTimeout: Duration?,
        replacesID: UInt32 = 0,
        capabilities: ServerCapabilities,
        configuration: PresenterConfiguration,
        progress: ToastProgress? = nil,
        soundIsNew: Bool = true
    ) throws(ToastValidationError) -> MappedNotification {
        var degradations: [String] = []
        var summary = request.summary
        var body = request.body ?? ""
        // Progress: the `value` hint (int32, 0–100) where the server draws it; a text bar in the body elsewhere.
        let drawsValue = progress?.percent != nil && capabilities.drawsProgressValue(withBody: !body.isEmpty)
        if let progress, !drawsValue {
            body = body.isEmpty ? progress.textBar : body + "\n" + progress.textBar
            if progress.percent != nil {
                degradations.append("the server draws no progress bar: shown as text in the message")
            }
        }
        try checkText(summary, field: "title")
        try checkText(body, field: "message")
        let appName = request.appName ?? configuration.appName
        try checkText(appName, field: "app name")

        let limit = max(configuration.maximumMessageLength, 1)
        if body.utf8.count > limit {
            let original = body.utf8.count
            body = truncate(body, toBytes: limit - 3) + "…"
            degradations.append("message cut from \(original) to \(body.utf8.count) bytes (the limit is \(limit))")
        }

        let hasMarkup = capabilities.has("body-markup")
        let markup = request.bodyIsMarkup.map { $0 ? .basic : .plainText } ?? configuration.markup
        switch (markup, hasMarkup) {
        case (.plainText, true): body = BodyMarkup.escape(body)
        case (.plainText, false): break
        case (.basic, true):
            let links = capabilities.has("body-hyperlinks")
            let sanitized = BodyMarkup.sanitize(body, allowingLinks: links)
            if !links, sanitized != BodyMarkup.sanitize(body) {
                degradations.append("the server has no body-hyperlinks: links shown as their text")
            }
            body = sanitized
        case (.basic, false):
            let stripped = BodyMarkup.strip(body)
            if stripped != body { degradations.append("the server has no body-markup: markup stripped") }
            body = stripped
        }
        if !body.isEmpty, !capabilities.has("body") {
            summary = "\(summary): \(hasMarkup ? BodyMarkup.strip(body) : body)"
            body = ""
            degradations.append("the server shows no message body: the message was folded into the title")
        }

        var hints: [String: DBusValue] = [
            "urgency": .byte(request.urgency.rawValue)
        ]
        // An empty category is none, as notify-send sends `-c ""`: a cosmetic value never costs the toast.
        if let category = request.category, !category.isEmpty {
            try checkText(category, field: "category")
            hints["category"] = .string(category)
        }
        // The sound goes only with a Notify whose sound is new for the notification: GNOME plays it again on every
        // update that carries it.
        var localSound: ToastSound?
        switch request.sound {
        case .silent?:
            hints["suppress-sound"] = .boolean(true)
        case let sound? where soundIsNew:
            try checkText(sound.text, field: "sound")
            if !capabilities.playsSound(sound) {
                localSound = sound
            } else if case .file(let path) = sound {
                hints["sound-file"] = .string(path)
            } else {
                hints["sound-name"] = .string(sound.text)
            }
        case _?, nil:
            break
        }
        if request.isTransient { hints["transient"] = .boolean(true) }
        if let entry = configuration.desktopEntry {
            try checkText(entry, field: "desktop entry")
            hints["desktop-entry"] = .string(entry)
        }

        let givenAppIcon = request.appIcon ?? configuration.appIcon
        var appIcon = givenAppIcon ?? ""
        try checkText(appIcon, field: "app icon")
        switch request.icon?.shown {
        case .system(let name)?:
            try checkText(name, field: "icon")
            let themed = IconNames.freedesktopName(for: name)
            hints["image-path"] = .string(themed)
            if givenAppIcon == nil { appIcon = themed }
        case .file(let path)?:
            try checkText(path, field: "icon")
            hints["image-path"] = .string(fileURI(path))
        case .image(let image)?:
            try image.validate(field: "icon")
            hints["image-data"] = .structure([
                .int32(Int32(image.width)), .int32(Int32(image.height)), .int32(Int32(image.rowStride)),
                .boolean(true), .int32(8), .int32(4), .bytes(image.rgba),
            ])
        case nil:
            break
        }

        var actions: [(key: String, label: String)] = []
        var actionKeys: [String: String] = [:]
        if !request.actions.isEmpty {
            if capabilities.has("actions") {
                for action in request.actions {
                    try checkText(action.key, field: "action id")
                    try checkText(action.label, field: "action \"\(action.key)\" title")
                }
                let buttons = request.actions.filter { $0.key != "default" }
                let iconNames = buttons.compactMap { action -> String? in
                    if case .system(let name)? = action.icon?.shown { return IconNames.freedesktopName(for: name) }
                    return nil
                }
                let useIcons =
                    capabilities.has("action-icons") && !buttons.isEmpty && iconNames.count == buttons.count
                    && Set(iconNames).count == iconNames.count && !iconNames.contains("default")
                for action in request.actions {
                    var key = action.key
                    if useIcons, action.key != "default", case .system(let name)? = action.icon?.shown {
                        key = IconNames.freedesktopName(for: name)
                        actionKeys[key] = action.key
                    } else if key == Self.inlineReplyKey, capabilities.has("inline-reply") {
                        // An action of the app's that happens to be called so is not the server's reply field.
                        key = Self.renamedInlineReplyKey
                        actionKeys[key] = action.key
                    }
                    actions.append((key, action.label))
                }
                if useIcons { hints["action-icons"] = .boolean(true) }
                // A reply action: the server's own field where it draws one (Plasma, swaync 0.9: the action key
                // `inline-reply`, its label the button that opens the field); elsewhere it stays a button, and the
                // presenter prompts for the text when it is chosen.
                if capabilities.has("inline-reply"),
                    let index = request.actions.firstIndex(where: { $0.reply != nil && $0.key != "default" }),
                    let field = request.actions[index].reply
                {
                    actionKeys[actions[index].key] = nil
                    actions[index].key = Self.inlineReplyKey
                    actionKeys[Self.inlineReplyKey] = request.actions[index].key
                    if let placeholder = field.placeholder {
                        try checkText(placeholder, field: "reply placeholder")
                        hints["x-kde-reply-placeholder-text"] = .string(placeholder)
                    }
                    if let submit = field.submitTitle {
                        try checkText(submit, field: "reply submit title")
                        hints["x-kde-reply-submit-button-text"] = .string(submit)
                    }
                }
            } else {
                let names = request.actions.map(\.key).joined(separator: ", ")
                degradations.append(
                    "the server does not support actions: \(request.actions.count) dropped (\(names))")
            }
        }

        if capabilities.keepsFirstClickHandler, capabilities.has("actions"),
            !actions.contains(where: { $0.key == "default" })
        {
            actions.append(("default", ""))
        }

        for (name, value) in request.hints {
            try checkText(name, field: "hint name")
            if case .string(let text) = value { try checkText(text, field: "hint \"\(name)\"") }
            hints[name] = value.dbusValue
        }
        // int32: mako refuses a whole Notify whose `value` is a uint32.
        if drawsValue, let percent = progress?.percent { hints["value"] = .int32(Int32(percent)) }

        let timeout =
            request.leavesTimeoutToServer
            ? -1 : expireTimeout.map(capabilities.wireTimeout(for:)) ?? capabilities.neverExpireTimeout

        let call = NotifyCall(
            appName: appName, replacesID: replacesID, appIcon: appIcon, summary: summary, body: body,
            actions: actions, hints: hints, expireTimeout: timeout)
        return MappedNotification(
            call: call, degradations: degradations, actionKeys: actionKeys, localSound: localSound)
    }

    /// A NUL byte would be cut off by libdbus (or by the server's C string handling): refuse it, naming the field.
    static func checkText(_ text: String, field: String) throws(ToastValidationError) {
        if let index = text.utf8.firstIndex(of: 0) {
            let offset = text.utf8.distance(from: text.utf8.startIndex, to: index)
            throw ToastValidationError(field: field, reason: "contains a NUL byte at offset \(offset)")
        }
    }

    /// The longest prefix of `text` with at most `limit` UTF-8 bytes, cut at a character boundary.
    static func truncate(_ text: String, toBytes limit: Int) -> String {
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let width = text[index].utf8.count
            if used + width > limit { break }
            used += width
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// A `file://` URI for a path (relative paths are taken from the current folder), percent-encoded.
    static func fileURI(_ path: String) -> String {
        if path.hasPrefix("file://") { return path }
        let absolute =
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return URL(fileURLWithPath: absolute).absoluteString
    }
}

extension ToastHintValue {
    /// The D-Bus value for the hint.
    public var dbusValue: DBusValue {
        switch self {
        case .byte(let value): .byte(value)
        case .bool(let value): .boolean(value)
        case .int32(let value): .int32(value)
        case .uint32(let value): .uint32(value)
        case .int64(let value): .int64(value)
        case .double(let value): .double(value)
        case .string(let value): .string(value)
        }
    }

    /// The hint for a D-Bus value of a hint's types (`y`, `b`, `i`, `u`, `x`, `d`, `s`); nil for any other.
    public init?(dbusValue value: DBusValue) {
        switch value {
        case .byte(let byte): self = .byte(byte)
        case .boolean(let bool): self = .bool(bool)
        case .int32(let int): self = .int32(int)
        case .uint32(let int): self = .uint32(int)
        case .int64(let int): self = .int64(int)
        case .double(let double): self = .double(double)
        case .string(let string): self = .string(string)
        default: return nil
        }
    }
}
