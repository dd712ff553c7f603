/// The semantic status of a toast.
///
/// The status never changes what a toast *does*; it decides how it is decorated. On the Linux desktop the
/// ``ToastTheme`` maps each status to what a notification server can take: an icon name, an urgency, a
/// category and a sound.
public enum ToastStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// A neutral message, such as "Cambios guardados".
    case normal
    /// Something finished well.
    case success
    /// Something needs attention soon.
    case warning
    /// Something failed.
    case error
    /// Something arrived: a message, a mention, new photos.
    case notification
}
