package import DBus

extension PresentationError {
    /// What a D-Bus failure of a call to the notification portal means for a toast.
    ///
    /// - Parameters:
    ///   - timeout: The call timeout, named in the `NoReply` reason.
    ///   - choice: Why the portal is in use ("chosen automatically: /.flatpak-info exists"), appended to the reasons
    ///     that say it cannot be reached.
    ///   - readingVersion: Whether the call was the read of the interface's `version` property, whose refusal means
    ///     the portal has no notification interface at all.
    package static func portal(
        _ error: DBusError, timeout: Duration, choice: String? = nil, readingVersion: Bool = false
    ) -> PresentationError {
        let tried = choice.map { "; the notification portal was \($0)" } ?? ""
        let noBackend = PresentationError(
            .noServer,
            reason: "the desktop portal has no notification backend (org.freedesktop.portal.Notification is "
                + "missing; install xdg-desktop-portal-gtk or your desktop's portal backend)\(tried)")
        switch error.name {
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner:
            return PresentationError(
                .noServer,
                reason: "no desktop portal is running (org.freedesktop.portal.Desktop has no owner)\(tried)")
        case DBusError.Name.unknownMethod, DBusError.Name.unknownObject, "org.freedesktop.DBus.Error.UnknownInterface",
            "org.freedesktop.DBus.Error.UnknownProperty":
            return noBackend
        case DBusError.Name.noReply:
            return PresentationError(.timedOut, reason: "the desktop portal did not answer within \(timeout)")
        case DBusError.Name.badAddress, DBusError.Name.noServer, DBusError.Name.fileNotFound:
            return PresentationError(.busUnavailable, reason: "cannot reach the session bus: \(error.message)")
        case DBusError.Name.disconnected:
            return PresentationError(
                .busUnavailable, reason: "the session bus connection was lost: \(error.message)")
        case "org.freedesktop.portal.Error.NotAllowed":
            return PresentationError(
                .refused, reason: "the notification portal does not allow this app to show notifications: \(error)")
        default:
            if readingVersion { return noBackend }
            return PresentationError(.refused, reason: "the notification portal refused the toast: \(error)")
        }
    }

    /// What any error of a call to the notification portal means for a toast.
    package static func portal(any error: any Error, timeout: Duration, choice: String? = nil)
        -> PresentationError
    {
        switch error {
        case let error as PresentationError: error
        case let error as DBusError: portal(error, timeout: timeout, choice: choice)
        default: PresentationError(.refused, reason: "\(error)")
        }
    }
}
