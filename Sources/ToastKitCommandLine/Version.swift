/// The tool's version, printed by `toastkit --version`.
enum ToolVersion {
    /// The one place the version lives.
    static let current = "0.1.0"
}
