public import DBus
import FoundationEssentials
import Glibc
public import ToastModel

/// One `AddNotification` call's notification: the vardict the portal takes, with what had to be left out and how to
/// read action names back.
public struct PortalNotification: Sendable, Hashable {
    /// The notification's keys and their values (each is sent wrapped in a variant): `title`, `body`, `icon`,
    /// `priority`, `default-action`, `buttons`, and for a version 2 portal `markup-body`, `sound`, `display-hint` and
    /// `category`.
    public var fields: [String: DBusValue]
    /// Portal action name → presenter action key (``ToastModel/ToastActionRole/tapKey`` for the tap action).
    public var actionKeys: [String: String]
    /// Why something was left out, one sentence each (empty when nothing was).
    public var degradations: [String]
    /// The sound the presenter plays itself once the portal took the notification (a version 1 portal plays none).
    public var localSound: ToastSound?

    /// Creates the value.
    public init(
        fields: [String: DBusValue], actionKeys: [String: String] = [:], degradations: [String] = [],
        localSound: ToastSound? = nil
    ) {
        self.fields = fields
        self.actionKeys = actionKeys
        self.degradations = degradations
        self.localSound = localSound
    }

    /// The notification as the `a{sv}` argument of `AddNotification`.
    public var vardict: DBusValue {
        .variantDictionary(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// The arguments of `AddNotification(s id, a{sv} notification)`.
    public func arguments(id: String) -> [DBusValue] {
        [.string(id), vardict]
    }
}

/// What the presenter read from a toast's icon file, for ``PortalNotificationMapping`` (which does no I/O).
public enum PortalIconFile: Sendable, Hashable {
    /// The file's bytes.
    case bytes([UInt8])
    /// It could not be read; why, in words.
    case unreadable(String)

    /// Reads `path` (at most 4 MiB: a larger file is not an icon).
    ///
    /// The limit holds before a byte is read: the file is opened without blocking (a FIFO or a device never hangs
    /// the presenter), checked to be a regular file of at most `PortalIcons.maximumFileSize` (4 MiB) bytes through the
    /// descriptor it is read from (a symbolic link to a large file is the large file), and read up to the limit
    /// only, so a file that grows meanwhile is refused too.
    public static func read(_ path: String) -> PortalIconFile {
        let absolute = path.hasPrefix("file://") ? String(path.dropFirst("file://".count)) : path
        let descriptor = open(absolute, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { return .unreadable("icon file \(absolute) does not exist or cannot be read") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return .unreadable("icon file \(absolute) is not a regular file")
        }
        let limit = PortalIcons.maximumFileSize
        let tooLarge = PortalIconFile.unreadable("icon file \(absolute) has more than an icon's 4 MiB")
        guard info.st_size <= limit else {
            return .unreadable("icon file \(absolute) has \(info.st_size) bytes, more than an icon's 4 MiB")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let read = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { return .unreadable("icon file \(absolute) cannot be read") }
            if read == 0 { break }
            guard bytes.count + read <= limit else { return tooLarge }
            bytes.append(contentsOf: chunk[..<read])
        }
        return .bytes(bytes)
    }
}

/// Turns a ``ToastModel/ToastPresentation`` into the notification for `org.freedesktop.portal.Notification.AddNotification`
/// (pure: no I/O; the presenter reads icon files and hands their bytes in).
///
/// | model | portal |
/// | --- | --- |
/// | title / message | `title` / `body`, plain text. With ``PresenterConfiguration/Markup/basic``: `markup-body` (`b i a`) on a version 2 portal, tags stripped on version 1 |
/// | icon | `.system`: `("themed", [name])` (SF Symbol names mapped); `.file`: `("bytes", file)` when it is a square PNG, JPEG or SVG of at most 512×512; `.image`: `("bytes", PNG)`, scaled down to 512×512 and made square |
/// | urgency | `priority`: low → `low`, normal → `normal`, critical → `urgent` |
/// | tap action | `default-action` `"default"` |
/// | swipe actions | `buttons`, leading first; the action's id is the portal action name when it is a valid one, otherwise a generated name |
/// | transient (confirmations) | version 2: `display-hint` `["transient"]` |
/// | category | version 2: `category`, when it is one the portal knows or starts with `x-` |
/// | sound | version 2: `sound` `"default"` for a new sound (named or a file), `"silent"` for a silent toast, the `suppress-sound` hint, or an update of a toast whose sound already played; version 1: played by the presenter |
/// | button purpose | version 2: `purpose`, when it is one the portal knows or starts with `x-` |
///
/// A version 1 portal (xdg-desktop-portal before 1.20, such as Debian 12's 1.16) refuses the whole notification for
/// any other key, so version 2 keys are never sent to it.
public enum PortalNotificationMapping {
    /// The action name of the tap action (`default-action`).
    public static let tapActionName = "default"

    /// The categories a version 2 portal accepts (xdg-desktop-portal 1.20); others must start with `x-`.
    public static let categories: Set<String> = [
        "im.received", "alarm.ringing", "call.incoming", "call.ongoing", "call.unanswered", "weather.warning.extreme",
        "cellbroadcast.danger.extreme", "cellbroadcast.danger.severe", "cellbroadcast.amberalert",
        "cellbroadcast.test", "os.battery.low", "browser.web-notification",
    ]

    /// The button purposes a version 2 portal accepts; others must start with `x-`.
    public static let purposes: Set<String> = [
        "system.custom-alert", "im.reply-with-text", "call.accept", "call.decline", "call.hang-up",
        "call.enable-speakerphone", "call.disable-speakerphone",
    ]

    /// Maps `presentation` for a portal of interface `version`.
    ///
    /// - Parameters:
    ///   - presentation: The toast, as the center hands it to a presenter.
    ///   - version: The portal's `version` property (1 or 2): version 2 takes more fields.
    ///   - configuration: The app's options (markup, the sandbox's app id).
    ///   - iconFile: What the presenter read from the toast's `.file` icon (`nil` when it has none).
    ///   - soundIsNew: Whether the request's sound is new for the toast (its first notification, or an update that
    ///     asks for another sound): only then is it played. Each update is a new notification on the portal, so
    ///     on version 2 an update whose sound already played is sent `silent`.
    /// - Throws: ``ToastModel/ToastValidationError`` naming the field for input the portal can never take (a NUL byte, an image
    ///   whose bytes don't match its size).
    public static func notification(
        _ presentation: ToastPresentation,
        version: UInt32,
        configuration: PresenterConfiguration,
        iconFile: PortalIconFile? = nil,
        soundIsNew: Bool = true
    ) throws(ToastValidationError) -> PortalNotification {
        let request = presentation.request
        var fields: [String: DBusValue] = [:]
        var degradations: [String] = []
        let isVersion2 = version >= 2

        try NotificationMapping.checkText(request.summary, field: "title")
        fields["title"] = .string(request.summary)

        var body = request.body ?? ""
        try NotificationMapping.checkText(body, field: "message")
        // The portal carries no progress: a text bar in the body.
        if let progress = presentation.toast.progress {
            body = body.isEmpty ? progress.textBar : body + "\n" + progress.textBar
        }
        let limit = max(configuration.maximumMessageLength, 1)
        if body.utf8.count > limit {
            let original = body.utf8.count
            body = NotificationMapping.truncate(body, toBytes: limit - 3) + "…"
            degradations.append("message cut from \(original) to \(body.utf8.count) bytes (the limit is \(limit))")
        }
        if !body.isEmpty {
            switch configuration.markup {
            case .plainText:
                fields["body"] = .string(body)
            case .basic where isVersion2:
                fields["markup-body"] = .string(BodyMarkup.sanitize(body))
                fields["body"] = .string(BodyMarkup.strip(body))
            case .basic:
                let stripped = BodyMarkup.strip(body)
                if stripped != body {
                    degradations.append("the notification portal (version \(version)) has no markup: tags stripped")
                }
                fields["body"] = .string(stripped)
            }
        }

        fields["priority"] = .string(priority(request.urgency))

        switch request.icon?.shown {
        case .system(let name)?:
            try NotificationMapping.checkText(name, field: "icon")
            fields["icon"] = .structure([.string("themed"), .variant(.strings([IconNames.freedesktopName(for: name)]))])
        case .image(let image)?:
            try image.validate(field: "icon")
            if image.width > PortalIcons.maximumSide || image.height > PortalIcons.maximumSide {
                degradations.append(
                    "icon image of \(image.width)x\(image.height) pixels scaled down to fit 512x512 (the portal's limit)"
                )
            }
            fields["icon"] = .structure([.string("bytes"), .variant(.bytes(PortalIcons.png(image)))])
        case .file(let path)?:
            try NotificationMapping.checkText(path, field: "icon")
            switch iconFile {
            case .bytes(let bytes)?:
                if let problem = iconProblem(bytes, path: path) {
                    degradations.append(problem + ": sent without an icon")
                } else {
                    fields["icon"] = .structure([.string("bytes"), .variant(.bytes(bytes))])
                }
            case .unreadable(let reason)?:
                degradations.append(reason + ": sent without an icon")
            case nil:
                degradations.append("icon file \(path) was not read: sent without an icon")
            }
        case nil:
            break
        }

        var actionKeys: [String: String] = [:]
        var buttons: [DBusValue] = []
        var droppedPurposes: [String] = []
        for (index, action) in request.actions.enumerated() {
            try NotificationMapping.checkText(action.key, field: "action id")
            try NotificationMapping.checkText(action.label, field: "action \"\(action.key)\" title")
            if action.key == ToastActionRole.tapKey {
                fields["default-action"] = .string(tapActionName)
                actionKeys[tapActionName] = action.key
                continue
            }
            let name = isValidActionName(action.key) ? action.key : "toastkit-action-\(index)"
            actionKeys[name] = action.key
            var button: [(String, DBusValue)] = [("label", .string(action.label)), ("action", .string(name))]
            if let purpose = action.purpose {
                try NotificationMapping.checkText(purpose, field: "action \"\(action.key)\" purpose")
                if isVersion2, purposes.contains(purpose) || purpose.hasPrefix("x-") {
                    button.append(("purpose", .string(purpose)))
                } else {
                    droppedPurposes.append(purpose)
                }
            }
            buttons.append(.variantDictionary(button))
        }
        if !buttons.isEmpty { fields["buttons"] = .array("a{sv}", buttons) }
        if !droppedPurposes.isEmpty {
            degradations.append(
                isVersion2
                    ? "button purposes the portal does not know left out: \(droppedPurposes.joined(separator: ", "))"
                    : "the notification portal (version \(version)) has no button purposes: left out")
        }

        var leftOut: [String] = []
        if let category = request.category, !category.isEmpty {
            try NotificationMapping.checkText(category, field: "category")
            if isVersion2, categories.contains(category) || category.hasPrefix("x-") {
                fields["category"] = .string(category)
            } else {
                leftOut.append("category \"\(category)\"")
            }
        }
        var localSound: ToastSound?
        let silent = request.hints["suppress-sound"] == .bool(true) || request.sound == .silent
        if let sound = request.sound { try NotificationMapping.checkText(sound.text, field: "sound") }
        if isVersion2 {
            if silent || (request.sound != nil && !soundIsNew) {
                fields["sound"] = .string("silent")
            } else if let sound = request.sound {
                fields["sound"] = .string("default")
                degradations.append(
                    "the notification portal plays only the desktop's own sounds: \"\(sound.text)\" became the "
                        + "default sound")
            }
            if request.isTransient { fields["display-hint"] = .strings(["transient"]) }
        } else if let sound = request.sound, !silent, soundIsNew {
            localSound = sound
        }
        // libnotify's `sender-pid` (which toastkit sends as notify-send does) tells the portal nothing it does not know.
        let hints = request.hints.keys.filter { $0 != "suppress-sound" && $0 != "sender-pid" }.sorted()
        if !hints.isEmpty { leftOut.append("hints \(hints.joined(separator: ", "))") }
        if !leftOut.isEmpty {
            degradations.append(
                "the notification portal (version \(version)) takes no \(leftOut.joined(separator: ", ")): left out")
        }
        return PortalNotification(
            fields: fields, actionKeys: actionKeys, degradations: degradations, localSound: localSound)
    }

    /// The portal priority for an urgency.
    public static func priority(_ urgency: ToastUrgency) -> String {
        switch urgency {
        case .low: "low"
        case .normal: "normal"
        case .critical: "urgent"
        }
    }

    /// Whether `key` can be a button's portal action name as it is: a GAction name (letters, digits, `-` and `.`,
    /// which is what xdg-desktop-portal-gtk can read back), not `default` (it renames that one) and not starting with
    /// `app.` (those go to the app's `org.freedesktop.Application` instead of coming back as `ActionInvoked`).
    public static func isValidActionName(_ key: String) -> Bool {
        !key.isEmpty && key != tapActionName && !key.hasPrefix("app.")
            && key.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x2E
            }
    }

    /// Why the portal would drop the icon file's `bytes` (not a PNG, JPEG or SVG, not square, or larger than
    /// 512×512), if it would.
    static func iconProblem(_ bytes: [UInt8], path: String) -> String? {
        guard let format = PortalIcons.format(of: bytes) else {
            return "icon file \(path) is not a PNG, JPEG or SVG image (the only kinds the portal takes)"
        }
        if let size = PortalIcons.size(of: bytes, format: format),
            size.width > PortalIcons.maximumSide || size.height > PortalIcons.maximumSide
        {
            return "icon file \(path) is a \(size.width)x\(size.height) \(format.rawValue); the portal drops icons "
                + "larger than 512x512"
        }
        if let size = PortalIcons.size(of: bytes, format: format), size.width != size.height {
            return "icon file \(path) is a \(size.width)x\(size.height) \(format.rawValue); the portal drops icons "
                + "that are not square"
        }
        return nil
    }
}
