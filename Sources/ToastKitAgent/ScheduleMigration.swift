// The single `scheduled.json` of earlier versions (version 1 of the format: every schedule of the user in one file),
// taken into the folder of one file per schedule once, then removed.
import FoundationEssentials
import Glibc
import ToastModel

extension ScheduleStore {
    /// The largest file of an earlier version taken in: they read theirs back up to 16 MiB, and wrote one more
    /// schedule over that before setting it aside.
    static let oldMaximumSize = 64 << 20

    /// The file of an earlier version: every schedule in `toasts`, each read alone (one that cannot be trusted costs
    /// the others nothing).
    private struct OldFile: Decodable {
        var format: String
        var version: Int
        var toasts: [OldEntry]
    }

    /// One schedule of an earlier version's file, or why it cannot be read.
    private struct OldEntry: Decodable {
        let entry: Result<Entry, any Error>

        init(from decoder: any Decoder) throws {
            entry = Result { try Entry(from: decoder) }
        }
    }

    /// Takes the file of an earlier version in if it is there (under the lock); false when it is there and the lock
    /// cannot be had.
    func takeInOldFileIfThere() -> Bool {
        guard exists(oldPath) else { return true }
        let lock: PrivateFiles.Lock
        do {
            lock = try PrivateFiles.Lock(lockPath)
        } catch {
            ErrorLine.write("warning: \(oldPath) is not taken in yet: \(error)")
            return false
        }
        defer { lock.unlock() }
        takeInOldFile()
        return true
    }

    /// Takes every schedule of the earlier version's file into the folder (the lock is held), with its sender's
    /// variables as they were (its runtime file, or — from a file older still, with whole environments — a new one),
    /// except those whose id has a file in the folder already: the folder's is the newer word. Then the file is
    /// removed; kept as `scheduled.json.refused` when some of its schedules could not be trusted (each said in one
    /// line), or the whole of it (not this format, too large: one line); kept as it is, for the next try, when a
    /// schedule could not be written.
    func takeInOldFile() {
        let toasts: [OldEntry]
        do {
            guard let bytes = try PrivateFiles.contents(of: oldPath, maximumSize: Self.oldMaximumSize) else { return }
            let file: OldFile
            do {
                file = try JSONDecoder().decode(OldFile.self, from: Data(bytes))
            } catch {
                throw AgentStore.Refusal(description: "it is not a file of scheduled toasts")
            }
            guard file.format == Self.format, file.version == 1 else {
                throw AgentStore.Refusal(description: "it is not version 1 of \(Self.format)")
            }
            toasts = file.toasts
        } catch {
            ErrorLine.write(
                "warning: the scheduled toasts of \(oldPath) are not taken in: \(error); the file is kept as"
                    + " \(oldPath).refused")
            _ = rename(oldPath, oldPath + ".refused")
            return
        }
        var (taken, refused, unwritten) = (0, 0, 0)
        for (index, toast) in toasts.enumerated() {
            do {
                let entry = try toast.entry.get()
                try entry.checkRange()
                guard case .none = current(entry.id) else { continue }
                let whole = !KeptEnvironment.split(entry.request.environment ?? [:]).rest.isEmpty
                let kept = whole ? entry : merged(entry)
                do {
                    // As it was: its runtime file, if it has one, stays its own.
                    try write(kept, before: kept)
                    taken += 1
                } catch {
                    ErrorLine.write(
                        "warning: the scheduled toast \"\(entry.id)\" of \(oldPath) is not taken in: \(error)")
                    unwritten += 1
                }
            } catch {
                ErrorLine.write("warning: scheduled toast \(index + 1) of \(oldPath) is not taken in: \(error)")
                refused += 1
            }
        }
        guard unwritten == 0 else { return }
        if refused > 0 {
            ErrorLine.write(
                "took \(taken) scheduled toast(s) from \(oldPath) into \(folder); the \(refused) it could not trust are"
                    + " kept in \(oldPath).refused")
            _ = rename(oldPath, oldPath + ".refused")
        } else {
            ErrorLine.write("took \(taken) scheduled toast(s) from \(oldPath) into \(folder)")
            unlink(oldPath)
        }
        PrivateFiles.syncFolder(PrivateFiles.parent(of: oldPath))
    }
}
