public import FoundationEssentials

/// Stores kept toasts in a small JSON file, by default `$XDG_STATE_HOME/toastkit/later.json`
/// (`~/.local/state/toastkit/later.json` when `XDG_STATE_HOME` is unset).
///
/// Writes are atomic (a temporary file renamed over the old one). A file that cannot be decoded or read is
/// renamed to `later.json.corrupt-<UTC timestamp>` — set aside, never deleted — and reported.
public struct FileLaterStore: LaterStore {
    /// The file.
    public let url: URL

    /// Creates a store at `url`.
    public init(url: URL) {
        self.url = url
    }

    /// The default location for `environment`: `$XDG_STATE_HOME/toastkit/later.json`, else
    /// `$HOME/.local/state/toastkit/later.json`. A relative `XDG_STATE_HOME` is ignored, as the XDG base
    /// directory specification says.
    public static func defaultURL(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        let stateHome: URL
        if let value = environment["XDG_STATE_HOME"], value.hasPrefix("/") {
            stateHome = URL(fileURLWithPath: value, isDirectory: true)
        } else {
            let home =
                environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? FileManager.default.homeDirectoryForCurrentUser.path
            stateHome = URL(fileURLWithPath: home, isDirectory: true)
                .appendingPathComponent(".local", isDirectory: true)
                .appendingPathComponent("state", isDirectory: true)
        }
        return stateHome.appendingPathComponent("toastkit", isDirectory: true)
            .appendingPathComponent("later.json")
    }

    /// The store at ``defaultURL(environment:)``.
    public static func standard(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> FileLaterStore {
        FileLaterStore(url: defaultURL(environment: environment))
    }

    private struct FileContents: Codable {
        var version: Int
        var toasts: [ToastLaterRecord]
    }

    /// Reads the file; a missing file is empty.
    public func load() throws(LaterStoreProblem) -> [ToastLaterRecord] {
        let data: Data
        do {
            guard FileManager.default.fileExists(atPath: url.path) else { return [] }
            data = try Data(contentsOf: url)
        } catch {
            throw problem(.unreadable, detail: "\(error)", setAside: true)
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let contents = try decoder.decode(FileContents.self, from: data)
            guard contents.version == 1 else {
                throw problem(.corrupt, detail: "unknown version \(contents.version)", setAside: true)
            }
            return contents.toasts
        } catch let problem as LaterStoreProblem {
            throw problem
        } catch {
            throw problem(.corrupt, detail: "\(error)", setAside: true)
        }
    }

    /// Writes the file atomically, creating its folder.
    public func save(_ records: [ToastLaterRecord]) throws(LaterStoreProblem) {
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(FileContents(version: 1, toasts: records))
            try data.write(to: url, options: .atomic)
        } catch {
            throw problem(.unwritable, detail: "\(error)", setAside: false)
        }
    }

    private func problem(_ kind: LaterStoreProblem.Kind, detail: String, setAside: Bool) -> LaterStoreProblem {
        LaterStoreProblem(
            kind: kind, location: url, setAsideAt: setAside ? moveAside() : nil, detail: detail)
    }

    /// Renames the file to `<name>.corrupt-<timestamp>[-n]`; returns `nil` when it cannot be moved.
    private func moveAside() -> URL? {
        let stamp = Date.ISO8601FormatStyle(
            dateSeparator: .omitted, dateTimeSeparator: .standard, timeSeparator: .omitted, timeZone: .gmt
        ).format(Date())
        let base = url.lastPathComponent + ".corrupt-" + stamp
        let folder = url.deletingLastPathComponent()
        for attempt in 0..<100 {
            let name = attempt == 0 ? base : "\(base)-\(attempt)"
            let target = folder.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: target.path) { continue }
            do {
                try FileManager.default.moveItem(at: url, to: target)
                return target
            } catch {
                return nil
            }
        }
        return nil
    }
}
