// The choice of the private runtime folder (PrivateFiles.runtimeFolderChoice), step by step, in private stand-ins
// for /run/user and /tmp (issue 40). The users' end-to-end cases are in ToastKitCommandLineTests/RuntimeFolderTests.

import Foundation
import Glibc
import Testing
import ToastModel

@Suite struct RuntimeFolderChoiceTests {
    /// A private folder with `run-user` (standing for `/run/user`), `tmp` (for `/tmp`) and `home` in it.
    private struct Place {
        let folder: String
        var root: String { folder + "/run-user" }
        var temporary: String { folder + "/tmp" }
        var home: String { folder + "/home" }
        var shared: String { "\(temporary)/toastkit-\(geteuid())" }

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("toastkit-runtime-\(UUID())").path
            for path in [folder, folder + "/run-user", folder + "/tmp", folder + "/home"] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
        }

        /// What cron gives a job: a home, no XDG_RUNTIME_DIR.
        var cron: [String: String] { ["HOME": home, "PATH": "/usr/bin:/bin", "TOASTKIT_USER_RUNTIME_ROOT": root] }

        func choice(_ environment: [String: String]? = nil) -> RuntimeFolderChoice {
            PrivateFiles.runtimeFolderChoice(environment: environment ?? cron, temporaryFolder: temporary)
        }

        func remove() { try? FileManager.default.removeItem(atPath: folder) }
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }

    @Test func anAbsoluteXDGRuntimeDirComesFirst() throws {
        let place = try Place()
        defer { place.remove() }
        var environment = place.cron
        environment["XDG_RUNTIME_DIR"] = place.home
        #expect(place.choice(environment) == RuntimeFolderChoice(path: place.home + "/toastkit"))
        // Relative, or not a folder: as if unset.
        for value in ["relative/runtime", place.folder + "/absent"] {
            environment["XDG_RUNTIME_DIR"] = value
            #expect(place.choice(environment) == RuntimeFolderChoice(path: place.shared))
        }
    }

    @Test func withoutXDGRuntimeDirTheUsersFolderUnderRunUserIsUsed() throws {
        let place = try Place()
        defer { place.remove() }
        let users = "\(place.root)/\(geteuid())"
        #expect(mkdir(users, 0o700) == 0)
        #expect(place.choice() == RuntimeFolderChoice(path: users + "/toastkit"))
        #expect(access(place.shared, F_OK) != 0, "nothing made in /tmp")
    }

    @Test func aFolderUnderRunUserThatIsNotTheUsersOwnIsPassedOver() throws {
        let place = try Place()
        defer { place.remove() }
        let users = "\(place.root)/\(geteuid())"
        // Another user's folder.
        #expect(mkdir(users, 0o700) == 0 && chown(users, 65534, 65534) == 0)
        #expect(place.choice() == RuntimeFolderChoice(path: place.shared))
        // A link to a folder of this user's.
        #expect(rmdir(users) == 0 && symlink(place.home, users) == 0)
        #expect(place.choice() == RuntimeFolderChoice(path: place.shared))
    }

    @Test func aSharedFolderThatDoesNotExistIsMadePrivateAtOnce() throws {
        let place = try Place()
        defer { place.remove() }
        #expect(place.choice() == RuntimeFolderChoice(path: place.shared))
        #expect(mode(place.shared) == 0o700)
        // The user's own: used again (opened up, it stays usable: prepareFolder makes it 0700).
        #expect(chmod(place.shared, 0o755) == 0)
        #expect(place.choice() == RuntimeFolderChoice(path: place.shared))
    }

    @Test func aSharedFolderAnotherUserMadeIsRefusedForTheUsersOwn() throws {
        let place = try Place()
        defer { place.remove() }
        #expect(mkdir(place.shared, 0o777) == 0 && chown(place.shared, 65534, 65534) == 0)
        let refused = place.choice()
        #expect(refused.path == place.home + "/.cache/toastkit/run")
        #expect(
            refused.refusal
                == "refusing \(place.shared), which belongs to uid 65534, not \(geteuid()); keeping this user's "
                + "runtime files in \(place.home)/.cache/toastkit/run")
        // XDG_CACHE_HOME when absolute; the same answer every time (send and the agent agree).
        var environment = place.cron
        environment["XDG_CACHE_HOME"] = place.folder + "/cache"
        #expect(place.choice(environment).path == place.folder + "/cache/toastkit/run")
        environment["XDG_CACHE_HOME"] = "relative"
        #expect(place.choice(environment) == refused)
    }

    @Test func aSharedNameThatIsALinkOrAFileIsRefused() throws {
        let place = try Place()
        defer { place.remove() }
        #expect(symlink(place.home, place.shared) == 0)
        let linked = place.choice()
        #expect(linked.path == place.home + "/.cache/toastkit/run")
        #expect(linked.refusal?.hasPrefix("refusing \(place.shared), which is a symbolic link; ") == true)
        #expect(unlink(place.shared) == 0)
        let file = open(place.shared, O_CREAT | O_WRONLY, 0o600)
        #expect(file >= 0)
        close(file)
        #expect(place.choice().refusal?.hasPrefix("refusing \(place.shared), which is not a folder; ") == true)
    }

    @Test func withNoHomeInTheEnvironmentTheRefusedFolderIsReturnedForPrepareFolderToRefuse() throws {
        let place = try Place()
        defer { place.remove() }
        #expect(symlink(place.home, place.shared) == 0)
        // Never the password database (the static binary's glibc would load NSS modules of another glibc).
        let choice = place.choice(["TOASTKIT_USER_RUNTIME_ROOT": place.root])
        #expect(choice.path == place.shared)
        #expect(choice.refusal?.hasSuffix("; there is no home folder to use instead") == true)
        #expect(throws: PrivateFileError.self) { try PrivateFiles.prepareFolder(choice.path, tighten: true) }
    }
}
