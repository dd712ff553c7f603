/// Something that happened to a toast. Read them from ``ToastCenter/events()`` or ``ToastCenter/onEvent``.
///
/// For each call of ``ToastCenter/present(_:)`` there is exactly one terminal ``ended(id:outcome:)`` event.
/// Re-presenting a live id ends the old presentation with ``ToastOutcome/replaced`` and starts a new one, so
/// N calls give N terminal events.
///
/// Events compare with `==` and are `Codable`, each case as an object with one key named after it and its labelled
/// values inside: `{"ended":{"id":"A","outcome":{"expired":{}}}}`, `{"laterStoreProblem":{"problem":{…}}}`.
public enum ToastEvent: Sendable, Hashable, Codable {
    /// The center accepted the toast; it is in front, covered or waiting.
    case presented(id: String)
    /// The toast was handed to the presenter (it reached the visible part of the stack).
    case shown(id: String)
    /// A toast already on the presenter was updated in place (replace by id, or a confirmation).
    case updated(id: String)
    /// The person invoked an action. Comes after the handler and the observer, before the effect.
    case actionInvoked(id: String, actionID: String, activationToken: String?)
    /// The person chose reply action `actionID` on a service that draws no reply field: the presenter asks for the
    /// text (``ToastPresenter/promptReply(_:)``), and the toast's time stays stopped until
    /// ``replied(id:actionID:text:)`` or ``replyCancelled(id:actionID:)``.
    case replyAsked(id: String, actionID: String)
    /// The person sent `text` with reply action `actionID` (``ToastAction/reply``). Comes after the handler and the
    /// observer, just before ``actionInvoked(id:actionID:activationToken:)`` for the same action.
    case replied(id: String, actionID: String, text: String)
    /// The person closed the reply prompt without sending, or no prompt could be shown (then a
    /// ``degraded(id:reason:)`` says why): the toast stays, and its time runs again. Also when the prompt was closed
    /// for them: the toast ended or was replaced meanwhile (its ``ended(id:outcome:)`` follows), or the presenter was
    /// detached.
    case replyCancelled(id: String, actionID: String)
    /// The presenter had to leave something out, such as actions on a server without actions. Informational.
    case degraded(id: String?, reason: String)
    /// The presenter could not show a toast for now (for example, no notification server); the center keeps
    /// it and shows it again when the presenter recovers.
    case presenterFailed(id: String?, reason: String)
    /// Do Not Disturb was on when the toast came: the center holds it, dropped it, or sent it anyway, as its
    /// ``ToastMessage/doNotDisturb`` policy says. A held toast reports ``shown(id:)`` when Do Not Disturb ends.
    case suppressed(id: String, suppression: ToastSuppression)
    /// The desktop's Do Not Disturb came on or went off (as the presenter read it; ``ToastCenter/doNotDisturb``).
    case doNotDisturbChanged(ToastDoNotDisturb)
    /// The store of ``ToastAction/later`` toasts had a problem. Nothing was deleted.
    case laterStoreProblem(LaterStoreProblem)
    /// The toast ended. Exactly one per presentation.
    case ended(id: String, outcome: ToastOutcome)

    /// Whether this is the one terminal event of a presentation.
    public var isTerminal: Bool {
        if case .ended = self { return true }
        return false
    }

    /// The toast the event is about, if any.
    public var toastID: String? {
        switch self {
        case .presented(let id), .shown(let id), .updated(let id), .actionInvoked(let id, _, _),
            .replyAsked(let id, _), .replied(let id, _, _), .replyCancelled(let id, _),
            .ended(let id, _), .suppressed(let id, _):
            id
        case .degraded(let id, _), .presenterFailed(let id, _):
            id
        case .laterStoreProblem, .doNotDisturbChanged:
            nil
        }
    }

    private enum LaterStoreProblemCodingKeys: String, CodingKey {
        case _0 = "problem"
    }
}
