public import DBus
import ToastModel

/// Why a presenter (the notification server's or the portal's) could not show a toast.
public struct PresentationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: Sendable, Hashable {
        /// No notification server owns `org.freedesktop.Notifications` (the center keeps the toast).
        case noServer
        /// The session bus cannot be reached or was lost.
        case busUnavailable
        /// The server did not answer in time.
        case timedOut
        /// The server answered with an error.
        case refused
        /// The toast's content cannot be sent (a NUL byte, a bad image).
        case invalidInput
        /// The toast is not on the presenter (never shown, or closed before the server accepted it).
        case notPresented
        /// The server refused a toast identical to one it showed less than a second before (KDE Plasma's
        /// `ExcessNotificationGeneration`). A replacement refused this way changed nothing on screen: the
        /// presenter keeps the notification as it is.
        case repeatedTooSoon
    }

    /// The kind of failure.
    public var kind: Kind
    /// What went wrong, in words.
    public var reason: String

    /// Creates the error.
    public init(_ kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The toast was never presented, or was closed before the server accepted it.
    public static func notPresented(_ id: String) -> PresentationError {
        PresentationError(.notPresented, reason: "toast \"\(id)\" is not on the presenter")
    }

    /// The reason.
    public var description: String { reason }

    /// Whether a server appearing later can fix it (the center then keeps the toast until the server is back).
    public var isRecoverable: Bool { kind == .noServer }

    /// What a D-Bus failure of a call to the notification server means for a toast.
    ///
    /// Only `.noServer` can be fixed by a server appearing later: no server owns the name, or the server left the
    /// bus with the call unanswered (the bus says so at once; that is not a timeout). `NoReply` after `timeout` is
    /// `.timedOut`, and its reason says how long the call waited.
    ///
    /// - Parameter timeout: The call timeout, named in the `NoReply` reason.
    public init(_ error: DBusError, timeout: Duration) {
        switch error.name {
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner:
            self.init(
                .noServer, reason: "no notification server is running (org.freedesktop.Notifications has no owner)")
        case DBusError.Name.noReply where error.isRecipientDisconnected:
            // The bus says at once that the server left with the call unanswered: not a timeout, and a server
            // appearing later can show the toast.
            self.init(.noServer, reason: "the notification server left the bus without answering")
        case DBusError.Name.noReply:
            self.init(.timedOut, reason: "the notification server did not answer within \(timeout)")
        case DBusError.Name.badAddress, DBusError.Name.noServer, DBusError.Name.fileNotFound:
            self.init(.busUnavailable, reason: "cannot reach the session bus: \(error.message)")
        case DBusError.Name.disconnected:
            self.init(.busUnavailable, reason: "the session bus connection was lost: \(error.message)")
        case "org.freedesktop.Notifications.Error.ExcessNotificationGeneration":
            // KDE Plasma refuses a notification identical to the one before it within about a second.
            self.init(
                .repeatedTooSoon,
                reason: "the notification server refused a toast identical to one it showed less than a second ago "
                    + "(\(error.name)): change its title or message, or present it again after a second")
        default:
            self.init(.refused, reason: "the notification server refused the toast: \(error)")
        }
    }

    /// What any error of a call to the notification server means for a toast.
    init(any error: any Error, timeout: Duration) {
        switch error {
        case let error as PresentationError: self = error
        case let error as ToastValidationError: self.init(.invalidInput, reason: error.description)
        case let error as DBusError: self.init(error, timeout: timeout)
        default: self.init(.refused, reason: "\(error)")
        }
    }
}

/// The name ``PresentationError`` had while only the notification server's presenter used it.
@available(*, deprecated, renamed: "PresentationError")
public typealias DesktopPresentationError = PresentationError
