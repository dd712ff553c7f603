package import ToastKit

/// The standard themed style with notify-send's overrides on top: `-u` beats the status's urgency, `-c` sets the
/// category, `-e` makes the toast transient, and every `-h` hint is added (winning over the standard ones).
package struct CommandLineStyle: ToastStyle {
    package var base = ThemedToastStyle(theme: .standard)
    package var urgency: ToastUrgency?
    package var category: String?
    package var transient = false
    package var hints: [Hint] = []

    package init(options: SendOptions) {
        urgency = options.urgency
        category = options.category
        transient = options.transient
        hints = options.hints
    }

    package func makeRequest(for toast: PresentedToast) -> ToastRequest {
        var request = base.makeRequest(for: toast)
        if let urgency { request.urgency = urgency }
        if let category { request.category = category }
        if transient { request.isTransient = true }
        for hint in hints { request.hints[hint.name] = hint.value }
        return request
    }
}
