import ToastModel

/// Icons as the notification portal takes them: a themed name, or the bytes of a PNG, JPEG or SVG image of at most
/// 512×512 pixels (xdg-desktop-portal validates bytes icons with `xdg-desktop-portal-validate-icon --sandbox 512 512`
/// and silently drops any other; it also wants them square). File icons are refused outright (`invalid icon`, the
/// whole notification with them), so a file is sent as its bytes and raw pixels as a square PNG made here.
enum PortalIcons {
    /// The largest width and height the portal keeps.
    static let maximumSide = 512

    /// The most bytes read from an icon file (a larger file is not an icon).
    static let maximumFileSize = 4 * 1024 * 1024

    /// The format of an image file's bytes, when it is one the portal takes.
    enum Format: String, Sendable, Hashable {
        case png = "PNG"
        case jpeg = "JPEG"
        case svg = "SVG"
    }

    /// The format of `bytes` from their first bytes: PNG and JPEG by signature, SVG (or gzip-compressed SVGZ) by an
    /// `<svg` element near the start; `nil` for anything else.
    static func format(of bytes: [UInt8]) -> Format? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x1F, 0x8B]) { return .svg }  // gzip: gdk-pixbuf reads it as SVGZ
        let head = String(decoding: bytes.prefix(4096), as: UTF8.self)
        if head.contains("<svg") { return .svg }
        return nil
    }

    /// The pixel size a PNG or JPEG file declares, if it can be read from its header.
    static func size(of bytes: [UInt8], format: Format) -> (width: Int, height: Int)? {
        switch format {
        case .png:
            // The IHDR chunk comes first: width and height are big-endian at offsets 16 and 20.
            guard bytes.count >= 24 else { return nil }
            return (bigEndian(bytes, at: 16, count: 4), bigEndian(bytes, at: 20, count: 4))
        case .jpeg:
            return jpegSize(bytes)
        case .svg:
            return nil
        }
    }

    /// Reads the frame header (SOF0…SOF15 except DHT, JPG and DAC) of a JPEG file.
    private static func jpegSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF {
                index += 1
                continue
            }
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 {
                index += 2
                continue
            }
            let length = bigEndian(bytes, at: index + 2, count: 2)
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                return (bigEndian(bytes, at: index + 7, count: 2), bigEndian(bytes, at: index + 5, count: 2))
            }
            guard length >= 2 else { return nil }
            index += 2 + length
        }
        return nil
    }

    private static func bigEndian(_ bytes: [UInt8], at offset: Int, count: Int) -> Int {
        var value = 0
        for byte in bytes[offset..<(offset + count)] { value = value << 8 | Int(byte) }
        return value
    }

    // MARK: - Raw pixels as PNG

    /// `image` as a square PNG file (8-bit RGBA): scaled down (nearest pixel) to fit 512×512 when it is larger, and
    /// centred on a transparent square when it is not square. The image must be valid (``ToastImage/validate(field:)``).
    static func png(_ image: ToastImage) -> [UInt8] {
        var (width, height, rgba) = (image.width, image.height, image.rgba)
        if width > maximumSide || height > maximumSide {
            (width, height, rgba) = scaledToFit(image)
        }
        if width != height {
            (width, height, rgba) = squared(width: width, height: height, rgba: rgba)
        }
        // Scanlines with filter type 0 (none), compressed with stored deflate blocks: no compression library is
        // needed, and icons are small.
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (width * 4 + 1))
        for row in 0..<height {
            raw.append(0)
            raw.append(contentsOf: rgba[(row * width * 4)..<((row + 1) * width * 4)])
        }
        var header: [UInt8] = []
        append32(width, to: &header)
        append32(height, to: &header)
        header += [8, 6, 0, 0, 0]  // 8 bits per channel, RGBA, deflate, adaptive filters, no interlace
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        appendChunk("IHDR", header, to: &file)
        appendChunk("IDAT", zlibStored(raw), to: &file)
        appendChunk("IEND", [], to: &file)
        return file
    }

    private static func scaledToFit(_ image: ToastImage) -> (Int, Int, [UInt8]) {
        let scale = Double(maximumSide) / Double(max(image.width, image.height))
        let width = max(1, Int(Double(image.width) * scale))
        let height = max(1, Int(Double(image.height) * scale))
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            let sourceY = min(image.height - 1, y * image.height / height)
            for x in 0..<width {
                let sourceX = min(image.width - 1, x * image.width / width)
                let from = (sourceY * image.width + sourceX) * 4
                let to = (y * width + x) * 4
                rgba[to..<(to + 4)] = image.rgba[from..<(from + 4)]
            }
        }
        return (width, height, rgba)
    }

    private static func squared(width: Int, height: Int, rgba: [UInt8]) -> (Int, Int, [UInt8]) {
        let side = max(width, height)
        var out = [UInt8](repeating: 0, count: side * side * 4)
        let (left, top) = ((side - width) / 2, (side - height) / 2)
        for row in 0..<height {
            let to = ((top + row) * side + left) * 4
            out[to..<(to + width * 4)] = rgba[(row * width * 4)..<((row + 1) * width * 4)]
        }
        return (side, side, out)
    }

    private static func append32(_ value: Int, to bytes: inout [UInt8]) {
        let value = UInt32(truncatingIfNeeded: value)
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        append32(data.count, to: &file)
        let typed = Array(type.utf8) + data
        file += typed
        append32(Int(crc32(typed)), to: &file)
    }

    /// A zlib stream of stored (uncompressed) deflate blocks, with its Adler-32 checksum.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let isLast = offset + count == data.count
            out.append(isLast ? 1 : 0)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8(~count >> 8 & 0xFF)]
            out += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        append32(Int(b << 16 | a), to: &out)
        return out
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The CRC-32 (ISO 3309) that PNG chunks carry.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
