import Foundation  // the static libraries need it linked
import Glibc

// libFuzzer target for the `toastkit` argument parser (built by scripts/fuzz.sh against instrumented modules).
//
// The input is split at NUL bytes into raw argv strings (any bytes, so invalid UTF-8 too) and parsed. The parser
// must never trap, and every refusal must be a usage error (64) or a data error (65) with a one-line message.
@testable import ToastKitCommandLine

/// The entry point libFuzzer calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).prefix(64).map {
        Argument(bytes: $0)
    }
    do {
        // As the tool does: the options before the command (`--backend`), then the command.
        _ = try CommandLineParser.parse(arguments: try CommandLineParser.globalOptions(arguments).1)
    } catch {
        guard error.code == .usage || error.code == .dataError, !error.message.isEmpty,
            !error.message.contains("\n")
        else {
            let line = Array("FINDING: \(error.code) \(error.message.debugDescription) for \(arguments)\n".utf8)
            _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            abort()
        }
    }
    return 0
}
