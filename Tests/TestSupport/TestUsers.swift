// Real second Unix users for the tests about users, terminals and permissions: made with `useradd` (the tests run as
// root), one per name, kept between runs.
public import Glibc
import Synchronization

/// Real Unix users for the tests that need another user than root: `--user`, a folder planted by someone else, a
/// program on another user's PATH. Each is made once with `useradd` (a system user with a group and a home of its
/// own under `/var/lib/toastkit-tests`, no login shell) and kept for later runs; a test names its own user, so tests
/// that run at once never share one.
public enum TestUsers {
    /// A user: name, ids and home.
    public struct User: Sendable, Equatable {
        /// The login name (`tk-<tag>`).
        public var name: String
        /// Its uid.
        public var uid: uid_t
        /// Its primary group.
        public var gid: gid_t
        /// Its home folder (owned by it, mode 0700).
        public var home: String
    }

    /// The folder the users' homes are in.
    public static let homes = "/var/lib/toastkit-tests"

    private static let made = Mutex<[String: User]>([:])

    /// The user `tk-<tag>`, made when it does not exist yet. `tag`: lowercase letters, digits and dashes, at most 24.
    public static func user(_ tag: String) throws -> User {
        let name = "tk-\(tag)"
        guard tag.count <= 24, tag.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 })
        else { throw TestEnvironmentError("TestUsers: \(tag) is not a user tag (a-z, 0-9, -; 24 at most)") }
        return try made.withLock { made in
            if let user = made[name] { return user }
            guard geteuid() == 0 else {
                throw TestEnvironmentError("TestUsers: these tests make real users with useradd and must run as root")
            }
            // useradd locks /etc/passwd itself and fails at once when another holds it: one at a time on this
            // machine (the two test passes, another checkout's run).
            let lock = open("/run/toastkit-test-users.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard lock >= 0 else { throw TestEnvironmentError("TestUsers: cannot open /run/toastkit-test-users.lock") }
            defer { close(lock) }
            while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
            if lookUp(name) == nil {
                _ = mkdir(homes, 0o755)
                _ = chmod(homes, 0o755)
                let status = run([
                    "/usr/sbin/useradd", "--system", "--user-group", "--create-home", "--home-dir", "\(homes)/\(name)",
                    "--shell", "/usr/sbin/nologin", name,
                ])
                guard status == 0 else {
                    throw TestEnvironmentError(
                        "TestUsers: useradd \(name) failed (exit \(status)); install the passwd package")
                }
            }
            guard let user = lookUp(name) else {
                throw TestEnvironmentError("TestUsers: \(name) is not in /etc/passwd")
            }
            _ = chmod(user.home, 0o700)
            made[name] = user
            return user
        }
    }

    /// The user's entry in `/etc/passwd`.
    private static func lookUp(_ name: String) -> User? {
        guard let file = fopen("/etc/passwd", "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            let fields = String(cString: line).split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 7, fields[0] == name, let uid = uid_t(fields[2]), let gid = gid_t(fields[3]) else {
                continue
            }
            return User(name: name, uid: uid, gid: gid, home: String(fields[5]))
        }
        return nil
    }

    private static func run(_ argv: [String]) -> Int32 {
        guard
            let child = try? ChildProcess.spawn(
                argv[0], Array(argv.dropFirst()), environment: ["PATH": "/usr/bin:/bin"])
        else { return -1 }
        return child.wait()
    }
}
