// The runtime folder as the agent and the `toastkit` commands use it: ToastModel's choice
// (`PrivateFiles.runtimeFolderChoice`), with a refused `/tmp` folder said once per process on standard error — the
// command's, or the agent's log.

import Synchronization
import ToastModel

/// The private runtime folder of the agent's journal and hand-over files and of the `--id` store, chosen by
/// ``PrivateFiles/runtimeFolderChoice(environment:temporaryFolder:)``. A `/tmp/toastkit-<uid>` that another user made
/// (or made a link) is refused and the user's own folder used instead, never silently: the first use in a process
/// writes the refusal as one line to standard error (`toastkit: refusing /tmp/toastkit-1001, …`), which for an agent
/// that `send` started is `agent.log`.
package enum RuntimeFolder {
    /// Whether this process has told its refusal.
    private static let told = Atomic(false)

    /// The folder for `environment`, its refusal (if any) told once in this process.
    package static func path(environment: [String: String]) -> String {
        let choice = PrivateFiles.runtimeFolderChoice(environment: environment)
        if let refusal = choice.refusal, !told.exchange(true, ordering: .relaxed) { ErrorLine.write(refusal) }
        return choice.path
    }
}
