/// The tool's version, printed by `toastkit --version`.
package enum ToolVersion {
    /// The version as the code sees it. The one source of truth is the `VERSION` file at the repository's root:
    /// Swift takes no string from the build command, so this copy is checked against it
    /// (`DocumentationTests.theVersionIsTheVersionFile`, and `scripts/package.sh` refuses a binary whose `--version`
    /// differs). Change `VERSION`, then this line and the man page's `.TH` line; the test names any that lag.
    package static let current = "0.2.1"
}
