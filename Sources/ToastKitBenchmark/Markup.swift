import BenchmarkSupport
import ToastKit

/// `markup`: BodyMarkup.sanitize and .strip on 64 KiB inputs — the hostile one of issue 12 (only `<`), unclosed
/// tags nested deep, and ordinary markup — best of `repeats` runs each, in milliseconds. No bus needed.
func markupTimes(size: Int, repeats: Int) -> String {
    let ordinary = #"<b>Hola</b> <i>mundo</i> &amp; <a href="https://example.com/x?a=1&amp;b=2">enlace</a> texto, "#
    let inputs: [(String, String)] = [
        ("lt", String(repeating: "<", count: size)),
        ("nested", String(repeating: "<b>", count: size / 7) + String(repeating: "</i>", count: size / 7)),
        ("ordinary", String(String(repeating: ordinary, count: size / ordinary.utf8.count + 1).utf8.prefix(size))!),
    ]
    var pairs: [(String, String)] = [("bytes", String(size)), ("repeats", String(repeats))]
    var checksum = 0
    for (name, text) in inputs {
        let operations: [(String, (String) -> String)] = [
            ("sanitize", { BodyMarkup.sanitize($0) }), ("strip", BodyMarkup.strip),
        ]
        for (operation, function) in operations {
            var best = Double.infinity
            for _ in 0..<repeats {
                let started = monotonicMicroseconds()
                let out = function(text)
                let elapsed = monotonicMicroseconds() - started
                checksum &+= out.utf8.count
                best = min(best, elapsed / 1000)
            }
            pairs.append(("\(name)_\(operation)_ms", number(best)))
        }
    }
    pairs.append(("output_bytes", String(checksum)))
    return jsonObject(pairs)
}
