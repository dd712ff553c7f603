import Glibc
import ToastKit
package import ToastModel

/// The store of the toasts the command line keeps with Later: the application `toastkit`'s own file, into which the
/// shared file of earlier versions is moved the first time it is used; and beside it the requests of those kept with
/// `--on-action` commands, which their buttons run again when `toastkit later --show` hands them back to the agent.
package enum CommandLineLater {
    /// The command line's application name, whose store `toastkit later` shows.
    package static let application = "toastkit"

    /// The folder, in the user's state folder, of the requests of the toasts kept with Later that have `--on-action`
    /// commands: one file per toast, as a scheduled toast's (``ScheduleStore``, its `due` the moment it was kept),
    /// with the sender's environment kept as a schedule keeps it (``KeptEnvironment``). A kept toast's record
    /// (``ToastKit/ToastLaterRecord``) has its actions' ids and titles only: this is where their commands are.
    package static let commandsFolderName = "later-commands"

    /// The requests of the command line's toasts kept with Later that have `--on-action` commands
    /// (``commandsFolderName``).
    package static func commands(environment: [String: String]) throws(PrivateFileError) -> ScheduleStore {
        try ScheduleStore.open(environment: environment, name: commandsFolderName)
    }

    /// The store of `application` (the command line's by default). The command line's store first takes in what the
    /// shared `later.json` of earlier versions holds, so nothing kept before an upgrade is lost.
    package static func store(application: String = application, environment: [String: String]) -> FileLaterStore {
        let store = FileLaterStore.standard(application: application, environment: environment)
        if application == Self.application { moveSharedFile(into: store, environment: environment) }
        return store
    }

    /// Moves the records of the shared file of earlier versions into `store`, under both files' locks: the shared
    /// file is left holding an empty list (never removed, so an old version writing at that moment cannot lose its
    /// record to an unlink). A record whose id is already kept is replaced only by a newer one. A failure leaves
    /// the shared file as it is, to be moved next time.
    private static func moveSharedFile(into store: FileLaterStore, environment: [String: String]) {
        let shared = FileLaterStore.shared(environment: environment)
        var info = stat()
        // An empty list is under 64 bytes, and any record makes the file longer: nothing to read.
        guard lstat(shared.url.path, &info) == 0, info.st_size >= 64 else { return }
        do throws(LaterStoreProblem) {
            try shared.update { (old: inout [ToastLaterRecord]) throws(LaterStoreProblem) in
                guard !old.isEmpty else { return }
                let moving = old
                try store.update { (mine: inout [ToastLaterRecord]) in
                    for record in moving {
                        if let index = mine.firstIndex(where: { $0.id == record.id }) {
                            if record.deferredAt > mine[index].deferredAt { mine[index] = record }
                        } else {
                            mine.append(record)
                        }
                    }
                }
                old = []
            }
        } catch {
            return
        }
    }
}
