import DBus

/// `org.freedesktop.ScreenSaver.ActiveChanged`, which both presenters follow to pause their toasts while the screen
/// is locked.
enum ScreenSaver {
    /// The rule for the signal, naming the screen saver's well-known name (so only its owner's signals arrive).
    static let activeChangedRule = MatchRule(
        sender: "org.freedesktop.ScreenSaver", interface: "org.freedesktop.ScreenSaver", member: "ActiveChanged")

    /// Whether the screen saver became active, for an `ActiveChanged` signal; nil for any other message.
    static func active(in message: DBusMessage) -> Bool? {
        guard message.interface == "org.freedesktop.ScreenSaver", message.member == "ActiveChanged" else { return nil }
        return (try? message.arguments("b"))?[0].boolValue
    }
}
