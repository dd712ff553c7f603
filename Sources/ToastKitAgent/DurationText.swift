/// Durations as people write them on a command line, for every option that takes one (`-d`, `run --min-seconds`,
/// `agent --idle-timeout`): a number of seconds (`2.5`), or numbers with units, largest first, without spaces —
/// `500ms`, `90s`, `10m`, `1h30m`, `2d`. Units: `ms`, `s`, `m` (also `min`), `h`, `d`.
package enum DurationText {
    /// The duration `text` says, in seconds; nil when it is not one (or is negative, or not finite).
    package static func seconds(_ text: String) -> Double? {
        if let plain = Double(text) { return plain.isFinite && plain >= 0 ? plain : nil }
        let units: [(String, Double)] = [("ms", 0.001), ("min", 60), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        var rest = Substring(text)
        var total = 0.0
        var lastScale = Double.infinity
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            guard let (unit, scale) = units.first(where: { rest.hasPrefix($0.0) }), scale < lastScale else {
                return nil
            }
            rest = rest.dropFirst(unit.count)
            total += value * scale
            lastScale = scale
        }
        return total.isFinite ? total : nil
    }
}
