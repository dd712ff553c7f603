import DBus
import FreedesktopNotifications
import Glibc
import ToastKit
import ToastKitAgent

/// The hand-over (docs/decisions/0007-hand-over.md): when no agent runs, a `send` whose toast needs the agent only
/// for its time shows the toast itself, as the direct path does, writes it down for the agent
/// (``AgentStore/handOver(environment:busID:)``, on disk before `send` returns) and starts the agent without waiting
/// for it. The agent takes the toast over as it starts — its server id, its lane, the time it has left — and closes
/// it on time. A script's first toast costs what a plain toast costs, not an agent's start.
///
/// Not where the agent could not close what `send` showed: GNOME Shell takes `CloseNotification` only from the
/// connection that sent the notification (and GNOME 46 closes it when that connection leaves), so there the toast
/// goes through the agent as before. Not when a hand-over is still pending or a killed agent left saved toasts: the
/// toast then queues behind them in the agent, as the lanes' rule says.
extension SendCommand {
    /// `TOASTKIT_FAILPOINT_HANDOVER=no-start`: the hand-over is written but no agent is started (the tests that prove
    /// the next agent takes it over).
    private static let failPoint = "TOASTKIT_FAILPOINT_HANDOVER"

    /// Whether this toast may be handed over: it needs the agent for its time and nothing else (no command, no
    /// schedule, no snooze, nobody waiting), and it has one. Not for the notify-send and dunstify command lines: they
    /// give the server exactly what those tools give it, and on dunst a taken-over toast is sent once more.
    var mayHandOver: Bool {
        guard options.dialect == .toastkit, options.onAction.isEmpty, options.due == nil, options.snooze == nil,
            !options.waits,
            let duration = ToastOptions.duration(for: options)
        else { return false }
        return duration != .indefinite
    }

    /// Shows `request`'s toast on `connection` (a connection on which `Present` found no agent) and hands it to an
    /// agent it starts.
    ///
    /// - Returns: what it did (``HandOverResult``): the command's end, nothing (the caller goes through the agent),
    ///   or a toast shown but not handed over (the caller hands it to the agent through `Present`, as a replacement
    ///   of that notification).
    func handOver(_ request: AgentRequest, on connection: BlockingDBusConnection) throws(CommandFailure)
        -> HandOverResult
    {
        let id = request.options.id ?? ""
        let busCalls: [DBusMethodCall] = [.bus("GetId"), .bus("ListActivatableNames")]
        let sender: BlockingNotificationSender
        let replies: [Result<DBusMessage, DBusError>]
        do {
            (sender, replies) = try BlockingNotificationSender.taking(
                connection, configuration: configuration, alongside: busCalls)
        } catch {
            throw BusAccess.failure(error)
        }
        // Only where the agent can close what this process showed.
        guard !sender.capabilities.quirks.contains(where: { $0.key == "closes-from-sender-only" }),
            let busID = try? replies[0].get().arguments("s")[0].stringValue
        else { return .notHere }
        let activatable =
            (try? replies[1].get().arguments("as")[0].stringsValue)??.contains(AgentInterface.busName.rawValue)
            ?? false
        let handOverFile: AgentStore
        do {
            // A killed agent's saved toasts come first: this one queues behind them, in the agent.
            guard !(try AgentStore.open(environment: environment.variables, busID: busID)).exists else {
                return .notHere
            }
            handOverFile = try AgentStore.handOver(environment: environment.variables, busID: busID)
            guard !handOverFile.exists else { return .notHere }
        } catch {
            return .notHere
        }

        let toast: ToastMessage
        do throws(ToastOptionError) {
            toast = try request.message()
        } catch {
            throw .data(error.message)
        }
        // Held back by Do Not Disturb: the agent holds it, or drops it, and says so.
        // Read when it matters: a toast it would hold, or a sound it would silence.
        let quiet =
            (toast.doNotDisturb != .show || (toast.sound != nil && configuration.followsDoNotDisturb))
            && sender.doNotDisturb().isOn
        if toast.doNotDisturb != .show, quiet { return .notHere }
        let presentation = try Self.presentation(
            for: toast, style: CommandLineStyle(options: request.options), labels: options.labels)
        // On Plasma a progress is drawn in a view of its job service, which only a process that stays can keep: the
        // agent shows this toast (shown here, it would be a notification with its bar in text, closed again at once
        // for the view).
        if sender.capabilities.information?.name == "Plasma", JobViews.shows(presentation) { return .notHere }
        let shown: BlockingNotificationSender.Shown
        do {
            shown = try sender.show(presentation, replacing: options.replaceID ?? 0, playsSound: !quiet)
        } catch {
            throw BusAccess.failure(error)
        }
        Self.tell(shown, presentation: presentation, configuration: configuration, id: id, json: options.json)
        let seconds = (try? toast.duration.resolved(default: .standardDefault))?.seconds
        let saved = AgentStore.Saved(
            request: request, id: id, serverID: shown.serverID, server: sender.server, remaining: seconds,
            running: true)
        do {
            guard try handOverFile.createHandOver(saved) else { return .shownNotHandedOver(shown.serverID) }
        } catch {
            return .shownNotHandedOver(shown.serverID)
        }

        // On disk: whichever agent owns the name from now on takes it over — one that runs (it gets the call), or
        // one that starts (it reads the file after taking the name).
        var take = AgentInterface.call("TakeHandOver")
        take.autoStart = activatable
        try? connection.send(take)
        if !activatable, environment.variable(Self.failPoint) != "no-start" {
            do throws(AgentClient.CallError) {
                _ = try AgentClient.startAgent(environment: environment.variables)
            } catch {
                if case .unreachable(let reason?) = error {
                    Output.error("warning: \(reason); the toast ends when the server says, or when an agent starts")
                }
            }
        }
        announce(id: id, serverID: shown.serverID)
        return .done(.success)
    }

    /// What ``handOver(_:on:)`` did.
    enum HandOverResult {
        /// Shown and handed over: the command's exit code.
        case done(ExitCode)
        /// Nothing shown: not here.
        case notHere
        /// Shown with this server id, but the hand-over could not be written: the agent must be told another way.
        case shownNotHandedOver(UInt32)
    }
}
