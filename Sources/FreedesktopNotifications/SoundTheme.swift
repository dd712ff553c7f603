// The freedesktop sound theme's look-up of a sound name (what SoundPlayer plays for a name): the person's theme, what
// it inherits, then freedesktop, in each data folder.
import Glibc

/// The freedesktop sound theme specification's look-up of a sound name: in the person's theme (GTK's
/// `gtk-sound-theme-name`), then the themes it inherits, then `freedesktop`, under `$XDG_DATA_HOME/sounds` and each
/// `$XDG_DATA_DIRS/…/sounds`, in each of the theme's folders (`stereo`), as `.oga`, `.ogg` or `.wav`. A name not
/// found is tried without its last `-part` (`message-new-email` → `message-new` → `message`).
struct SoundTheme {
    /// The `sounds` folders, most important first.
    let bases: [String]
    /// The person's theme, if set.
    let preferred: String?

    init(environment: [String: String]) {
        let home = environment["HOME"] ?? "/"
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(home)/.local/share"
        let dataDirs = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        bases = ([dataHome] + dataDirs.split(separator: ":").map(String.init)).map { "\($0)/sounds" }
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(home)/.config"
        preferred = Self.value(of: "gtk-sound-theme-name", inFile: "\(configHome)/gtk-3.0/settings.ini")
    }

    /// The file for `name`, or nil.
    func file(named name: String) -> String? {
        guard !name.isEmpty, !name.contains("/") else { return nil }
        let themes = chain()
        var candidate = Substring(name)
        while true {
            for theme in themes {
                for base in bases {
                    for folder in theme.folders {
                        for suffix in [".oga", ".ogg", ".wav"] {
                            let path = "\(base)/\(theme.name)/\(folder)/\(candidate)\(suffix)"
                            if access(path, R_OK) == 0 { return path }
                        }
                    }
                }
            }
            for base in bases {
                for suffix in [".oga", ".ogg", ".wav"] where access("\(base)/\(candidate)\(suffix)", R_OK) == 0 {
                    return "\(base)/\(candidate)\(suffix)"
                }
            }
            guard let dash = candidate.lastIndex(of: "-") else { return nil }
            candidate = candidate[..<dash]
        }
    }

    /// The themes to search, in order: the person's, those it inherits (breadth first), `freedesktop`.
    private func chain() -> [(name: String, folders: [String])] {
        var names = [preferred ?? "freedesktop"]
        var result: [(name: String, folders: [String])] = []
        var seen: Set<String> = []
        while !names.isEmpty || !seen.contains("freedesktop") {
            if names.isEmpty { names.append("freedesktop") }
            let name = names.removeFirst()
            guard !name.contains("/"), seen.insert(name).inserted else { continue }
            let indexes = bases.map { base -> String in "\(base)/\(name)/index.theme" }
            guard let index = indexes.first(where: { path in access(path, R_OK) == 0 }) else { continue }
            let folders = Self.value(of: "Directories", inFile: index)?.split(separator: ",").map(Self.trimmed)
            result.append((name, folders ?? ["stereo"]))
            names += Self.value(of: "Inherits", inFile: index)?.split(separator: ",").map(Self.trimmed) ?? []
        }
        if result.isEmpty { result.append(("freedesktop", ["stereo"])) }
        return result
    }

    /// The value of `key = value` in a small settings file (the first one; sections are not told apart), or nil.
    static func value(of key: String, inFile path: String) -> String? {
        guard let text = LocalFiles.text(of: path, limit: 65536) else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, trimmed(parts[0]) == key else { continue }
            let value = trimmed(parts[1])
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// `text` without the spaces, tabs and carriage returns around it.
    static func trimmed(_ text: Substring) -> String {
        let blank: Set<Character> = [" ", "\t", "\r"]
        return String(text.drop { blank.contains($0) }.reversed().drop { blank.contains($0) }.reversed())
    }
}
