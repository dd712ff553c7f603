import ToastKitAgent

/// One command-line argument as the kernel passed it: its text, and where its bytes are not UTF-8.
///
/// Swift's `CommandLine.arguments` repairs invalid bytes silently (U+FFFD), which would send something the person
/// never typed. The raw bytes are checked instead, and an argument that is not UTF-8 is refused by name when the
/// parser finds out what it is (TITLE, the value of `--id`, …).
struct Argument: Sendable, Equatable, ExpressibleByStringLiteral {
    /// The text (invalid bytes repaired, only for messages).
    var text: String
    /// The first invalid byte, if any.
    var problem: UTF8Problem?

    init(_ text: String) {
        self.text = text
        self.problem = nil
    }

    init(stringLiteral value: String) {
        self.init(value)
    }

    /// Decodes raw bytes.
    init(bytes: some Collection<UInt8>) {
        self.text = String(decoding: bytes, as: UTF8.self)
        self.problem = UTF8Problem.first(in: bytes)
    }

    /// The text, or a data error naming `role` when the bytes are not UTF-8.
    func text(as role: String) throws(CommandFailure) -> String {
        if let problem {
            throw .data(
                "\(role) is not valid UTF-8 (byte 0x\(problem.hexByte) at offset \(problem.offset))")
        }
        return text
    }
}

/// Where a byte sequence stops being UTF-8.
struct UTF8Problem: Sendable, Equatable {
    /// The first byte that cannot start or continue a character.
    var byte: UInt8
    /// Its offset from the start, in bytes.
    var offset: Int

    /// The byte as two lowercase hex digits.
    var hexByte: String {
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }

    /// The first problem in `bytes`, or `nil` when they are valid UTF-8.
    static func first(in bytes: some Collection<UInt8>) -> UTF8Problem? {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += UTF8.width(scalar)
            case .emptyInput:
                return nil
            case .error:
                // The decoder consumed the bad byte (and maybe part of a sequence): report the byte at `offset`.
                let index = bytes.index(bytes.startIndex, offsetBy: offset)
                return UTF8Problem(byte: bytes[index], offset: offset)
            }
        }
    }
}
