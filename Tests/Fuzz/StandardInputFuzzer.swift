import Foundation  // the static libraries need it linked
import Glibc

// libFuzzer target for the reader of MESSAGE from standard input (built by scripts/fuzz.sh against the package's
// modules, @testable).
//
// Byte 0 chooses the limit (4–514 bytes, so inputs of a few hundred bytes exercise the cut), byte 1 how the rest is
// split into read(2) chunks. What must hold, whatever the chunks:
//   - the input is refused (65) exactly when it holds a NUL byte or is not UTF-8, naming the first NUL or the first
//     bad sequence (as UTF8Problem.first finds it in the whole input), in one line;
//   - otherwise, input up to the limit comes back whole (less trailing newlines); longer input is cut to at most
//     `limit` bytes ending in "…", between two characters of the whole text, with a warning.
@testable import ToastKitCommandLine

private func finding(_ what: String, _ input: [UInt8], limit: Int) -> Never {
    let line = Array("FINDING: \(what) (limit \(limit), input \(input))\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// The entry point libFuzzer calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 2 else { return 0 }
    let limit = 4 + Int(data[0]) * 2
    let seed = Int(data[1])
    let bytes = Array(UnsafeBufferPointer(start: data + 2, count: size - 2))

    var reader = StandardInputReader(limit: limit)
    var outcome: Result<MessageInput.Result, CommandFailure>
    do {
        var start = 0
        var turn = 0
        while start < bytes.count {
            let length = 1 + (seed + turn * 7) % 13
            try reader.consume(bytes[start..<min(bytes.count, start + length)])
            start += length
            turn += 1
        }
        outcome = .success(try reader.finish())
    } catch {
        outcome = .failure(error)
    }

    let nul = bytes.firstIndex(of: 0)
    let invalid = UTF8Problem.first(in: bytes)
    switch outcome {
    case .failure(let failure):
        guard failure.code == .dataError, !failure.message.contains("\n") else {
            finding("refused with \(failure.code) \(failure.message.debugDescription)", bytes, limit: limit)
        }
        if let nul, failure.message == "MESSAGE from standard input contains a NUL byte at offset \(nul)" { return 0 }
        if let invalid,
            failure.message
                == "MESSAGE from standard input is not valid UTF-8 (byte 0x\(invalid.hexByte) at offset \(invalid.offset))"
        {
            return 0
        }
        finding("refused with \(failure.message.debugDescription)", bytes, limit: limit)
    case .success(let result):
        guard nul == nil, invalid == nil else {
            finding("accepted bad input: \(result.text.debugDescription)", bytes, limit: limit)
        }
        let whole = String(decoding: bytes, as: UTF8.self)
        if bytes.count <= limit {
            var expected = whole
            while expected.hasSuffix("\n") || expected.hasSuffix("\r\n") { expected.removeLast() }
            guard result.text == expected, result.warning == nil else {
                finding("changed short input to \(result.text.debugDescription)", bytes, limit: limit)
            }
        } else {
            guard result.text.utf8.count <= limit, result.text.hasSuffix("…"), result.warning != nil,
                whole.starts(with: result.text.dropLast())
            else {
                finding("cut to \(result.text.debugDescription)", bytes, limit: limit)
            }
        }
    }
    return 0
}
