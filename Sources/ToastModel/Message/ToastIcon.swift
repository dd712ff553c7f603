/// The icon shown with a toast.
public enum ToastIcon: Sendable, Hashable {
    /// A named icon from the icon theme, such as `"dialog-information"`, or an SF Symbol name such as
    /// `"photo.on.rectangle"` (the desktop presenter maps common symbol names to freedesktop names). An empty name
    /// is no icon: the toast is shown without one.
    case system(String)
    /// An image file, given as an absolute path. An empty path is no icon: the toast is shown without one.
    case file(String)
    /// Raw pixels carried with the toast. An empty image (no pixels, no bytes: ``ToastImage/isEmpty``) is no icon:
    /// the toast is shown without one.
    case image(ToastImage)

    /// An icon made of raw, non-premultiplied RGBA pixels, row by row, 4 bytes per pixel.
    ///
    /// The byte count must be `width * height * 4`; a mismatch is reported when the toast is presented.
    public static func image(width: Int, height: Int, rgba: [UInt8]) -> ToastIcon {
        .image(ToastImage(width: width, height: height, rgba: rgba))
    }
}

/// Raw pixels for ``ToastIcon/image(_:)``: non-premultiplied RGBA, 8 bits per channel, rows without padding.
///
/// The initializer does not check the byte count, so that building a message never traps; ``validate(field:)``
/// (run by ``ToastCenter/present(_:)``) does.
public struct ToastImage: Sendable, Hashable {
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int
    /// `width * height * 4` bytes: red, green, blue, alpha for each pixel, row by row.
    public var rgba: [UInt8]

    /// Creates an image from raw RGBA bytes.
    public init(width: Int, height: Int, rgba: [UInt8]) {
        self.width = width
        self.height = height
        self.rgba = rgba
    }

    /// Whether the image is empty: 0×0 pixels and no bytes, as an image that could not be read often is. An empty
    /// image is no icon (the toast is shown without one), not an invalid one.
    public var isEmpty: Bool { width == 0 && height == 0 && rgba.isEmpty }

    /// The number of bytes in one row (`width * 4`), as the desktop's `image-data` hint wants it.
    public var rowStride: Int { width &* 4 }

    /// Checks that the size is positive and the byte count matches it.
    /// - Throws: ``ToastValidationError`` naming `field` (for example `"icon"`).
    public func validate(field: String = "icon") throws(ToastValidationError) {
        guard width > 0, height > 0 else {
            throw ToastValidationError(
                field: field, reason: "image size must be positive, got \(width)x\(height)")
        }
        let (pixels, overflow1) = width.multipliedReportingOverflow(by: height)
        let (bytes, overflow2) = pixels.multipliedReportingOverflow(by: 4)
        guard !overflow1, !overflow2 else {
            throw ToastValidationError(field: field, reason: "image size \(width)x\(height) is too large")
        }
        guard bytes == rgba.count else {
            throw ToastValidationError(
                field: field,
                reason: "image of \(width)x\(height) RGBA pixels needs \(bytes) bytes, got \(rgba.count)")
        }
    }
}
