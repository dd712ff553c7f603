// Plays a toast's sound in this process's name, for a server that plays none: finds a named sound in the
// freedesktop sound theme, then plays the file with libcanberra (loaded at run time) or a player program.
import Dispatch
import Glibc
package import ToastModel

/// How a presenter plays a toast's sound where the notification server plays none (dunst, mako, Plasma 5, LXQt,
/// SwayNotificationCenter, notification-daemon, and xfce4-notifyd built without libcanberra).
public enum SoundPlayer: Sendable, Hashable {
    /// The first that works: the command in `TOASTKIT_SOUND_PLAYER` (the file's path is added as its last argument),
    /// libcanberra (`libcanberra.so.0`, loaded at run time: the desktop's sound system, with the `event` role), then
    /// `pw-play` or `paplay`.
    case automatic
    /// This program with these arguments; the file's path is added as the last argument (`["mpv", "--no-video"]`).
    case command([String])
    /// Play nothing where the server plays nothing (a desktop whose server is set up to play sounds itself).
    case off

    /// Plays `sound` (a name from the sound theme, or a file) without waiting for it to end.
    ///
    /// - Returns: nil once it plays (or with ``off``); else why it cannot, in one sentence, such as "no sound
    ///   player: install libcanberra0, pipewire-bin or pulseaudio-utils, or set TOASTKIT_SOUND_PLAYER".
    package func play(_ sound: ToastSound, appName: String, environment: [String: String]) -> String? {
        let file: String
        switch sound {
        case .silent: return nil
        case .file(let path):
            guard access(path, R_OK) == 0 else { return "the sound file \(path) cannot be read: none played" }
            file = path
        case .named(let name):
            guard let found = SoundTheme(environment: environment).file(named: name) else {
                return "the sound \"\(name)\" is not in the sound theme: none played"
            }
            file = found
        }
        switch self {
        case .off:
            return nil
        case .command(let argv):
            return Self.start(argv, file: file, environment: environment)
        case .automatic:
            if let command = environment["TOASTKIT_SOUND_PLAYER"], !command.isEmpty {
                return Self.start(command.split(separator: " ").map(String.init), file: file, environment: environment)
            }
            if let canberra = Canberra.shared, canberra.play(file: file, appName: appName) { return nil }
            for player in Self.players {
                guard ProcessEnvironment.findExecutable(player[0], in: environment) != nil else { continue }
                if Self.start(player, file: file, environment: environment) == nil { return nil }
            }
            return
                "no sound player: install libcanberra0, pipewire-bin or pulseaudio-utils, or set TOASTKIT_SOUND_PLAYER"
        }
    }

    /// Plays `sound` on a queue of its own (looking it up and starting it never holds up the caller's thread, the
    /// connection's I/O thread); `failed` gets the reason when it cannot. ``waitUntilPlayed(timeout:)`` waits for it.
    package func playInBackground(
        _ sound: ToastSound, appName: String, failed: @escaping @Sendable (String) -> Void
    ) {
        Canberra.playing.enter()
        DispatchQueue.global(qos: .userInitiated).async {
            defer { Canberra.playing.leave() }
            if let reason = play(sound, appName: appName, environment: ProcessEnvironment.current) { failed(reason) }
        }
    }

    /// The player programs tried after libcanberra, with their arguments for a notification's sound.
    static let players = [["pw-play", "--media-role=Notification"], ["paplay", "--property=media.role=event"]]

    /// Waits until the sounds this process plays through libcanberra have ended (and those being started have
    /// started), for at most `timeout`: a process about to exit calls it, or its sound would be cut off. Players that
    /// run as programs go on by themselves.
    public static func waitUntilPlayed(timeout: Duration = .seconds(5)) {
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        _ = Canberra.playing.wait(timeout: .now() + .nanoseconds(Int(max(0, nanoseconds))))
    }

    /// Starts `argv` with `file` added, in a session of its own (a script's Ctrl-C does not cut the sound), and
    /// reaps it when it ends; nil once started, else why not.
    private static func start(_ argv: [String], file: String, environment: [String: String]) -> String? {
        guard let program = argv.first else { return "the sound player command is empty" }
        switch Spawn.start(argv + [file], environment: environment, output: nil, newSession: true) {
        case .success(let pid):
            DispatchQueue.global(qos: .utility).async {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            }
            return nil
        case .failure(let error):
            return "the sound player \(program) could not start: \(error)"
        }
    }
}

/// This process's environment, and a look-up of a program on its `PATH`.
package enum ProcessEnvironment {
    /// The environment of this process.
    package static var current: [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// The path of the executable `name` on the `PATH` of `environment` (`name` itself when it has a slash), or nil.
    package static func findExecutable(_ name: String, in environment: [String: String]) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

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

/// libcanberra, loaded at run time (no build dependency; absent on a system without it): one context for the
/// process, a sound played with `media.filename`, `media.role` `event` and `application.name`.
///
/// `@unchecked Sendable`: the context is used only through libcanberra's calls, which lock it themselves.
final class Canberra: @unchecked Sendable {
    typealias Create = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> Int32
    typealias ProplistCreate = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> Int32
    typealias ProplistSets = @convention(c) (OpaquePointer?, UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
    typealias ProplistDestroy = @convention(c) (OpaquePointer?) -> Int32
    typealias Finished = @convention(c) (OpaquePointer?, UInt32, Int32, UnsafeMutableRawPointer?) -> Void
    typealias PlayFull =
        @convention(c) (OpaquePointer?, UInt32, OpaquePointer?, Finished?, UnsafeMutableRawPointer?)
        -> Int32

    /// The process's libcanberra, or nil where it cannot be loaded or gives no context.
    static let shared: Canberra? = Canberra()
    /// Entered for each sound that plays, left when it ends.
    static let playing = DispatchGroup()

    private let context: OpaquePointer
    private let proplistCreate: ProplistCreate
    private let proplistSets: ProplistSets
    private let proplistDestroy: ProplistDestroy
    private let playFull: PlayFull

    private init?() {
        guard let library = dlopen("libcanberra.so.0", RTLD_NOW | RTLD_LOCAL) else { return nil }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(library, name).map { unsafeBitCast($0, to: type) }
        }
        guard let create = symbol("ca_context_create", as: Create.self),
            let proplistCreate = symbol("ca_proplist_create", as: ProplistCreate.self),
            let proplistSets = symbol("ca_proplist_sets", as: ProplistSets.self),
            let proplistDestroy = symbol("ca_proplist_destroy", as: ProplistDestroy.self),
            let playFull = symbol("ca_context_play_full", as: PlayFull.self)
        else { return nil }
        var context: OpaquePointer?
        guard create(&context) == 0, let context else { return nil }
        self.context = context
        self.proplistCreate = proplistCreate
        self.proplistSets = proplistSets
        self.proplistDestroy = proplistDestroy
        self.playFull = playFull
    }

    /// Starts playing `file`; false when libcanberra refuses at once (no sound device, no driver).
    func play(file: String, appName: String) -> Bool {
        var properties: OpaquePointer?
        guard proplistCreate(&properties) == 0, let properties else { return false }
        defer { _ = proplistDestroy(properties) }
        for (key, value) in [("media.filename", file), ("media.role", "event"), ("application.name", appName)] {
            _ = proplistSets(properties, key, value)
        }
        Self.playing.enter()
        let result = playFull(context, 1, properties, { _, _, _, _ in Canberra.playing.leave() }, nil)
        if result != 0 { Self.playing.leave() }
        return result == 0
    }
}
