// Finding a program named without a slash on a PATH that is given, not on this process's: what Spawn starts.
import Glibc

/// Finds the file of a program named without a slash, as `execvp` would in the program's own environment.
///
/// `posix_spawnp` searches the `PATH` of the calling process, whatever environment the program is given: root's
/// `toastkit --user` would have run `getent` from the caller's PATH, and the agent an `--on-action` command from the
/// PATH of whichever script started the agent. Every program ToastKit starts is found here instead, on the PATH of
/// the environment it runs with.
package enum ProgramPath {
    /// glibc's search path when `PATH` is unset (`confstr(_CS_PATH)`).
    package static let defaultPath = "/bin:/usr/bin"

    /// The file to run for `name`: `name` itself when it has a slash; else the first executable regular file named
    /// `name` in the folders of `path` (nil: ``defaultPath``; an empty entry is the working folder), relative entries
    /// taken from `workingDirectory` (nil: this process's).
    ///
    /// - Returns: the file, or `ENOENT` when there is none (`EACCES` when one was found but may not be run).
    package static func find(_ name: [UInt8], path: String?, workingDirectory: String?) -> Result<[UInt8], Errno> {
        guard !name.isEmpty else { return .failure(Errno(ENOENT)) }
        if name.contains(UInt8(ascii: "/")) { return .success(name) }
        var denied = false
        for entry in (path ?? defaultPath).utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) {
            var folder = Array(entry)
            if folder.isEmpty { folder = [UInt8(ascii: ".")] }
            if folder.first != UInt8(ascii: "/"), let workingDirectory {
                folder = Array(workingDirectory.utf8) + [UInt8(ascii: "/")] + folder
            }
            let candidate = folder + [UInt8(ascii: "/")] + name
            switch check(candidate) {
            case .runnable: return .success(candidate)
            case .denied: denied = true
            case .absent: continue
            }
        }
        return .failure(Errno(denied ? EACCES : ENOENT))
    }

    private enum Check { case runnable, denied, absent }

    private static func check(_ file: [UInt8]) -> Check {
        (file.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { text in
            var info = stat()
            guard stat(text.baseAddress!, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return .absent }
            return access(text.baseAddress!, X_OK) == 0 ? .runnable : .denied
        }
    }
}
