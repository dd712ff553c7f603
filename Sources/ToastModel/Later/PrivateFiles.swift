#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Small POSIX helpers for the package's private state files (the Later store here, the CLI's id store): private
// folders and files, an exclusive lock for read-modify-write, and writes that a crash cannot tear.

/// Why a private file or folder could not be used: the path, and the system's reason.
package struct PrivateFileError: Error, Sendable, CustomStringConvertible {
    /// What was being done, with the path, e.g. `cannot write /x/later.json`.
    package var action: String
    /// The reason, e.g. `No space left on device`.
    package var reason: String

    /// An error for `action` (with its path) failing because of `reason`.
    package init(_ action: String, reason: String) {
        self.action = action
        self.reason = reason
    }

    /// The error for `action` failing with the current `errno`.
    package static func errno(_ action: String) -> PrivateFileError {
        PrivateFileError(action, reason: String(cString: strerror(lastError())))
    }

    /// `action: reason`.
    package var description: String { "\(action): \(reason)" }
}

/// The calling thread's `errno` (a function, so that names in the types below do not hide it).
private func lastError() -> Int32 { errno }

/// Folders and files only this user can read: folders 0700, files 0600.
package enum PrivateFiles {
    /// Creates `path` and its missing parents with mode 0700. When `tighten` is set, an existing `path` owned by
    /// this user is made 0700 if it was open to others (a folder owned by someone else, or that is not a folder,
    /// is refused); parents that already exist are left as they are.
    package static func prepareFolder(_ path: String, tighten: Bool) throws(PrivateFileError) {
        var missing: [String] = []
        var current = path
        while !current.isEmpty, current != "/", !exists(current) {
            missing.append(current)
            current = parent(of: current)
        }
        for folder in missing.reversed() {
            if mkdir(folder, 0o700) != 0 && lastError() != EEXIST {
                throw .errno("cannot create \(folder)")
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .errno("cannot use \(path)") }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw PrivateFileError("cannot use \(path)", reason: "it is not a folder")
        }
        guard tighten else { return }
        guard info.st_uid == geteuid() else {
            throw PrivateFileError(
                "refusing to use \(path)", reason: "it belongs to uid \(info.st_uid), not \(geteuid())")
        }
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw .errno("cannot make \(path) private")
        }
    }

    /// The package's folder of lasting state (the Later stores, scheduled toasts, `run`'s logs, the actions' log):
    /// `$XDG_STATE_HOME/toastkit` for an absolute `XDG_STATE_HOME`, else `$HOME/.local/state/toastkit`; nil when
    /// there is neither.
    package static func stateFolder(environment: [String: String]) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/toastkit" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/toastkit" }
        return nil
    }

    /// The folder part of `path` (`/` for a top-level name).
    package static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let head = String(path[..<slash])
        return head.isEmpty ? "/" : head
    }

    /// Whether `path` is a folder (following symbolic links).
    package static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The largest file ``contents(of:maximumSize:)`` reads by default: the package's state files are far smaller.
    package static let defaultMaximumSize = 16 << 20

    /// Reads the whole file at `path`; `nil` when it does not exist (or a folder on its path does not). A file
    /// owned by this user that others could read is made 0600.
    ///
    /// The file is opened without blocking and without following a symbolic link, and checked before a byte is
    /// read: a FIFO, a device, a folder or a file of another user is refused at once, and so is a file larger than
    /// `maximumSize` (its size is never allocated).
    ///
    /// - Throws: when the file exists but cannot be read, is not a regular file, belongs to another user or is too
    ///   large.
    package static func contents(of path: String, maximumSize: Int = defaultMaximumSize) throws(PrivateFileError)
        -> [UInt8]?
    {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            if lastError() == ENOENT || lastError() == ENOTDIR { return nil }
            throw .errno("cannot read \(path)")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .errno("cannot read \(path)") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw PrivateFileError("cannot read \(path)", reason: "it is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw PrivateFileError(
                "cannot read \(path)", reason: "it belongs to uid \(info.st_uid), not \(geteuid())")
        }
        guard info.st_size <= maximumSize else {
            throw PrivateFileError(
                "cannot read \(path)", reason: "it has \(info.st_size) bytes, more than the \(maximumSize) allowed")
        }
        if info.st_mode & 0o077 != 0 { _ = fchmod(descriptor, 0o600) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if lastError() == EINTR { continue }
                throw .errno("cannot read \(path)")
            }
            if count == 0 { return bytes }
            // It grew while being read.
            guard bytes.count + count <= maximumSize else {
                throw PrivateFileError("cannot read \(path)", reason: "it has more than \(maximumSize) bytes")
            }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }

    /// Replaces the file at `path` with `bytes` so that a crash at any moment leaves the old file or the new one,
    /// never a mix: a temporary file (mode 0600) in the same folder is written and flushed to disk (`fsync`), then
    /// renamed over `path`, and the folder is flushed. The caller holds the file's ``Lock``; temporary files left
    /// by a writer that was killed are removed first: with `sweeping`, every one of the file's in the folder (a look
    /// at the whole folder); without, only the one this process would use — for a folder of many files, whose owner
    /// removes the others (``isTemporary(_:)``) when it reads the folder anyway.
    package static func replace(_ path: String, with bytes: [UInt8], sweeping: Bool = true) throws(PrivateFileError) {
        let folder = parent(of: path)
        let name = String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
        let temporary = "\(folder)/\(name).\(getpid()).tmp"
        if sweeping { removeTemporaries(of: name, in: folder) } else { unlink(temporary) }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw .errno("cannot write \(temporary)") }
        var closed = false
        defer { if !closed { close(descriptor) } }
        do throws(PrivateFileError) {
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 {
                    if lastError() == EINTR { continue }
                    throw .errno("cannot write \(temporary)")
                }
                offset += written
            }
            guard fsync(descriptor) == 0 else { throw .errno("cannot write \(temporary)") }
            closed = true
            guard close(descriptor) == 0 else { throw .errno("cannot write \(temporary)") }
            // A fail point for the crash-safety tests: a writer of the file named by the variable waits here, its new
            // file written and the old one untouched, so a test can kill it at the one moment that matters
            // (docs/reliability.md).
            if let held = getenv("TOASTKIT_FAILPOINT_HOLD_BEFORE_RENAME"), String(cString: held) == name { sleep(60) }
            guard rename(temporary, path) == 0 else { throw .errno("cannot replace \(path)") }
        } catch {
            unlink(temporary)
            throw error
        }
        // The rename is durable once the folder is flushed too.
        syncFolder(folder)
    }

    /// Flushes `folder` to disk: a rename or a removal in it is durable once this returns (best effort).
    package static func syncFolder(_ folder: String) {
        let directory = open(folder, O_RDONLY | O_CLOEXEC | O_DIRECTORY)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// The names in `folder`, sorted, without `.` and `..` (none when it cannot be read).
    package static func names(in folder: String) -> [String] {
        (listing(of: folder) ?? []).sorted()
    }

    /// The names in `folder`, in the order the folder gives them, without `.` and `..`: none when there is no such
    /// folder, nil when it cannot be read.
    package static func listing(of folder: String) -> [String]? {
        guard let directory = opendir(folder) else { return lastError() == ENOENT ? [] : nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether `name` is a temporary file of ``replace(_:with:sweeping:)``: `<file>.<pid>.tmp`. Only a writer holding
    /// the file's lock makes one, so any found under the lock was left by a writer that died.
    package static func isTemporary(_ name: String) -> Bool {
        guard name.hasSuffix(".tmp") else { return false }
        let stem = name.dropLast(4)
        guard let dot = stem.lastIndex(of: "."), dot != stem.startIndex else { return false }
        let pid = stem[stem.index(after: dot)...]
        return !pid.isEmpty && pid.allSatisfy(\.isNumber)
    }

    /// Removes the `<name>.<pid>.tmp` files of `name` (``isTemporary(_:)``).
    private static func removeTemporaries(of name: String, in folder: String) {
        for entryName in names(in: folder) where entryName.hasPrefix(name + ".") && isTemporary(entryName) {
            guard entryName.dropFirst(name.count + 1).dropLast(4).allSatisfy(\.isNumber) else { continue }
            unlink("\(folder)/\(entryName)")
        }
    }

    /// An exclusive `flock` on a lock file (created with mode 0600), held until ``unlock()`` or the end of the
    /// value's life. Another holder is waited for in turn (the kernel's queue) but at most a bound: a stopped or hung
    /// process of the user that holds it (a `toastkit` stopped with Ctrl-Z, a hung disk) costs a refusal in one line,
    /// never a wait without end.
    package final class Lock {
        private var descriptor: Int32

        /// How long a lock held by others is waited for, by default: far beyond what a queue of writers takes (each
        /// holds it for a read-change-write and two `fsync`s, seconds on a loaded disk).
        package static let defaultBound: Duration = .seconds(30)

        /// Takes the lock on `path`, waiting for other holders at most `bound`.
        ///
        /// - Throws: when the file cannot be opened or locked, or it stayed locked for all of `bound`.
        package init(_ path: String, within bound: Duration = Lock.defaultBound) throws(PrivateFileError) {
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { throw .errno("cannot open \(path)") }
            var info = stat()
            if fstat(descriptor, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 != 0 {
                _ = fchmod(descriptor, 0o600)
            }
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                let error = lastError()
                if error == EINTR { continue }
                guard error == EWOULDBLOCK else {
                    let failure = PrivateFileError.errno("cannot lock \(path)")
                    close(descriptor)
                    descriptor = -1
                    throw failure
                }
                // Held: a thread of its own waits in line for it (flock has no timeout), this one at most `bound`.
                guard LockWait.wait(descriptor, bound: bound) else {
                    // The waiting thread owns the descriptor now: it closes it, lock or not.
                    descriptor = -1
                    throw PrivateFileError(
                        "cannot lock \(path)",
                        reason:
                            "it stayed locked for \(Self.text(bound)) (by another process: a stopped or hung "
                            + "toastkit, a slow disk?)")
                }
                return
            }
        }

        private static func text(_ bound: Duration) -> String {
            let milliseconds = bound.components.seconds * 1000 + bound.components.attoseconds / 1_000_000_000_000_000
            return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
        }

        /// Releases the lock (closing the descriptor).
        package func unlock() {
            guard descriptor >= 0 else { return }
            close(descriptor)
            descriptor = -1
        }

        deinit { unlock() }
    }
}
