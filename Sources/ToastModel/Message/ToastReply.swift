// Inline reply: an action that asks the person for a short text (the field, the prompt, and what the prompt gave).
//
// A reply action is a ``ToastAction`` with a ``ToastAction/reply`` field. Where the service draws a text field in
// the toast (Plasma's `inline-reply`), the person types there; elsewhere the action is a button, and choosing it
// asks the presenter to prompt for the text (``ToastPresenter/promptReply(_:)``; the desktop presenter opens a small
// dialog). The toast's time runs on while the person types, with at least ``ToastReplyPrompt/allowance`` left; when
// it is up the prompt is closed and the toast expires. The action's handler gets the text in
// ``ToastActionContext/reply``; the center reports ``ToastEvent/replied(id:actionID:text:)`` before
// ``ToastEvent/actionInvoked(id:actionID:activationToken:)``, or ``ToastEvent/replyCancelled(id:actionID:)`` when
// the person closed the prompt (the toast stays, with the time it has).

/// The text field of a reply action.
public struct ToastReplyField: Sendable, Hashable, Codable {
    /// The grey text in the empty field, such as "Escribe una respuesta…".
    public var placeholder: String?
    /// The label of the field's send button, where the service draws one ("Send" when nil).
    public var submitTitle: String?

    /// Creates a reply field.
    public init(placeholder: String? = nil, submitTitle: String? = nil) {
        self.placeholder = placeholder
        self.submitTitle = submitTitle
    }
}

extension ToastAction {
    /// An action that asks the person for a short text and hands it to `handler` in ``ToastActionContext/reply``.
    ///
    /// ```swift
    /// let answer = ToastAction.reply(title: "Responder", placeholder: "Escribe…") { context in
    ///     chat.send(context.reply ?? "", to: context.toast.id)
    /// }
    /// center.present(ToastMessage(title: "Ana", message: "¿Comemos?", swipeActions: .init(leading: answer)))
    /// ```
    /// - Parameters:
    ///   - id: The id reported in events; defaults to `"reply"`.
    ///   - title: The button's label (on Plasma, the label that opens the field).
    ///   - placeholder: The grey text in the empty field.
    ///   - submitTitle: The send button's label, where the service draws one.
    ///   - confirmation: Text shown briefly in place of the toast once the reply is sent.
    ///   - handler: Runs with the text once the person sends it.
    public static func reply(
        id: String = "reply",
        title: String,
        placeholder: String? = nil,
        submitTitle: String? = nil,
        confirmation: String? = nil,
        handler: @escaping @Sendable (ToastActionContext) -> Void = { _ in }
    ) -> ToastAction {
        var action = ToastAction.withContext(id: id, title: title, confirmation: confirmation, handler: handler)
        action.reply = ToastReplyField(placeholder: placeholder, submitTitle: submitTitle)
        return action
    }

    /// An action that asks the person for a short text and hands it to the `async` `handler`, which the center
    /// starts in a task of its own.
    public static func reply(
        id: String = "reply",
        title: String,
        placeholder: String? = nil,
        submitTitle: String? = nil,
        confirmation: String? = nil,
        handler: @escaping @Sendable (ToastActionContext) async -> Void
    ) -> ToastAction {
        var action = ToastAction.withContext(id: id, title: title, confirmation: confirmation, handler: handler)
        action.reply = ToastReplyField(placeholder: placeholder, submitTitle: submitTitle)
        return action
    }
}

/// What a presenter is asked when the person chose a reply action on a service without a text field of its own.
public struct ToastReplyPrompt: Sendable, Hashable {
    /// The least time a timed toast has left once its reply prompt opens: one minute to type. The toast's time runs on
    /// meanwhile (``ToastStack/Configuration/replyAllowance``); when it is up, the prompt is closed (the person's
    /// text no longer answers) and the toast expires, so a prompt that never returns holds no wait for ever.
    public static let allowance: Duration = .seconds(60)

    /// The toast's id.
    public var toastID: String
    /// The toast's title, for the prompt's title.
    public var title: String
    /// The toast's message, shown above the field.
    public var message: String?
    /// The action's label.
    public var actionTitle: String
    /// The field.
    public var field: ToastReplyField
    /// The desktop's activation token that came with the action, for the prompt's window (Wayland focus).
    public var activationToken: String?

    /// Creates a prompt request.
    public init(
        toastID: String, title: String, message: String? = nil, actionTitle: String, field: ToastReplyField,
        activationToken: String? = nil
    ) {
        self.toastID = toastID
        self.title = title
        self.message = message
        self.actionTitle = actionTitle
        self.field = field
        self.activationToken = activationToken
    }
}

/// What came of a reply prompt.
public enum ToastReplyPromptResult: Sendable, Hashable {
    /// The person sent this text.
    case text(String)
    /// The person closed the prompt without sending.
    case cancelled
    /// No prompt could be shown; the reason says what to install or set.
    case unavailable(reason: String)
}
