/// The sound a toast asks for: a name from the desktop's sound theme, a sound file, or silence. Each presenter plays
/// it the way its service can — the notification server where it really plays sounds, the process itself elsewhere —
/// once, when the toast first appears: never for an update in place, and never while Do Not Disturb is on.
public enum ToastSound: Sendable, Hashable {
    /// A name from the freedesktop sound theme, such as `"message-new-instant"` or `"complete"`.
    case named(String)
    /// A sound file (an absolute path; `.oga`, `.ogg` or `.wav`).
    case file(String)
    /// No sound, even where the server would play one of its own (the `suppress-sound` hint).
    case silent

    /// The theme's sound for a new message, `message-new-instant`: what `--sound default` asks for.
    public static let `default` = ToastSound.named("message-new-instant")

    /// Reads the text form the command line and the JSON form share: `silent`, `default`, an absolute path (a file),
    /// or a sound-theme name. Nil for empty text or a relative path, which could be either.
    public init?(text: String) {
        switch text {
        case "": return nil
        case "silent": self = .silent
        case "default": self = .default
        default:
            if text.hasPrefix("/") {
                self = .file(text)
            } else if text.contains("/") {
                return nil
            } else {
                self = .named(text)
            }
        }
    }

    /// The text form: `silent`, the path of a file, or the name.
    public var text: String {
        switch self {
        case .named(let name): name
        case .file(let path): path
        case .silent: "silent"
        }
    }
}

extension ToastSound: Codable {
    /// Decodes the text form (``init(text:)``): `"silent"`, `"default"`, an absolute path, or a sound-theme name.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let sound = ToastSound(text: text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "sound must be a sound-theme name, an absolute file path, \"default\" or \"silent\"")
        }
        self = sound
    }

    /// Encodes the text form (``text``).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
