// Plays a toast's sound in this process's name, for a server that plays none: finds a named sound in the
// freedesktop sound theme, then plays the file with libcanberra (loaded at run time) or a player program.
import CSpawn
import Dispatch
import Glibc
public import ToastModel

/// How a presenter plays a toast's sound where the notification server plays none (dunst, mako, Plasma 5, LXQt,
/// SwayNotificationCenter, notification-daemon, and xfce4-notifyd built without libcanberra).
public enum SoundPlayer: Sendable, Hashable {
    /// The first that plays it: the command in `TOASTKIT_SOUND_PLAYER` (split at spaces; the file's path is added as
    /// its last argument), libcanberra (`libcanberra.so.0`, loaded at run time: the desktop's sound system, with the
    /// `event` role; not in a statically linked program, where loading a library could crash it), then `pw-play` or
    /// `paplay`.
    case automatic
    /// This program with these arguments; the file's path is added as the last argument (`["mpv", "--no-video"]`).
    case command([String])
    /// Play nothing where the server plays nothing (a desktop whose server is set up to play sounds itself).
    case off

    /// How long a player may take to play one sound before it is stopped.
    static let limit = Duration.seconds(30)

    /// Plays `sound` (a name from the sound theme, or a file) and returns once it has played: on this thread, for as
    /// long as the sound lasts (``playInBackground(_:appName:failed:)`` does not hold up its caller).
    ///
    /// - Returns: nil once it played (or with ``off``); else why it could not, in one sentence, such as "no sound
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
            return Self.run(argv, file: file, environment: environment)
        case .automatic:
            if let command = environment["TOASTKIT_SOUND_PLAYER"], !command.isEmpty {
                return Self.run(command.split(separator: " ").map(String.init), file: file, environment: environment)
            }
            var failures: [String] = []
            if let canberra = Canberra.shared {
                guard let failure = canberra.play(file: file, appName: appName) else { return nil }
                failures.append("libcanberra: \(failure)")
            }
            for player in Self.players where ProcessEnvironment.findExecutable(player[0], in: environment) != nil {
                guard let failure = Self.run(player, file: file, environment: environment) else { return nil }
                failures.append(failure)
            }
            guard failures.isEmpty else {
                return "no sound player could play \(file) (\(failures.joined(separator: "; "))); set "
                    + "TOASTKIT_SOUND_PLAYER to a player that can"
            }
            return
                "no sound player: install libcanberra0, pipewire-bin or pulseaudio-utils, or set TOASTKIT_SOUND_PLAYER"
        }
    }

    /// Plays `sound` on a queue of its own, so that neither the caller's thread (a connection's I/O thread) nor the
    /// caller waits for it; `failed` gets the reason when it cannot be played. ``waitUntilPlayed(timeout:)`` waits
    /// for it.
    ///
    /// - Parameters:
    ///   - sound: A name from the sound theme, or a file.
    ///   - appName: The application the sound plays for (libcanberra's `application.name`).
    ///   - failed: Gets the reason, in one sentence, when the sound could not be played.
    public func playInBackground(
        _ sound: ToastSound, appName: String, failed: @escaping @Sendable (String) -> Void
    ) {
        playInBackground(sound, appName: appName, environment: nil, failed: failed)
    }

    /// As above, in `environment` (nil: this process's).
    package func playInBackground(
        _ sound: ToastSound, appName: String, environment: [String: String]?,
        failed: @escaping @Sendable (String) -> Void
    ) {
        Self.playing.enter()
        DispatchQueue.global(qos: .userInitiated).async {
            defer { Self.playing.leave() }
            let reason = play(sound, appName: appName, environment: environment ?? ProcessEnvironment.current)
            if let reason { failed(reason) }
        }
    }

    /// Entered for each sound played in the background, left once it has played.
    private static let playing = DispatchGroup()

    /// What plays a sound where the server plays none, as this player would first try it in `environment`: the
    /// command, `TOASTKIT_SOUND_PLAYER`'s, `libcanberra`, `pw-play` or `paplay`; nil when there is none (or with
    /// ``off``, "nothing").
    package func firstChoice(environment: [String: String]) -> String? {
        switch self {
        case .off: return "nothing (the sound player is off)"
        case .command(let argv): return argv.joined(separator: " ")
        case .automatic:
            if let command = environment["TOASTKIT_SOUND_PLAYER"], !command.isEmpty { return command }
            if Canberra.shared != nil { return "libcanberra" }
            return Self.players.first { ProcessEnvironment.findExecutable($0[0], in: environment) != nil }?[0]
        }
    }

    /// The player programs tried after libcanberra, with their arguments for a notification's sound.
    static let players = [["pw-play", "--media-role=Notification"], ["paplay", "--property=media.role=event"]]

    /// Waits until the sounds played in the background have played, for at most `timeout`: a process about to exit
    /// calls it, or it would cut its sounds off (and not hear why one could not be played).
    public static func waitUntilPlayed(timeout: Duration = .seconds(5)) {
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        _ = playing.wait(timeout: .now() + .nanoseconds(Int(max(0, nanoseconds))))
    }

    /// Runs `argv` with `file` added, in a session of its own (a script's Ctrl-C does not cut the sound), until it
    /// ends (a pidfd says when; stopped after ``limit``): nil when it played, else why not.
    private static func run(_ argv: [String], file: String, environment: [String: String]) -> String? {
        guard let program = argv.first else { return "the sound player command is empty" }
        let pid: Int32
        switch Spawn.start(argv + [file], environment: environment, output: nil, newSession: true) {
        case .success(let started): pid = started
        case .failure(let error): return "the sound player \(program) could not start: \(error)"
        }
        var stopped = false
        let descriptor = pidfd_open(pid, 0)
        if descriptor >= 0 {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat {
                ready = poll(&poller, 1, Int32(limit.components.seconds * 1000))
            } while ready < 0 && errno == EINTR
            close(descriptor)
            if ready == 0 {
                kill(pid, SIGKILL)
                stopped = true
            }
        }
        var status: Int32 = 0
        var reaped: Int32
        repeat { reaped = waitpid(pid, &status, 0) } while reaped < 0 && errno == EINTR
        if stopped { return "the sound player \(program) did not end within \(limit): stopped" }
        // Reaped by someone else (the agent's reaper of --on-action commands waits for any child): its end is not
        // known, and it started.
        guard reaped == pid else { return nil }
        if status & 0x7f == 0 {
            let code = (status >> 8) & 0xff
            return code == 0 ? nil : "\(program): exit \(code)"
        }
        return "\(program): signal \(status & 0x7f)"
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

/// libcanberra, loaded at run time (no build dependency; absent on a system without it, and never loaded into a
/// statically linked program): one context for the process, a sound played with `media.filename`, `media.role` `event`
/// and `application.name`.
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
    typealias StringError = @convention(c) (Int32) -> UnsafePointer<CChar>?

    /// The process's libcanberra, or nil where it cannot be loaded, gives no context, or the program is statically
    /// linked (it has no dynamic loader: `AT_BASE` is 0), where a loaded library would bring a second C library.
    static let shared: Canberra? = getauxval(7 /* AT_BASE */) == 0 ? nil : Canberra()

    /// One sound's end, as libcanberra's callback tells it.
    private final class Finish: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        /// Written by the callback before `done` is signalled, read after.
        var error: Int32 = 0
    }

    private let context: OpaquePointer
    private let proplistCreate: ProplistCreate
    private let proplistSets: ProplistSets
    private let proplistDestroy: ProplistDestroy
    private let playFull: PlayFull
    private let describe: StringError?

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
        describe = symbol("ca_strerror", as: StringError.self)
    }

    /// Plays `file` and returns once it has played (at most ``SoundPlayer/limit``): nil, or libcanberra's reason.
    func play(file: String, appName: String) -> String? {
        var properties: OpaquePointer?
        guard proplistCreate(&properties) == 0, let properties else { return "no memory" }
        defer { _ = proplistDestroy(properties) }
        for (key, value) in [("media.filename", file), ("media.role", "event"), ("application.name", appName)] {
            _ = proplistSets(properties, key, value)
        }
        let finish = Finish()
        let box = Unmanaged.passRetained(finish)
        let started = playFull(
            context, 1, properties,
            { _, _, error, box in
                guard let box else { return }
                let finish = Unmanaged<Finish>.fromOpaque(box).takeRetainedValue()
                finish.error = error
                finish.done.signal()
            }, box.toOpaque())
        guard started == 0 else {
            box.release()
            return reason(started)
        }
        let seconds = Int(SoundPlayer.limit.components.seconds)
        guard finish.done.wait(timeout: .now() + .seconds(seconds)) == .success else {
            return "the sound did not end within \(SoundPlayer.limit)"
        }
        return finish.error == 0 ? nil : reason(finish.error)
    }

    private func reason(_ code: Int32) -> String {
        describe?(code).map { String(cString: $0).lowercased() } ?? "error \(code)"
    }
}
