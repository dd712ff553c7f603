/// The tool's version, printed by `toastkit --version`.
package enum ToolVersion {
    /// The one place the version lives.
    package static let current = "0.1.0"
}
