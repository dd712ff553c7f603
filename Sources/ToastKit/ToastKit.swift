@_exported public import FreedesktopNotifications
@_exported public import ToastModel

extension ToastCenter {
    /// A center that shows its toasts on the desktop: desktop notifications through the session bus's
    /// `org.freedesktop.Notifications` (connecting at first use).
    ///
    /// ```swift
    /// let toasts = ToastCenter()
    /// toasts.present(.normal, title: "Cambios guardados")
    /// ```
    /// - Parameter defaultDuration: The duration of `.automatic` toasts (4 seconds by default).
    public convenience init(defaultDuration: ToastDuration = ToastDuration.standardDefault) {
        self.init(defaultDuration: defaultDuration, presenter: DesktopNotificationPresenter())
    }

    /// A center on the desktop with the app's identity and options (app name, icon, `desktop-entry`, bus, markup).
    ///
    /// ```swift
    /// let toasts = ToastCenter(
    ///     desktop: DesktopPresenterConfiguration(appName: "Fotos", appIcon: "org.example.Fotos",
    ///                                            desktopEntry: "org.example.Fotos"))
    /// ```
    public convenience init(
        desktop configuration: DesktopPresenterConfiguration,
        defaultDuration: ToastDuration = ToastDuration.standardDefault,
        maxVisible: Int = 1
    ) {
        self.init(
            defaultDuration: defaultDuration, maxVisible: maxVisible,
            presenter: DesktopNotificationPresenter(configuration: configuration))
    }
}
