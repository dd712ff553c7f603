// Plasma's JobView service (`org.kde.JobViewServer`), the one way Plasma draws a progress bar: which toasts go there,
// the view a progress toast becomes, and the calls that make, update and end it (pure; the desktop presenter's machine
// decides when, its backend sends them).
package import DBus
package import ToastModel

/// A progress toast on Plasma as a job view: a popup with a bar (busy while the progress has no measure), the toast's
/// title and message, under the app's name and icon. Plasma 5.27's notification server ignores the `value` hint; its
/// job service draws the bar, but only for a view whose process stays: when the connection that asked for the view
/// leaves the bus, Plasma ends the job as failed ("Application closed unexpectedly"). So the desktop presenter uses it
/// only where ``PresenterConfiguration/drawsProgressAsJobs`` (a process that lives on: an app, the agent), for a toast
/// with progress and no actions (a job view has no buttons); a toast whose progress ends becomes a notification again.
package enum JobViews {
    /// The service's name and object.
    package static let busName: BusName = "org.kde.JobViewServer"
    static let serverPath: ObjectPath = "/JobViewServer"
    static let serverInterface: InterfaceName = "org.kde.JobViewServerV2"
    static let viewInterface: InterfaceName = "org.kde.JobViewV3"

    /// `KIO::ERR_USER_CANCELED`: a job ended with it leaves silently (any other code shows a failure, 0 a "finished"
    /// notification of Plasma's own, which the toast's own end replaces).
    static let silentEnd: UInt32 = 1

    /// Whether `presentation` is shown as a job view on a server that has the service: a toast with progress and
    /// no actions (a view has no buttons, and no tap).
    package static func shows(_ presentation: ToastPresentation) -> Bool {
        presentation.toast.progress != nil && presentation.toast.actions.isEmpty && !presentation.toast.isConfirmation
    }

    /// What the view shows of `presentation`: its title, its message as the line under it, and how far it has come
    /// (no `percent` while there is no measure: Plasma then draws a busy bar).
    static func properties(of presentation: ToastPresentation) -> [(String, DBusValue)] {
        var properties: [(String, DBusValue)] = [
            ("title", .string(presentation.toast.title)),
            ("infoMessage", .string(presentation.toast.message ?? "")),
        ]
        if let percent = presentation.toast.progress?.percent {
            properties.append(("percent", .uint32(UInt32(percent))))
        }
        return properties
    }

    /// `requestView(s desktopEntry, i capabilities, a{sv} hints) → o`: a view that can be neither cancelled nor
    /// suspended (a toast is not the task), shown at once, with the app's name and icon as the notification would
    /// carry them (`mapped`), and the first content.
    static func request(_ presentation: ToastPresentation, mapped: NotifyCall) -> DBusMethodCall {
        var hints: [(String, DBusValue)] = [
            ("application-display-name", .string(mapped.appName)), ("immediate", .boolean(true)),
        ]
        if !mapped.appIcon.isEmpty { hints.append(("application-icon-name", .string(mapped.appIcon))) }
        if mapped.hints["transient"]?.boolValue == true { hints.append(("transient", .boolean(true))) }
        let desktopEntry = mapped.hints["desktop-entry"]?.stringValue ?? ""
        return DBusMethodCall(
            destination: busName, path: serverPath, interface: serverInterface, member: "requestView",
            arguments: [
                .string(desktopEntry), .int32(0), .variantDictionary(hints + properties(of: presentation)),
            ])
    }

    /// The view's path from a `requestView` reply.
    static func path(from reply: DBusMessage) throws(DBusError) -> String {
        guard case .objectPath(let path) = try reply.arguments("o")[0] else {
            throw DBusError(name: DBusError.Name.invalidSignature, message: "requestView reply has no object path")
        }
        return path.rawValue
    }

    /// `update(a{sv})` of the view at `path`, with `presentation`'s content.
    static func update(_ presentation: ToastPresentation) -> [DBusValue] {
        [.variantDictionary(properties(of: presentation))]
    }

    /// `terminate(u errorCode, s message, a{sv})`: the view leaves without a word.
    static let terminate: [DBusValue] = [.uint32(silentEnd), .string(""), .variantDictionary([])]
}
