public import DBus

extension DesktopPresentationError {
    /// What a D-Bus failure of a call to the notification server means for a toast.
    ///
    /// Only `.noServer` can be fixed by a server appearing later: no server owns the name, or the server left the
    /// bus with the call unanswered (the bus says so at once; that is not a timeout). `NoReply` after `timeout`
    /// is `.timedOut`, and its reason says how long the call waited.
    ///
    /// - Parameters:
    ///   - error: The call's error.
    ///   - timeout: The call's timeout (quoted in the reason of a call that timed out).
    public init(describing error: DBusError, timeout: Duration) {
        switch error.name {
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner:
            self.init(
                .noServer, reason: "no notification server is running (org.freedesktop.Notifications has no owner)")
        case DBusError.Name.noReply where error.isRecipientDisconnected:
            self.init(.noServer, reason: "the notification server left the bus without answering")
        case DBusError.Name.noReply:
            self.init(.timedOut, reason: "the notification server did not answer within \(timeout)")
        case DBusError.Name.badAddress, DBusError.Name.noServer, DBusError.Name.fileNotFound:
            self.init(.busUnavailable, reason: "cannot reach the session bus: \(error.message)")
        case DBusError.Name.disconnected:
            self.init(.busUnavailable, reason: "the session bus connection was lost: \(error.message)")
        default:
            self.init(.refused, reason: "the notification server refused the toast: \(error)")
        }
    }
}
