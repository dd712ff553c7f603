// Plays a toast's sound in this process's name, for a server that plays none: finds a named sound in the
// freedesktop sound theme, then plays the file with libcanberra (loaded at run time) or a player program.
import CSpawn
import Dispatch
import Glibc
import Synchronization
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
            // A regular file: a FIFO or a device would block the player (and libcanberra's context) for good.
            guard Self.isReadableRegularFile(path) else {
                return "the sound file \(path) cannot be read (or is not a regular file): none played"
            }
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

    /// Plays `sound` in the background on the process's ``SoundQueue/shared`` queue, so that neither the caller's
    /// thread nor the caller waits for it; `failed` gets the reason when it cannot be played.
    /// ``waitUntilPlayed(timeout:)`` waits for it.
    ///
    /// - Parameters:
    ///   - sound: A name from the sound theme, or a file.
    ///   - appName: The application the sound plays for (libcanberra's `application.name`).
    ///   - failed: Gets the reason, in one sentence, when the sound could not be played.
    public func playInBackground(
        _ sound: ToastSound, appName: String, failed: @escaping @Sendable (String) -> Void
    ) {
        SoundQueue.shared.play(sound, with: self, appName: appName, failed: failed)
    }

    /// Entered for each sound played in the background (on any ``SoundQueue``), left once it has played.
    static let playing = DispatchGroup()

    /// Whether `path` is a regular file this process can read (opened without blocking, never followed into a FIFO).
    private static func isReadableRegularFile(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var info = stat()
        return fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

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
        guard descriptor >= 0 else {
            // No pidfd (a kernel before 5.3): it plays on, reaped when it ends, its end not waited for.
            DispatchQueue.global(qos: .utility).async { _ = Spawn.wait(pid) }
            return nil
        }
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        var ready: Int32
        repeat {
            ready = poll(&poller, 1, Int32(limit.components.seconds * 1000))
        } while ready < 0 && errno == EINTR
        close(descriptor)
        if ready == 0 {
            // Its whole process group: it leads one of its own (a new session), and a wrapper's children go too.
            kill(-pid, SIGKILL)
            stopped = true
        }
        let end = Spawn.wait(pid)
        if stopped { return "the sound player \(program) did not end within \(limit): stopped" }
        switch end {
        case .ended(.exited(0)): return nil
        case .ended(let end): return "\(program): \(end)"
        // Reaped by someone else (the kernel, SIGCHLD being ignored): its end is not known, and it started.
        case .notSeen, .running: return nil
        }
    }
}

/// Plays sounds in the background, one after another, with a few waiting at most: a burst of toasts costs neither a
/// thread each nor a din. Each presenter has its own; ``shared`` serves the rest of the process.
public final class SoundQueue: Sendable {
    /// The process's queue (``SoundPlayer/playInBackground(_:appName:failed:)``).
    public static let shared = SoundQueue()

    /// How many sounds may play or wait at once; more are not played (and said so).
    public let maximumWaiting: Int
    private let queue = DispatchQueue(label: "toastkit.sound", qos: .userInitiated)
    private let backlog = Mutex(0)

    /// A queue on which at most `maximumWaiting` sounds play or wait.
    public init(maximumWaiting: Int = 4) {
        self.maximumWaiting = max(1, maximumWaiting)
    }

    /// Plays `sound` with `player` after the sounds before it; `failed` gets the reason when it cannot be played (or
    /// when ``maximumWaiting`` sounds are already playing or waiting).
    public func play(
        _ sound: ToastSound, with player: SoundPlayer, appName: String, failed: @escaping @Sendable (String) -> Void
    ) {
        play(sound, with: player, appName: appName, environment: nil, failed: failed)
    }

    /// As above, in `environment` (nil: this process's).
    package func play(
        _ sound: ToastSound, with player: SoundPlayer, appName: String, environment: [String: String]?,
        failed: @escaping @Sendable (String) -> Void
    ) {
        let limit = maximumWaiting
        let admitted = backlog.withLock { waiting in
            guard waiting < limit else { return false }
            waiting += 1
            return true
        }
        guard admitted else { return failed("\(limit) sounds were already waiting to play: this one was not played") }
        SoundPlayer.playing.enter()
        queue.async {
            defer {
                self.backlog.withLock { $0 -= 1 }
                SoundPlayer.playing.leave()
            }
            let reason = player.play(sound, appName: appName, environment: environment ?? ProcessEnvironment.current)
            if let reason { failed(reason) }
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
    typealias Playing = @convention(c) (OpaquePointer?, UInt32, UnsafeMutablePointer<Int32>) -> Int32
    typealias Cancel = @convention(c) (OpaquePointer?, UInt32) -> Int32

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
    private let isPlaying: Playing?
    private let cancel: Cancel?
    /// The id of the last sound played (each has its own, so it can be asked after and cancelled).
    private let lastID = Atomic<UInt32>(0)

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
        isPlaying = symbol("ca_context_playing", as: Playing.self)
        cancel = symbol("ca_context_cancel", as: Cancel.self)
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
        // Released by the callback, the only one that does: a callback that never comes leaks this one box.
        let box = Unmanaged.passRetained(finish)
        let id = lastID.wrappingAdd(1, ordering: .relaxed).newValue
        let started = playFull(
            context, id, properties,
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
        let deadline = ContinuousClock.now + SoundPlayer.limit
        while finish.done.wait(timeout: .now() + .seconds(1)) != .success {
            // libcanberra's PulseAudio driver never calls back for a stream that ended while it was being started:
            // asked each second whether the sound still plays.
            var playing: Int32 = 1
            if let isPlaying, isPlaying(context, id, &playing) == 0, playing == 0 { return nil }
            if ContinuousClock.now >= deadline {
                _ = cancel?(context, id)
                return "the sound did not end within \(SoundPlayer.limit)"
            }
        }
        return finish.error == 0 ? nil : reason(finish.error)
    }

    private func reason(_ code: Int32) -> String {
        describe?(code).map { String(cString: $0).lowercased() } ?? "error \(code)"
    }
}
