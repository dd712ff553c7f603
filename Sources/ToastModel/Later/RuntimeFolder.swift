// The choice of the package's private runtime folder (the `--id` store, the agent's journal and hand-over files):
// the same for `send` and for the agent of one user, found as the session bus is found, and never a folder that
// another user made (issue 40).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The private runtime folder chosen for an environment (``PrivateFiles/runtimeFolderChoice(environment:temporaryFolder:)``),
/// and, when a folder in `/tmp` was refused, the one line that says so.
package struct RuntimeFolderChoice: Sendable, Equatable {
    /// The folder. It may not exist yet: ``PrivateFiles/prepareFolder(_:tighten:)`` makes it (0700) and checks it.
    package var path: String
    /// Why `/tmp/toastkit-<uid>` was refused and where the state is kept instead, as one line without the
    /// program's name (`refusing /tmp/toastkit-1001, which belongs to uid 1002, not 1001; …`); nil when nothing was
    /// refused.
    package var refusal: String?

    /// The choice of `path`, with `refusal` when a folder was refused on the way.
    package init(path: String, refusal: String? = nil) {
        self.path = path
        self.refusal = refusal
    }
}

extension PrivateFiles {
    /// The private runtime folder of the package's state (the `--id` store, the agent's journal and hand-over
    /// files), in this order:
    ///
    /// 1. `$XDG_RUNTIME_DIR/toastkit` when `XDG_RUNTIME_DIR` is an absolute path to a folder of this user's (one kept
    ///    across `su` or `sudo -E` is another user's, and passed over);
    /// 2. else `<root>/<uid>/toastkit` when `<root>/<uid>` is a real folder (not a link) owned by this user — the
    ///    user's runtime folder that logind and systemd make, where the session bus was found too
    ///    (`DBus.BusAddress`). `<root>` is `/run/user`, or `TOASTKIT_USER_RUNTIME_ROOT` when set and not empty (the
    ///    tests' stand-in). A cron job (no `XDG_RUNTIME_DIR`) thus uses the folder of the agent the bus starts for
    ///    it, whose environment has `XDG_RUNTIME_DIR`;
    /// 3. else `/tmp/toastkit-<uid>` when it can be made now (it is made here, 0700, so that nobody can take the
    ///    name in between) or is already this user's own real folder;
    /// 4. else (another user made it first, or made it a link) a folder of the user's own, which no one else can
    ///    take: `$XDG_CACHE_HOME/toastkit/run` for an absolute `XDG_CACHE_HOME`, else `$HOME/.cache/toastkit/run`
    ///    (`HOME` from the environment), with ``RuntimeFolderChoice/refusal`` set.
    ///    With no home at all the refused folder is returned: ``prepareFolder(_:tighten:)`` then refuses it.
    ///
    /// The same environment gives the same folder, so `send` and the agent it starts agree.
    ///
    /// - Parameter temporaryFolder: The shared folder of step 3 (`/tmp`; the tests' private stand-in).
    package static func runtimeFolderChoice(
        environment: [String: String], temporaryFolder: String = "/tmp"
    ) -> RuntimeFolderChoice {
        let uid = geteuid()
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), isOwnFolder(runtime) {
            return RuntimeFolderChoice(path: runtime + "/toastkit")
        }
        let root = environment["TOASTKIT_USER_RUNTIME_ROOT"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user"
        if ownFolderProblem("\(root)/\(uid)") == nil { return RuntimeFolderChoice(path: "\(root)/\(uid)/toastkit") }
        let shared = "\(temporaryFolder)/toastkit-\(uid)"
        let problem: String
        if mkdir(shared, 0o700) == 0 {
            return RuntimeFolderChoice(path: shared)
        } else if lastErrno() != EEXIST {
            problem = "which cannot be made (\(String(cString: strerror(lastErrno()))))"
        } else if let found = ownFolderProblem(shared) {
            problem = found
        } else {
            return RuntimeFolderChoice(path: shared)
        }
        guard let fallback = ownFallback(environment: environment) else {
            return RuntimeFolderChoice(
                path: shared, refusal: "refusing \(shared), \(problem); there is no home folder to use instead")
        }
        return RuntimeFolderChoice(
            path: fallback, refusal: "refusing \(shared), \(problem); keeping this user's runtime files in \(fallback)")
    }

    /// ``runtimeFolderChoice(environment:temporaryFolder:)``'s folder (its refusal, if any, is not reported).
    package static func runtimeFolder(environment: [String: String]) -> String {
        runtimeFolderChoice(environment: environment).path
    }

    /// Whether `path` is a folder (a link to one counts, as systemd's may be) that belongs to this user: an
    /// `XDG_RUNTIME_DIR` kept across `su` or `sudo -E` names another user's, which is passed over.
    private static func isOwnFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == geteuid()
    }

    /// nil when `path` is a folder owned by this user, not a symbolic link; else why it is not, as a relative
    /// clause (`which is a symbolic link`).
    private static func ownFolderProblem(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return "which cannot be looked at (\(String(cString: strerror(lastErrno()))))"
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: return "which is a symbolic link"
        default: return "which is not a folder"
        }
        guard info.st_uid == geteuid() else { return "which belongs to uid \(info.st_uid), not \(geteuid())" }
        return nil
    }

    /// The folder of step 4 of ``runtimeFolderChoice(environment:temporaryFolder:)``, nil when there is no home.
    private static func ownFallback(environment: [String: String]) -> String? {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/toastkit/run" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.cache/toastkit/run" }
        // Never the password database here: in the fully static `toastkit`, glibc's getpw* load NSS modules of
        // another glibc (scripts/build-cli.sh).
        return nil
    }

    /// The calling thread's `errno`.
    private static func lastErrno() -> Int32 { errno }
}
