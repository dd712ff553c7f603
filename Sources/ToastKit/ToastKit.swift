@_exported public import FreedesktopNotifications
@_exported public import ToastModel

extension ToastCenter {
    /// A center that shows its toasts on the desktop: desktop notifications through the session bus's
    /// `org.freedesktop.Notifications`, or, when the app runs in a Flatpak or Snap sandbox, through the notification
    /// portal (`org.freedesktop.portal.Notification`), connecting at first use. See ``FreedesktopNotifications/NotificationBackend``.
    ///
    /// ```swift
    /// let toasts = ToastCenter()
    /// toasts.present(.normal, title: "Cambios guardados")
    /// ```
    ///
    /// Toasts kept with ``ToastAction/later`` are stored in `$XDG_STATE_HOME/toastkit/later/<program>.json`
    /// (``FileLaterStore/standard(environment:)``, the program's name as its application) and survive a restart.
    /// - Parameter defaultDuration: The duration of `.automatic` toasts (4 seconds by default).
    public convenience init(defaultDuration: ToastDuration = ToastDuration.standardDefault) {
        self.init(
            defaultDuration: defaultDuration, presenter: PresenterConfiguration().makePresenter(),
            laterStore: FileLaterStore.standard())
    }

    /// A center on the desktop with the app's identity and options (app name, icon, `desktop-entry`, bus, markup,
    /// and ``FreedesktopNotifications/PresenterConfiguration/backend``: the notification server, the portal, or the automatic choice).
    ///
    /// ```swift
    /// let toasts = ToastCenter(
    ///     desktop: PresenterConfiguration(appName: "Fotos", appIcon: "org.example.Fotos",
    ///                                            desktopEntry: "org.example.Fotos"))
    /// ```
    ///
    /// Every option of the center is here too: see ``ToastModel/ToastCenter/init(defaultDuration:maxVisible:overflow:presenter:clock:laterStore:labels:confirmationDuration:)``.
    /// Kept toasts are the app's own: they go to ``FileLaterStore/standard(application:environment:)`` with the
    /// configuration's `appName`, so two apps never see each other's and their ids are kept apart. Pass a store of
    /// your own with ``init(desktop:defaultDuration:maxVisible:overflow:laterStore:labels:confirmationDuration:)``.
    public convenience init(
        desktop configuration: PresenterConfiguration,
        defaultDuration: ToastDuration = ToastDuration.standardDefault,
        maxVisible: Int = ToastStack.Configuration.standardMaxVisible,
        overflow: ToastOverflowPolicy = .queue,
        labels: ToastLabels = .current,
        confirmationDuration: Duration = .milliseconds(1500)
    ) {
        self.init(
            desktop: configuration, defaultDuration: defaultDuration, maxVisible: maxVisible, overflow: overflow,
            laterStore: FileLaterStore.standard(application: configuration.appName), labels: labels,
            confirmationDuration: confirmationDuration)
    }

    /// A center on the desktop with the app's identity and options, keeping toasts chosen for Later in
    /// `laterStore` (`nil`: in memory only, for this run).
    public convenience init(
        desktop configuration: PresenterConfiguration,
        defaultDuration: ToastDuration = ToastDuration.standardDefault,
        maxVisible: Int = ToastStack.Configuration.standardMaxVisible,
        overflow: ToastOverflowPolicy = .queue,
        laterStore: (any LaterStore)?,
        labels: ToastLabels = .current,
        confirmationDuration: Duration = .milliseconds(1500)
    ) {
        self.init(
            defaultDuration: defaultDuration, maxVisible: maxVisible, overflow: overflow,
            presenter: configuration.makePresenter(), laterStore: laterStore,
            labels: labels, confirmationDuration: confirmationDuration)
    }
}
