import FoundationEssentials
import Glibc
package import ToastModel

// What of a scheduled toast's sender's environment is kept on disk (its file in the state folder's `scheduled/`, which
// outlives the session and a reboot), and the runtime files that hold the rest for as long as the user's session
// lasts.

/// The part of a sender's environment a scheduled toast keeps on disk, and the files in the runtime folder that hold
/// the rest.
///
/// `send --on-action` captures its whole environment, secrets included (tokens, passwords a script was given). A
/// scheduled toast (`send --in`, `--at`, a snooze) is written to the user's state folder, which outlives the session
/// and a reboot: only ``names`` (and the `LC_*` variables) go there — what a command needs to reach the desktop and to
/// find its program, none of it a secret. The rest of the variables go to a file of their own in the runtime folder
/// (``ToastModel/PrivateFiles/runtimeFolder(environment:)``: `$XDG_RUNTIME_DIR/toastkit`, a tmpfs the system empties
/// when the user's last session ends and at a reboot), `scheduled-env-<token>.json` (mode 0600, created new, never
/// through a link), named by a random token the schedule's entry records. When that file is gone by the time the
/// toast comes, its commands run with the kept variables only.
package enum KeptEnvironment {
    /// The variables kept on disk, each needed to reach the desktop or find a program:
    ///
    /// - `HOME`, `USER`, `LOGNAME`: who the user is and where their files are;
    /// - `PATH`: where the command's program is found;
    /// - `DISPLAY`, `WAYLAND_DISPLAY`, `XAUTHORITY`: the display to open a window on, and the X cookie it takes;
    /// - `DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR`: the session bus and the session's sockets;
    /// - `XDG_CURRENT_DESKTOP`, `XDG_SESSION_TYPE`, `XDG_DATA_DIRS`, `XDG_CONFIG_DIRS`, `XDG_DATA_HOME`,
    ///   `XDG_CONFIG_HOME`: which desktop it is and where its programs (`xdg-open`, `gio`) find handlers and settings;
    /// - `LANG`, `LANGUAGE`, `TZ` and every `LC_*`: the language and time the command speaks.
    package static let names: Set<String> = [
        "HOME", "USER", "LOGNAME", "PATH", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS",
        "XDG_DATA_HOME", "XDG_CONFIG_HOME", "LANG", "LANGUAGE", "TZ",
    ]

    /// Whether variable `name` is kept on disk: one of ``names``, or a locale category (`LC_…`).
    package static func isKept(_ name: String) -> Bool {
        names.contains(name) || name.hasPrefix("LC_")
    }

    /// `environment` split in two: what is kept on disk, and the rest.
    package static func split(_ environment: [String: String]) -> (kept: [String: String], rest: [String: String]) {
        (environment.filter { isKept($0.key) }, environment.filter { !isKept($0.key) })
    }

    /// A new token naming a runtime file: 32 random hex digits.
    package static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }

    /// Whether `token` is one ``newToken()`` could have made (so a file name of its own, never a path).
    package static func isToken(_ token: String) -> Bool {
        token.utf8.count == 32
            && token.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }

    /// The runtime files of one user's scheduled toasts: `<folder>/scheduled-env-<token>.json`. Written and removed
    /// under the schedule store's lock; read by any reader of a schedule (a file is whole before a schedule names it).
    package struct Files: Sendable {
        /// The runtime folder.
        package let folder: String

        private struct File: Codable {
            var format: String
            var version: Int
            var id: String
            var environment: [String: String]
        }

        private static let format = "toastkit-scheduled-environment"
        private static let version = 1
        /// The largest file read back.
        private static let maximumSize = 16 << 20

        /// The files of `environment`'s runtime folder.
        package init(environment: [String: String]) {
            folder = PrivateFiles.runtimeFolder(environment: environment)
        }

        /// The file of `token`.
        package func path(of token: String) -> String {
            "\(folder)/scheduled-env-\(token).json"
        }

        /// Writes `rest`, the environment of scheduled toast `id` that is not kept on disk, as the file of `token`
        /// (mode 0600, created new: never over a file, never through a link); the folder is made (0700) or made
        /// private.
        package func write(_ rest: [String: String], id: String, token: String) throws(PrivateFileError) {
            try PrivateFiles.prepareFolder(folder, tighten: true)
            let path = path(of: token)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let bytes: [UInt8]
            do {
                bytes = Array(
                    try encoder.encode(File(format: Self.format, version: Self.version, id: id, environment: rest)))
            } catch {
                throw PrivateFileError("cannot encode \(path)", reason: "\(error)")
            }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { throw PrivateFileError.errno("cannot create \(path)") }
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes {
                    Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    let error = PrivateFileError.errno("cannot write \(path)")
                    close(descriptor)
                    unlink(path)
                    throw error
                }
                offset += written
            }
            close(descriptor)
        }

        /// The environment the file of `token` holds for scheduled toast `id`: nil when there is no such file (its
        /// session ended, the machine restarted). A file that cannot be trusted — not this user's regular file, too
        /// large, not this format, another toast's — is removed, with one line on the log, and counts as none.
        package func read(id: String, token: String) -> [String: String]? {
            let path = path(of: token)
            do {
                guard let bytes = try PrivateFiles.contents(of: path, maximumSize: Self.maximumSize) else { return nil }
                guard let file = try? JSONDecoder().decode(File.self, from: Data(bytes)),
                    file.format == Self.format, file.version == Self.version
                else {
                    throw PrivateFileError("cannot use \(path)", reason: "it is not a scheduled toast's environment")
                }
                guard file.id == id else {
                    throw PrivateFileError(
                        "cannot use \(path)", reason: "it is toast \"\(file.id)\"'s, not \"\(id)\"'s")
                }
                if let name = file.environment.keys.first(where: { $0.isEmpty || $0.contains("=") }) {
                    throw PrivateFileError("cannot use \(path)", reason: "it names a variable \"\(name)\"")
                }
                return file.environment
            } catch {
                ErrorLine.write(
                    "warning: \(error); scheduled toast \"\(id)\" runs its commands with its kept variables only")
                remove(token)
                return nil
            }
        }

        /// Removes the file of `token`, if there is one.
        package func remove(_ token: String) {
            unlink(path(of: token))
        }
    }
}
