// When the desktop presenter tells the server that a toast's time stopped or runs again (decisions 0004 and 0010):
// only when the server's own timer would otherwise close the notification before the center does, and then in time.
import ToastModel

extension DesktopPresenterMachine {
    /// What the server's own timer will do with a notification, as the last `Notify` for it said.
    enum ServerTimer: Sendable, Equatable {
        /// Not known: nothing sent yet, a server that forgot it, or a notification adopted from another process.
        case unknown
        /// Told never to expire it (`expire_timeout` 0, or "never" for this server), or a server that ignores the
        /// timeout (GNOME Shell).
        case never
        /// Told to expire it then (the time of the `Notify` plus its timeout: the server counts from when it has it,
        /// which is no earlier).
        case closesAt(Duration)
    }

    /// How long before the server's own timer would close a notification the presenter tells it a timer change it has
    /// held back: time for a `Notify` to cross a busy bus and be read, and for a late wake-up.
    package static let timerNotice: Duration = .seconds(2)

    /// What the server's timer does after a `Notify` of `presentation` now.
    func serverTimer(of presentation: ToastPresentation, _ capabilities: ServerCapabilities) -> ServerTimer {
        guard capabilities.honoursExpireTimeout, presentation.toast.isTimerRunning,
            let remaining = presentation.toast.remaining
        else { return .never }
        return .closesAt(ledger.now + remaining)
    }

    /// The toast's timer changed (its `latest` has the new one). The center closes a toast itself when its time is up;
    /// the server's timer only must never come first. So a change is sent at once only when the server's timer is
    /// not known, or when a timer that had stopped runs again (the server then shows the time that is left); a timer
    /// that stops, or runs on past what the server was told, is told ``timerNotice`` before the server's timer would
    /// close the notification — and not at all if the toast ends, or is in front again with time to spare, first. A
    /// toast covered for a moment, or a screen locked for one, costs no `Notify`.
    mutating func timerChanged(_ toast: inout Toast, into out: inout [Action]) {
        toast.timerDue = nil
        guard let latest = toast.latest?.toast, toast.everSent, !toast.dirty else {
            // Not on the server yet, or newer content on its way: that `Notify` carries the timer.
            toast.dirty = true
            return
        }
        switch toast.serverTimer {
        case .unknown:
            toast.dirty = true
        case .never:
            if latest.isTimerRunning, latest.remaining != nil { toast.dirty = true }
        case .closesAt(let deadline):
            if latest.isTimerRunning, let remaining = latest.remaining, ledger.now + remaining <= deadline { return }
            let due = deadline - Self.timerNotice
            guard due > ledger.now else {
                toast.dirty = true
                return
            }
            toast.timerDue = due
            out.append(.wake(at: due))
        }
    }

    /// The toasts whose held-back timer change is due: each is content to send from now on (it goes out as soon as
    /// nothing holds it: a call on its way, the link, the update interval).
    mutating func takeTimersDue() -> [String] {
        let due = ledger.toasts.filter { $0.value.timerDue.map { $0 <= ledger.now } ?? false }.keys.sorted()
        for id in due {
            guard var toast = ledger.toasts[id] else { continue }
            toast.timerDue = nil
            if toast.wanted {
                toast.dirty = true
                // Its time ran on since the center said what was left: the server is told what is left now.
                if var latest = toast.latest, latest.toast.isTimerRunning, let remaining = latest.toast.remaining {
                    latest.toast.remaining = max(.zero, remaining - (ledger.now - toast.latestAt))
                    toast.latest = latest
                    toast.latestAt = ledger.now
                }
            }
            ledger.toasts[id] = toast
        }
        return due
    }

    /// The earliest moment a held-back timer change is due.
    var nextTimerDue: Duration? {
        ledger.toasts.values.compactMap(\.timerDue).min()
    }
}
