/// Something the person can do with a toast: tap it, or pick one of its swipe actions.
///
/// When the person invokes an action, ``ToastCenter`` runs, in this order (M5):
/// 1. the action's handler,
/// 2. the center's ``ToastCenter/onToastAction`` observer,
/// 3. the action's effect: the toast is dismissed; or, with a ``confirmation``, it is replaced for a moment by
///    the confirmation text; or, for the built-in ``later``, it is kept aside until the host is active again.
///
/// Handlers run on whatever thread the presenter reports from, never while the center holds its lock, so a
/// handler may call back into the center (for example to present another toast).
///
/// A handler may be `async`: `ToastAction(title: "Reintentar") { _ in await upload.retry() }`. The center starts
/// it in a task of its own and goes on at once (the observer, the event and the effect do not wait for it, so the
/// toast leaves the screen or shows its confirmation right away); ``ToastCenter/flush()`` waits for the handlers
/// still running, so a short-lived program can let them finish before it exits.
///
/// ## Ids
/// The ``id`` is what events and the observer report. When you leave it out, the title is used.
/// At the presenter level the tap action is always sent under the key `"default"` (the desktop's
/// convention for "the notification itself was clicked"); events still report the action's own ``id``.
/// For that reason a swipe action cannot use the id `"default"`.
///
/// ## Comparing and storing
/// Actions compare with `==`, hash and are `Codable` by what they show and do — id, title, icon, confirmation,
/// effect, built-in label — never by their handler (closures can neither be compared nor stored). A decoded action
/// has a handler that does nothing.
public struct ToastAction: Sendable, Hashable, Identifiable {
    /// What the center does after the handler and the observer have run.
    public enum Effect: String, Sendable, Hashable, Codable {
        /// The toast ends (after showing ``ToastAction/confirmation`` briefly, if there is one).
        case dismiss
        /// The toast is kept aside and comes back when the host reports activity (M6).
        case later
    }

    /// The id reported in events and to the observer.
    public var id: String
    /// The label shown for the action. Built-in actions are shown with their localized label instead.
    public var title: String
    /// An optional icon for the action (shown where the server supports action icons).
    public var icon: ToastIcon?
    /// Text that briefly replaces the toast after the action, such as "Archivado".
    public var confirmation: String?
    /// What happens after the handler and the observer.
    public var effect: Effect
    /// The built-in label this action is shown with, if it is a built-in action such as ``later``.
    public var builtInLabel: ToastLabel?
    /// For a ``Effect/later`` action: the toast comes back by itself this long after the person chose it (a snooze,
    /// ``later(after:)``); nil: it comes back when the host is active again.
    public var snooze: Duration?
    /// For a reply action (made by `ToastAction.reply(title:…)`): its text field; the handler gets the text in
    /// ``ToastActionContext/reply``.
    public var reply: ToastReplyField?

    let handler: Handler

    /// What runs when the action is invoked: a plain closure, or an `async` one the center starts in a task.
    enum Handler: Sendable {
        case sync(@Sendable (ToastActionContext) -> Void)
        case async(@Sendable (ToastActionContext) async -> Void)
    }

    /// Creates an action whose handler receives the toast.
    ///
    /// ```swift
    /// let archive = ToastAction(id: "archive", title: "Archivar", icon: .system("archivebox"),
    ///                           confirmation: "Archivado") { toast in
    ///     store.archive(toast.id)
    /// }
    /// ```
    /// - Parameters:
    ///   - id: The id reported in events; defaults to `title`.
    ///   - title: The label shown for the action.
    ///   - icon: An optional icon.
    ///   - confirmation: Text shown briefly in place of the toast after the action.
    ///   - handler: Runs first when the action is invoked.
    public init(
        id: String? = nil,
        title: String,
        icon: ToastIcon? = nil,
        confirmation: String? = nil,
        handler: @escaping @Sendable (ToastMessage) -> Void = { _ in }
    ) {
        self.init(
            id: id ?? title, title: title, icon: icon, confirmation: confirmation, effect: .dismiss,
            builtInLabel: nil, handler: .sync { context in handler(context.toast) })
    }

    /// Creates an action whose `async` handler receives the toast. The center starts the handler in a task of its
    /// own and does not wait for it (see "Ids" above and ``ToastCenter/flush()``).
    ///
    /// ```swift
    /// let retry = ToastAction(id: "retry", title: "Reintentar") { _ in
    ///     try? await Task.sleep(for: .seconds(1))
    /// }
    /// ```
    /// - Parameters:
    ///   - id: The id reported in events; defaults to `title`.
    ///   - title: The label shown for the action.
    ///   - icon: An optional icon.
    ///   - confirmation: Text shown briefly in place of the toast after the action.
    ///   - handler: Started first when the action is invoked.
    public init(
        id: String? = nil,
        title: String,
        icon: ToastIcon? = nil,
        confirmation: String? = nil,
        handler: @escaping @Sendable (ToastMessage) async -> Void
    ) {
        self.init(
            id: id ?? title, title: title, icon: icon, confirmation: confirmation, effect: .dismiss,
            builtInLabel: nil, handler: .async { context in await handler(context.toast) })
    }

    /// Creates an action whose handler receives the whole ``ToastActionContext``, including the desktop's
    /// activation token (needed to raise a window on Wayland).
    ///
    /// This is a static function rather than another initializer so that a trailing closure such as
    /// `{ toast in … }` is never ambiguous.
    public static func withContext(
        id: String? = nil,
        title: String,
        icon: ToastIcon? = nil,
        confirmation: String? = nil,
        handler: @escaping @Sendable (ToastActionContext) -> Void
    ) -> ToastAction {
        ToastAction(
            id: id ?? title, title: title, icon: icon, confirmation: confirmation, effect: .dismiss,
            builtInLabel: nil, handler: .sync(handler))
    }

    /// Creates an action whose `async` handler receives the whole ``ToastActionContext``; the center starts it in
    /// a task of its own and does not wait for it.
    public static func withContext(
        id: String? = nil,
        title: String,
        icon: ToastIcon? = nil,
        confirmation: String? = nil,
        handler: @escaping @Sendable (ToastActionContext) async -> Void
    ) -> ToastAction {
        ToastAction(
            id: id ?? title, title: title, icon: icon, confirmation: confirmation, effect: .dismiss,
            builtInLabel: nil, handler: .async(handler))
    }

    init(
        id: String,
        title: String,
        icon: ToastIcon?,
        confirmation: String?,
        effect: Effect,
        builtInLabel: ToastLabel?,
        handler: Handler
    ) {
        self.id = id
        self.title = title
        self.icon = icon
        self.confirmation = confirmation
        self.effect = effect
        self.builtInLabel = builtInLabel
        self.handler = handler
    }

    /// The built-in "Later" action (M6): the toast leaves the screen and is kept; it comes back when the host
    /// calls ``ToastCenter/hostDidBecomeActive()``, even after the program restarts. Its id is `"later"`.
    public static var later: ToastAction {
        ToastAction(
            id: "later", title: "Later", icon: nil, confirmation: nil, effect: .later, builtInLabel: .later,
            handler: .sync { _ in })
    }

    /// The built-in "Later" action with a time (a snooze): the toast leaves the screen, is kept as with ``later``, and
    /// comes back by itself `delay` after the person chose it, on the center's clock. Until then it is in the center's
    /// Later store: a center of a later run of the program brings it back (at once if its time has passed) when the
    /// host calls ``ToastCenter/hostDidBecomeActive()``. Its id is `"later"`.
    ///
    /// ```swift
    /// ToastMessage(title: "Reunión a las 11", swipeActions: .init(leading: .later(after: .seconds(600))))
    /// ```
    public static func later(after delay: Duration) -> ToastAction {
        var action = ToastAction.later
        action.snooze = max(.zero, delay)
        return action
    }

    /// A built-in "Dismiss" action that simply ends the toast. Its id is `"dismiss"`.
    public static var dismiss: ToastAction {
        ToastAction(
            id: "dismiss", title: "Dismiss", icon: nil, confirmation: nil, effect: .dismiss,
            builtInLabel: .dismiss, handler: .sync { _ in })
    }

    /// Returns a copy whose handler is `handler`, keeping id, title, icon, confirmation and effect.
    ///
    /// Useful to give restored ``later`` toasts their handlers back (closures cannot be stored on disk).
    public func withHandler(_ handler: @escaping @Sendable (ToastActionContext) -> Void) -> ToastAction {
        var copy = ToastAction(
            id: id, title: title, icon: icon, confirmation: confirmation, effect: effect,
            builtInLabel: builtInLabel, handler: .sync(handler))
        copy.snooze = snooze
        copy.reply = reply
        return copy
    }

    /// Returns a copy whose handler is the `async` `handler`, keeping id, title, icon, confirmation and effect.
    public func withHandler(_ handler: @escaping @Sendable (ToastActionContext) async -> Void) -> ToastAction {
        var copy = ToastAction(
            id: id, title: title, icon: icon, confirmation: confirmation, effect: effect,
            builtInLabel: builtInLabel, handler: .async(handler))
        copy.snooze = snooze
        copy.reply = reply
        return copy
    }

    /// Whether two actions show and do the same: their handlers are not compared.
    public static func == (lhs: ToastAction, rhs: ToastAction) -> Bool {
        lhs.id == rhs.id && lhs.title == rhs.title && lhs.icon == rhs.icon && lhs.confirmation == rhs.confirmation
            && lhs.effect == rhs.effect && lhs.builtInLabel == rhs.builtInLabel && lhs.snooze == rhs.snooze
            && lhs.reply == rhs.reply
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(title)
        hasher.combine(icon)
        hasher.combine(confirmation)
        hasher.combine(effect)
        hasher.combine(builtInLabel)
        hasher.combine(snooze)
        hasher.combine(reply)
    }

    /// Runs the handler. The center calls this; it is public so custom drivers and tests can too.
    ///
    /// - Returns: for an `async` handler, the task it was started in (await its `value` to wait for the end);
    ///   `nil` for a plain handler, which has run when this returns.
    @discardableResult
    public func runHandler(_ context: ToastActionContext) -> Task<Void, Never>? {
        switch handler {
        case .sync(let body):
            body(context)
            return nil
        case .async(let body):
            return Task { await body(context) }
        }
    }
}

/// What an action handler and the center's observer receive when an action is invoked.
public struct ToastActionContext: Sendable {
    /// The toast the action belongs to.
    public var toast: ToastMessage
    /// The invoked action's own id (not the presenter-level `"default"` key of a tap action).
    public var actionID: String
    /// The activation token the desktop sent with the action, if any (`ActivationToken` signal); pass it to
    /// the window you raise.
    public var activationToken: String?
    /// For a reply action, the text the person sent; nil for any other action.
    public var reply: String?

    /// Creates a context.
    public init(toast: ToastMessage, actionID: String, activationToken: String? = nil, reply: String? = nil) {
        self.toast = toast
        self.actionID = actionID
        self.activationToken = activationToken
        self.reply = reply
    }
}

/// The swipe actions of a toast: on the desktop, two buttons, leading first. `Codable` as
/// `{"leading": action, "trailing": action}`.
public struct ToastSwipeActions: Sendable, Hashable, Codable {
    /// The action revealed by swiping from the leading edge; the first button on the desktop.
    public var leading: ToastAction?
    /// The action revealed by swiping from the trailing edge; the second button on the desktop.
    public var trailing: ToastAction?

    /// Creates swipe actions.
    public init(leading: ToastAction? = nil, trailing: ToastAction? = nil) {
        self.leading = leading
        self.trailing = trailing
    }
}
