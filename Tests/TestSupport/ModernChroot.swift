// Running a process of a modern server (ModernServer) inside the cached Debian 13 chroot: where the chroot is, and the
// command that starts one process there, in a mount namespace of its own on a throw-away overlay of the chroot, with
// the host's temporary folder (the private buses, the run folders) and the project's harness folder at the same
// paths, so that every path and bus address is the same inside and out.
import Foundation
import Glibc
import Synchronization

/// The Debian 13 chroot with the modern servers (`scripts/modern-chroot.sh`), and how a process starts in it.
///
/// Every process gets its own mount namespace (`unshare --mount`): an overlay of the cached tree on a tmpfs (nothing
/// reaches the cache, and it all goes when the process's namespace ends), `/proc`, `/sys`, `/dev`, and bind mounts of
/// the host's temporary folder and `scripts/harness`. It runs as root with the chroot's `PATH`; its pid is the one
/// `ChildProcess` reports (`unshare`, `sh` and `chroot` each replace themselves), so it is stopped like any other.
/// The X display is the host's Xvfb (its abstract socket is reachable from the chroot).
public enum ModernChroot {
    private static let cached = Mutex<String?>(nil)

    /// The chroot's path, from `scripts/modern-chroot.sh --path` (or `TOASTKIT_MODERN_CHROOT`).
    ///
    /// - Throws: ``TestEnvironmentError`` saying to run `scripts/modern-chroot.sh` when it is not made.
    public static func root() throws -> String {
        if let root = cached.withLock({ $0 }) { return root }
        let root: String
        if let given = ProcessInfo.processInfo.environment["TOASTKIT_MODERN_CHROOT"], !given.isEmpty {
            root = given
        } else {
            let script = "\(NotificationEnvironment.repositoryRoot)/scripts/modern-chroot.sh"
            let result = try Tools.run(script, ["--path"])
            root = result.output.trimmed
            guard result.status == 0 else {
                throw TestEnvironmentError(
                    "the modern servers' chroot is not made (\(root)): run scripts/modern-chroot.sh as root "
                        + "(about 10 minutes, once; scripts/test.sh runs it)")
            }
        }
        guard access("\(root)/.complete", F_OK) == 0 else {
            throw TestEnvironmentError("\(root) is not a complete chroot: run scripts/modern-chroot.sh as root")
        }
        cached.withLock { $0 = root }
        return root
    }

    /// The first of `candidates` (absolute paths inside the chroot) that exists there, or nil.
    static func firstExisting(_ candidates: [String]) -> String? {
        guard let root = try? root() else { return nil }
        return candidates.first { access(root + $0, F_OK) == 0 }
    }

    /// What the chroot's processes see of the host at the same path: the temporary folder (buses, run folders) and
    /// the project's harness files.
    static var sharedFolders: [String] {
        var temporary = NSTemporaryDirectory()
        while temporary.count > 1, temporary.hasSuffix("/") { temporary.removeLast() }
        return [temporary, "\(NotificationEnvironment.repositoryRoot)/scripts/harness"]
    }

    /// The shell script that makes the namespace's mounts and then runs the command in the chroot:
    /// `sh -c SCRIPT sh ROOT MOUNT-FOLDER SHARED-FOLDER… -- VAR=VALUE… EXECUTABLE ARGUMENTS…`.
    static let script = """
        set -e
        root=$1 scratch=$2; shift 2
        mount -t tmpfs -o mode=0755 toastkit-chroot "$scratch"
        mkdir "$scratch/upper" "$scratch/work" "$scratch/root"
        mount -t overlay overlay -o "lowerdir=$root,upperdir=$scratch/upper,workdir=$scratch/work" "$scratch/root"
        r=$scratch/root
        mount -t proc proc "$r/proc"
        mount -t sysfs sysfs "$r/sys"
        mount --rbind /dev "$r/dev"
        while [ "$1" != -- ]; do mkdir -p "$r$1"; mount --bind "$1" "$r$1"; shift; done
        shift
        ulimit -c 0
        exec chroot "$r" /usr/bin/env -i "$@"
        """

    /// The executable, arguments and environment that run `executable` (a path inside the chroot, or a command on
    /// its `PATH`) with `environment` in the chroot. `scratch` is an empty folder of the run folder: the process's
    /// namespace mounts its overlay there (the host sees it empty).
    static func command(
        _ executable: String, _ arguments: [String], environment: [String: String], scratch: String
    ) throws -> (executable: String, arguments: [String], environment: [String: String]) {
        let root = try root()
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        var inside = environment.filter { !$0.key.hasPrefix("LD_") && $0.key != "PATH" && $0.key != "TMPDIR" }
        inside["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        inside["LANG"] = "C.UTF-8"
        let variables = inside.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let unshare = try Tools.require("unshare", package: "util-linux")
        return (
            unshare,
            ["--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh", root, scratch]
                + sharedFolders + ["--"] + variables + [executable] + arguments,
            ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        )
    }
}
