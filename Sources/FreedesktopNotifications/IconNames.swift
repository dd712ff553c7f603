import ToastModel

/// Maps common SF Symbol names (what an app ported from Apple platforms uses) to freedesktop icon names.
///
/// Names that are not in the table pass through unchanged, so freedesktop names work as they are.
public enum IconNames {
    /// The freedesktop name for `name`.
    public static func freedesktopName(for name: String) -> String {
        if let known = table[name] { return known }
        // "checkmark.circle.fill" is drawn like "checkmark.circle".
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.contains("fill") else { return name }
        return table[parts.filter { $0 != "fill" }.joined(separator: ".")] ?? name
    }

    static let table: [String: String] = [
        "photo": "image-x-generic",
        "photo.on.rectangle": "image-x-generic",
        "photo.on.rectangle.angled": "image-x-generic",
        "camera": "camera-photo",
        "archivebox": "mail-archive",
        "tray.and.arrow.down": "mail-archive",
        "trash": "user-trash",
        "xmark.circle": "window-close",
        "xmark": "window-close",
        "checkmark": "emblem-default",
        "checkmark.circle": "emblem-default",
        "checkmark.seal": "emblem-default",
        "exclamationmark.triangle": "dialog-warning",
        "exclamationmark.octagon": "dialog-error",
        "exclamationmark.circle": "dialog-error",
        "xmark.octagon": "dialog-error",
        "info.circle": "dialog-information",
        "bell": "preferences-system-notifications",
        "bell.badge": "preferences-system-notifications",
        "envelope": "mail-unread",
        "envelope.open": "mail-read",
        "paperplane": "mail-send",
        "message": "mail-message-new",
        "bubble.left": "mail-message-new",
        "arrow.triangle.2.circlepath": "view-refresh",
        "arrow.clockwise": "view-refresh",
        "arrow.down.circle": "folder-download",
        "square.and.arrow.down": "document-save",
        "square.and.arrow.up": "document-send",
        "doc": "text-x-generic",
        "folder": "folder",
        "gear": "preferences-system",
        "gearshape": "preferences-system",
        "wifi": "network-wireless",
        "wifi.slash": "network-offline",
        "battery.25": "battery-low",
        "bolt": "battery-full-charging",
        "lock": "changes-prevent",
        "lock.open": "changes-allow",
        "person": "avatar-default",
        "clock": "appointment-soon",
        "calendar": "x-office-calendar",
        "music.note": "audio-x-generic",
        "speaker.wave.2": "audio-volume-high",
        "speaker.slash": "audio-volume-muted",
        "star": "starred",
        "heart": "emblem-favorite",
        "magnifyingglass": "edit-find",
        "link": "insert-link",
        "printer": "printer",
        "externaldrive": "drive-harddisk",
        "icloud": "folder-remote",
    ]
}

/// Whether `needle`'s UTF-8 bytes occur in `text`: a cheap check before `contains`/`replacing`, which match
/// Characters and are slow (a Character match implies a byte match, so a `false` here means no match there).
func utf8Contains(_ text: String, _ needle: String) -> Bool {
    guard let first = needle.utf8.first else { return true }
    let bytes = text.utf8
    var index = bytes.startIndex
    while let found = bytes[index...].firstIndex(of: first) {
        if bytes[found...].starts(with: needle.utf8) { return true }
        index = bytes.index(after: found)
    }
    return false
}

extension ToastIcon {
    /// The icon as the mappings send it: nil for an empty name, path or image, which is no icon (the toast is
    /// shown without one, as notify-send shows it for `-i ""`).
    var shown: ToastIcon? {
        switch self {
        case .system(let name) where name.isEmpty: nil
        case .file(let path) where path.isEmpty: nil
        case .image(let image) where image.isEmpty: nil
        default: self
        }
    }
}
