import FoundationEssentials

// The JSON forms of the value types: a message without its handlers, its icon, duration and actions. The store of
// kept toasts (`ToastLaterRecord`) uses them too.

extension ToastIcon: Codable {
    private enum CodingKeys: String, CodingKey {
        case system, file, image
    }

    /// Decodes `{"system": name}`, `{"file": path}` or `{"image": {"width", "height", "rgba" (base64)}}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let name = try container.decodeIfPresent(String.self, forKey: .system) {
            self = .system(name)
        } else if let path = try container.decodeIfPresent(String.self, forKey: .file) {
            self = .file(path)
        } else if let image = try container.decodeIfPresent(ToastImage.self, forKey: .image) {
            self = .image(image)
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "icon needs system, file or image"))
        }
    }

    /// Encodes as ``init(from:)`` reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .system(let name): try container.encode(name, forKey: .system)
        case .file(let path): try container.encode(path, forKey: .file)
        case .image(let image): try container.encode(image, forKey: .image)
        }
    }
}

extension ToastImage: Codable {
    private enum CodingKeys: String, CodingKey {
        case width, height, rgba
    }

    /// Decodes `{"width", "height", "rgba"}`, the pixels as base64 (the byte count is checked when the toast is
    /// presented, as for any image).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            width: try container.decode(Int.self, forKey: .width),
            height: try container.decode(Int.self, forKey: .height),
            rgba: Array(try container.decode(Data.self, forKey: .rgba)))
    }

    /// Encodes as ``init(from:)`` reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(Data(rgba), forKey: .rgba)
    }
}

extension ToastAction: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, title, icon, confirmation, effect, builtInLabel
        case snoozeSeconds, reply
    }

    /// Decodes an action without a handler: `{"id", "title", "icon"?, "confirmation"?, "effect"?, "builtInLabel"?,
    /// "snoozeSeconds"?, "reply"?}` (`effect` is `"dismiss"` when absent; `id` is the title when absent; `reply`:
    /// `{"placeholder"?, "submitTitle"?}` for a reply action).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let title = try container.decode(String.self, forKey: .title)
        self.init(
            id: try container.decodeIfPresent(String.self, forKey: .id) ?? title,
            title: title,
            icon: try container.decodeIfPresent(ToastIcon.self, forKey: .icon),
            confirmation: try container.decodeIfPresent(String.self, forKey: .confirmation),
            effect: try container.decodeIfPresent(Effect.self, forKey: .effect) ?? .dismiss,
            builtInLabel: try container.decodeIfPresent(ToastLabel.self, forKey: .builtInLabel),
            handler: .sync { _ in })
        if let seconds = try container.decodeIfPresent(Double.self, forKey: .snoozeSeconds) {
            guard seconds.isFinite, seconds >= 0, seconds <= ToastDuration.maximumSeconds else {
                throw DecodingError.dataCorruptedError(
                    forKey: .snoozeSeconds, in: container, debugDescription: "snoozeSeconds \(seconds) is out of range")
            }
            snooze = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        reply = try container.decodeIfPresent(ToastReplyField.self, forKey: .reply)
    }

    /// Encodes what the action shows and does; the handler is not stored.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encodeIfPresent(icon, forKey: .icon)
        try container.encodeIfPresent(confirmation, forKey: .confirmation)
        try container.encode(effect, forKey: .effect)
        try container.encodeIfPresent(builtInLabel, forKey: .builtInLabel)
        try container.encodeIfPresent(snooze.map(\.seconds), forKey: .snoozeSeconds)
        try container.encodeIfPresent(reply, forKey: .reply)
    }
}

extension ToastMessage: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, status, title, message, icon, duration, tapAction, swipeActions, progress, doNotDisturb, sound
    }

    /// Decodes `{"id", "status", "title", "message"?, "icon"?, "duration", "tapAction"?, "swipeActions"?,
    /// "progress"?, "doNotDisturb"?, "sound"?}` (`progress`: a fraction from 0 to 1, or `"indeterminate"`;
    /// `doNotDisturb`: `"hold"`, `"drop"` or `"show"`; `sound`: a sound-theme name, an absolute file path, `"default"`
    /// or `"silent"`). Only `title` is required, as in
    /// ``init(id:status:title:message:icon:duration:tapAction:swipeActions:progress:doNotDisturb:sound:)``: a missing id is a
    /// new UUID, a missing status `"normal"`, a missing duration `"automatic"`, a missing `doNotDisturb` `"hold"`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decodeIfPresent(String.self, forKey: .id) ?? UUID().uuidString,
            status: try container.decodeIfPresent(ToastStatus.self, forKey: .status) ?? .normal,
            title: try container.decode(String.self, forKey: .title),
            message: try container.decodeIfPresent(String.self, forKey: .message),
            icon: try container.decodeIfPresent(ToastIcon.self, forKey: .icon),
            duration: try container.decodeIfPresent(ToastDuration.self, forKey: .duration) ?? .automatic,
            tapAction: try container.decodeIfPresent(ToastAction.self, forKey: .tapAction),
            swipeActions: try container.decodeIfPresent(ToastSwipeActions.self, forKey: .swipeActions),
            doNotDisturb: try container.decodeIfPresent(ToastDoNotDisturbPolicy.self, forKey: .doNotDisturb) ?? .hold,
            sound: try container.decodeIfPresent(ToastSound.self, forKey: .sound))
        if container.contains(.progress) {
            if let fraction = try? container.decode(Double.self, forKey: .progress) {
                guard fraction.isFinite else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .progress, in: container, debugDescription: "progress must be a number from 0 to 1")
                }
                progress = .fraction(fraction)
            } else if try container.decode(String.self, forKey: .progress) == "indeterminate" {
                progress = .indeterminate
            } else {
                throw DecodingError.dataCorruptedError(
                    forKey: .progress, in: container,
                    debugDescription: "progress must be a number from 0 to 1 or \"indeterminate\"")
            }
        }
    }

    /// Encodes the message without its actions' handlers.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(status, forKey: .status)
        try container.encode(title, forKey: .title)
        try container.encodeIfPresent(message, forKey: .message)
        try container.encodeIfPresent(icon, forKey: .icon)
        try container.encode(duration, forKey: .duration)
        try container.encodeIfPresent(tapAction, forKey: .tapAction)
        try container.encodeIfPresent(swipeActions, forKey: .swipeActions)
        switch progress {
        case .fraction(let value)?: try container.encode(value, forKey: .progress)
        case .indeterminate?: try container.encode("indeterminate", forKey: .progress)
        case nil: break
        }
        if doNotDisturb != .hold { try container.encode(doNotDisturb, forKey: .doNotDisturb) }
        try container.encodeIfPresent(sound, forKey: .sound)
    }
}

extension ToastDuration: Codable {
    /// Decodes `"automatic"`, `"indefinite"` or a number of seconds.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let seconds = try? container.decode(Double.self) {
            self = .seconds(seconds)
            return
        }
        switch try container.decode(String.self) {
        case "automatic": self = .automatic
        case "indefinite": self = .indefinite
        case let other:
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown duration \(other)")
        }
    }

    /// Encodes as ``init(from:)`` reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .automatic: try container.encode("automatic")
        case .indefinite: try container.encode("indefinite")
        case .seconds(let seconds): try container.encode(seconds)
        }
    }
}
