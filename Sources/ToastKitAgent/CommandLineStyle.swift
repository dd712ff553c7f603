package import ToastKit

/// The request a command line makes of the server: what notify-send would send for the same options, with
/// toastkit's own options on top. Without `-s` there is no status icon, and `-i` goes to `app_icon` as libnotify
/// puts it (a theme name, or a file as an absolute path; with `-n` it is the image instead); `-s` adds the status's icon and urgency, `-u` beats the
/// status's urgency, `-c` sets the category, `-e` makes the toast transient, every `-h` hint is added (winning over
/// the standard ones), the body is markup unless `--plain` says otherwise, and a toast without a duration of its
/// own leaves its time to the server (`expire_timeout` -1).
package struct CommandLineStyle: ToastStyle {
    package var base = ThemedToastStyle(theme: .standard)
    package var statusGiven = false
    package var icon: IconOption?
    package var appName: String?
    package var appIcon: String?
    package var urgency: ToastUrgency?
    package var category: String?
    package var transient = false
    package var hints: [Hint] = []
    package var plainText = false
    package var serverTimed = false
    /// Whether SF Symbol names are mapped (`toastkit send`), or the icon is sent as given (notify-send, dunstify).
    package var mapsIconNames = true
    /// The title exactly as given (the model's stands in with a space for dunstify's toast without text).
    package var title: String

    package init(options: SendOptions) {
        title = options.title
        mapsIconNames = options.dialect == .toastkit
        statusGiven = options.status != nil
        icon = options.icon
        appName = options.appName.flatMap { $0.isEmpty ? nil : $0 }
        appIcon = options.appIcon.flatMap { $0.isEmpty ? nil : $0 }
        urgency = options.urgency
        category = options.category
        transient = options.transient
        hints = options.hints
        plainText = options.plainText
        serverTimed = ToastOptions.duration(for: options) == nil
    }

    package func makeRequest(for toast: PresentedToast) -> ToastRequest {
        var request = base.makeRequest(for: toast)
        if title.isEmpty { request.summary = "" }
        if let appName { request.appName = appName }
        if let appIcon { request.appIcon = appIcon }
        if let icon {
            // As libnotify: the icon is the notification's app_icon, and no image hint is added — unless `-n` gives
            // the app icon: then `-i` is the image (`image-path`), as in notify-send 0.8.4.
            if appIcon == nil {
                request.icon = nil
                // The tools send the name as it is; `toastkit send` maps SF Symbol names (`trash` → `user-trash`).
                request.appIcon = mapsIconNames ? Self.wireName(of: icon) : Self.verbatim(icon)
            }
        } else if !statusGiven {
            request.icon = nil
        }
        if let urgency { request.urgency = urgency }
        if let category { request.category = category }
        if transient { request.isTransient = true }
        for hint in hints { request.hints[hint.name] = hint.value }
        request.bodyIsMarkup = !plainText
        request.leavesTimeoutToServer = serverTimed
        return request
    }

    /// The icon as given: a theme name or a path.
    package static func verbatim(_ icon: IconOption) -> String {
        switch icon {
        case .name(let name): name
        case .path(let path): path
        }
    }

    /// The icon as `app_icon` carries it: a theme name (SF Symbol names mapped), or the file's path as given.
    package static func wireName(of icon: IconOption) -> String {
        switch icon {
        case .name(let name): IconNames.freedesktopName(for: name)
        case .path(let path): path
        }
    }
}
