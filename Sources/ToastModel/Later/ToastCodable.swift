import FoundationEssentials

// The on-disk forms used by `ToastLaterRecord` (and by anyone who wants to store toasts as JSON).

extension ToastIcon: Codable {
    private enum CodingKeys: String, CodingKey {
        case system, file, image
    }

    private struct StoredImage: Codable {
        var width: Int
        var height: Int
        var rgba: Data
    }

    /// Decodes `{"system": name}`, `{"file": path}` or `{"image": {"width", "height", "rgba" (base64)}}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let name = try container.decodeIfPresent(String.self, forKey: .system) {
            self = .system(name)
        } else if let path = try container.decodeIfPresent(String.self, forKey: .file) {
            self = .file(path)
        } else if let image = try container.decodeIfPresent(StoredImage.self, forKey: .image) {
            self = .image(ToastImage(width: image.width, height: image.height, rgba: Array(image.rgba)))
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
        case .image(let image):
            try container.encode(
                StoredImage(width: image.width, height: image.height, rgba: Data(image.rgba)), forKey: .image)
        }
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
