/// What happens when more toasts are presented than fit on screen (``ToastCenter/maxVisible``).
public enum ToastOverflowPolicy: Sendable, Hashable {
    /// The extra toasts wait in order and come forward one by one, each with its full duration.
    case queue
    /// The oldest toast is dropped (it ends with ``ToastOutcome/replaced``) so the newest can be shown at once.
    case replaceOldest
}
