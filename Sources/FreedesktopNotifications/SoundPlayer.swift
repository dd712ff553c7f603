// Plays a toast's sound in this process's name, for a server that plays none: finds a named sound in the
// freedesktop sound theme, then plays the file with libcanberra (loaded at run time) or a player program.
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
        let tried = playFile(file, appName: appName, environment: environment, limit: Self.limit)
        guard tried.player == nil else { return nil }
        // The one player given (the command, TOASTKIT_SOUND_PLAYER's) could not: its reason says why.
        guard triesInTurn(in: environment) else { return tried.failures.first }
        guard tried.failures.isEmpty else {
            return "no sound player could play \(file) (\(tried.failures.joined(separator: "; "))); set "
                + "TOASTKIT_SOUND_PLAYER to a player that can"
        }
        return "no sound player: install libcanberra0, pipewire-bin or pulseaudio-utils, or set TOASTKIT_SOUND_PLAYER"
    }

    /// Whether this player tries libcanberra, `pw-play` and `paplay` in turn in `environment` (``automatic`` without
    /// `TOASTKIT_SOUND_PLAYER`), rather than one player it was given.
    func triesInTurn(in environment: [String: String]) -> Bool {
        guard case .automatic = self else { return false }
        return (environment["TOASTKIT_SOUND_PLAYER"] ?? "").isEmpty
    }

    /// One way to play a file: libcanberra, or a program with its arguments (the file is added as the last one).
    enum Candidate {
        case canberra(Canberra)
        case program(name: String, argv: [String])
    }

    /// What this player tries, in order, in `environment`: the command, `TOASTKIT_SOUND_PLAYER`'s, or libcanberra
    /// then `pw-play` and `paplay` where they are installed; nothing with ``off``.
    func candidates(in environment: [String: String]) -> [Candidate] {
        switch self {
        case .off: return []
        case .command(let argv): return [.program(name: argv.joined(separator: " "), argv: argv)]
        case .automatic:
            if let command = environment["TOASTKIT_SOUND_PLAYER"], !command.isEmpty {
                return [.program(name: command, argv: command.split(separator: " ").map(String.init))]
            }
            return (Canberra.shared.map { [.canberra($0)] } ?? [])
                + Self.players.filter { ProcessEnvironment.findExecutable($0[0], in: environment) != nil }.map {
                    .program(name: $0[0], argv: $0)
                }
        }
    }

    /// Plays `file` with the first candidate that plays it, each given at most `limit`: the name of the one that
    /// played it (``off``: "nothing"), or nil and each one's reason (none: nothing to try).
    func playFile(_ file: String, appName: String, environment: [String: String], limit: Duration)
        -> (player: String?, failures: [String])
    {
        if case .off = self { return ("nothing", []) }
        var failures: [String] = []
        for candidate in candidates(in: environment) {
            switch candidate {
            case .canberra(let canberra):
                guard let failure = canberra.play(file: file, appName: appName, limit: limit) else {
                    return ("libcanberra", [])
                }
                failures.append("libcanberra: \(failure)")
            case .program(let name, let argv):
                guard let failure = PlayerProgram.run(argv, file: file, environment: environment, limit: limit) else {
                    return (name, [])
                }
                failures.append(failure)
            }
        }
        return (nil, failures)
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

    /// The player programs tried after libcanberra, with their arguments for a notification's sound.
    static let players = [["pw-play", "--media-role=Notification"], ["paplay", "--property=media.role=event"]]

    /// Waits until the sounds played in the background have played, for at most `timeout`: a process about to exit
    /// calls it, or it would cut its sounds off (and not hear why one could not be played).
    public static func waitUntilPlayed(timeout: Duration = .seconds(5)) {
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        _ = playing.wait(timeout: .now() + .nanoseconds(Int(max(0, nanoseconds))))
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

    /// As above, in `environment` (nil: this process's); `played` is called once it has played.
    package func play(
        _ sound: ToastSound, with player: SoundPlayer, appName: String, environment: [String: String]?,
        played: @escaping @Sendable () -> Void = {}, failed: @escaping @Sendable (String) -> Void
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
            if let reason { failed(reason) } else { played() }
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
