/// How far a task a toast tells of has come: a fraction from 0 to 1, or under way with no measure. Each server shows
/// it as it can — a bar where it draws one, text elsewhere (the desktop presenter's mapping says which).
public enum ToastProgress: Sendable, Hashable, Codable {
    /// Done this much, from 0 (nothing) to 1 (all); values outside are clamped.
    case fraction(Double)
    /// Under way, with no measure of how far.
    case indeterminate

    /// The fraction, clamped to 0…1; nil for ``indeterminate`` (or a value that is not a number).
    public var clampedFraction: Double? {
        guard case .fraction(let value) = self, value.isFinite else { return nil }
        return min(1, max(0, value))
    }

    /// The whole percent (0…100), rounded down so 100 % means done; nil for ``indeterminate``.
    public var percent: Int? {
        clampedFraction.map { Int(($0 * 100).rounded(.down)) }
    }

    /// The progress as text for a server that draws no bar: `▰▰▰▰▱▱▱▱▱▱ 40 %`, or `…` under way.
    public var textBar: String {
        guard let percent else { return "…" }
        let filled = percent / 10
        return String(repeating: "▰", count: filled) + String(repeating: "▱", count: 10 - filled) + " \(percent) %"
    }
}
