import ToastModel

/// What is wrong with the agent's settings, in words (`toastkit agent` exits 65, or 74 for a file it cannot read).
package struct AgentSettingsError: Error, Sendable, Equatable {
    package var message: String
    /// The config file could not be read (rather than read and found wrong).
    package var unreadable = false

    package init(_ message: String, unreadable: Bool = false) {
        self.message = message
        self.unreadable = unreadable
    }
}

/// What an agent runs with: the command line over the config file over the defaults.
package struct AgentSettings: Sendable, Equatable {
    /// How long the agent stays with no live toast and no call being served; nil: until stopped.
    package var idleTimeout: Duration? = .seconds(60)
    /// How many toasts of one application are on screen at most.
    package var maxVisible = ToastStack.Configuration.standardMaxVisible
    /// Take the name from a running agent.
    package var replace = false

    /// The defaults: 60 s idle, three toasts of an application at once (the library's default), no take-over.
    package init(
        idleTimeout: Duration? = .seconds(60), maxVisible: Int = ToastStack.Configuration.standardMaxVisible,
        replace: Bool = false
    ) {
        self.idleTimeout = idleTimeout
        self.maxVisible = maxVisible
        self.replace = replace
    }

    /// The most toasts on screen at once that `--max-visible` accepts.
    package static let maxVisibleLimit = 10

    /// `--idle-timeout`'s value (or the config file's `idle-timeout`), checked.
    package static func idleTimeout(_ value: String, source: String) throws(AgentSettingsError) -> Duration {
        guard let seconds = DurationText.seconds(value), seconds <= 86_400 * 365 else {
            throw AgentSettingsError(
                "\(source) \(value): expected seconds or a duration (90s, 5m, 1h; 0 to stay until stopped)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// `--max-visible`'s value (or the config file's `max-visible`), checked.
    package static func maxVisible(_ value: String, source: String) throws(AgentSettingsError) -> Int {
        guard let number = Int(value), (1...maxVisibleLimit).contains(number) else {
            throw AgentSettingsError("\(source) \(value): expected a whole number from 1 to \(maxVisibleLimit)")
        }
        return number
    }

    /// The config file: `$XDG_CONFIG_HOME/toastkit/agent.conf` (`~/.config/toastkit/agent.conf`).
    package static func configPath(environment: [String: String]) -> String? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/toastkit/agent.conf" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.config/toastkit/agent.conf" }
        return nil
    }

    /// The settings for `options` and the config file of `environment`.
    ///
    /// The file has one `key = value` a line; `#` starts a comment; keys are `max-visible` and `idle-timeout`
    /// (as the options). A missing file is no error; an unreadable one, an unknown key or a bad value is (exit
    /// 65, with the file and line): an agent that silently ignored its configuration would be worse.
    package static func resolve(
        idleTimeout: Duration?, maxVisible: Int?, replace: Bool, environment: [String: String]
    ) throws(AgentSettingsError) -> AgentSettings {
        var settings = AgentSettings()
        if let path = configPath(environment: environment) {
            let bytes: [UInt8]?
            do {
                bytes = try PrivateFiles.contents(of: path)
            } catch {
                throw AgentSettingsError(error.description, unreadable: true)
            }
            if let bytes {
                try settings.read(String(decoding: bytes, as: UTF8.self), path: path)
            }
        }
        if let idleTimeout { settings.idleTimeout = idleTimeout == .zero ? nil : idleTimeout }
        if let maxVisible { settings.maxVisible = maxVisible }
        settings.replace = replace
        return settings
    }

    /// Applies the config file's `text`.
    package mutating func read(_ text: String, path: String) throws(AgentSettingsError) {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.prefix { $0 != "#" }.trimmingCharacters(in: " \t\r")
            guard !line.isEmpty else { continue }
            let place = "\(path):\(index + 1)"
            guard let equals = line.firstIndex(of: "=") else {
                throw AgentSettingsError("\(place): expected key = value, got \"\(line)\"")
            }
            let key = String(line[..<equals]).trimmingCharacters(in: " \t")
            let value = String(line[line.index(after: equals)...]).trimmingCharacters(in: " \t")
            switch key {
            case "max-visible": maxVisible = try Self.maxVisible(value, source: "\(place): max-visible")
            case "idle-timeout":
                let timeout = try Self.idleTimeout(value, source: "\(place): idle-timeout")
                idleTimeout = timeout == .zero ? nil : timeout
            default:
                throw AgentSettingsError("\(place): unknown setting \"\(key)\" (max-visible, idle-timeout)")
            }
        }
    }
}

extension StringProtocol {
    /// The text without the given characters at either end.
    package func trimmingCharacters(in characters: String) -> String {
        let set = Set(characters)
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
