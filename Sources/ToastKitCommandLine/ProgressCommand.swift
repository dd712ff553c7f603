// `toastkit progress`: one toast that follows a task, read from standard input a line at a time — a percentage and,
// if it changes, the message ("40", "40 Copying photos", "indeterminate Searching") — shown through the usual `send`
// path, the newest line at most every ``ProgressCommand/interval``; when the input ends, the toast becomes a normal
// toast with the last message.
import FoundationEssentials
import Glibc
import ToastKit
import ToastKitAgent

/// Reads the lines, coalesces them and shows each step; the last one always.
struct ProgressCommand {
    let options: SendOptions
    let environment: CommandEnvironment

    /// The shortest time between two shown steps: lines that come faster merge into the newest (a `cp` piped
    /// through `pv` prints many a second; a server draws a few dozen).
    static let interval = Duration.milliseconds(50)

    /// One line of the input.
    struct Step: Equatable {
        var progress: ToastProgress
        /// The new message, when the line gives one.
        var message: String?
    }

    /// What a line says: a step, nothing (a blank line), or why it is not one.
    static func step(of line: String) -> Result<Step?, LineError> {
        let text = trimmed(line)
        guard !text.isEmpty else { return .success(nil) }
        let word = String(text.prefix { !$0.isWhitespace })
        guard let progress = CommandLineParser.progress(word) else { return .failure(LineError(word: word)) }
        let rest = trimmed(String(text.dropFirst(word.count)))
        return .success(Step(progress: progress, message: rest.isEmpty ? nil : rest))
    }

    /// A line whose first word is not a percentage.
    struct LineError: Error, Equatable {
        let word: String
    }

    /// Shows the toast at each step, then as a normal toast; returns the exit code of the last `send` (the final
    /// toast's).
    func run() -> Int32 {
        var base: SendOptions
        do throws(CommandFailure) {
            base = try options.sent()
        } catch {
            Output.error(error.message)
            return error.code.rawValue
        }
        // One id for every step, so each replaces the one before (also when the agent shows it).
        if base.id == nil { base.id = "toastkit-progress-\(UUID().uuidString.lowercased())" }
        // The terminal cannot replace a notification: it gets the final one only. Through the portal, `--id` does not
        // reach from one process to the next: one presenter, here, shows every step and the final toast.
        let showsSteps = !TerminalDelivery.applies(to: base, environment: environment)
        let throughPortal = environment.backendChoice.backend == .portal
        if throughPortal, !base.onAction.isEmpty {
            // As send says: nobody would carry the actions out.
            let failure = CommandFailure.unavailable(
                "--on-action needs the toast agent, which is not used with the notification portal")
            Output.error(failure.message)
            return failure.code.rawValue
        }
        let portal = showsSteps && throughPortal ? PortalSession(options: base, environment: environment) : nil
        var reader = LineReader(descriptor: STDIN_FILENO)
        var message: String? = if case .text(let text) = base.message { text } else { nil }
        var pending: Step?
        var lastShown: ContinuousClock.Instant?
        var number = 0
        while true {
            // With a step to show, the wait ends when it is due; with none (or none shown before the end), it lasts.
            var wait: Duration?
            if pending != nil, showsSteps {
                wait = lastShown.map { max(.zero, $0 + Self.interval - .now) } ?? .zero
            }
            let lines: [String]?
            do {
                lines = try reader.next(waiting: wait)
            } catch {
                Output.error("progress: standard input: \(error)")
                break
            }
            guard let lines else { break }  // the end of the input
            for line in lines {
                number += 1
                switch Self.step(of: line) {
                case .success(let step?):
                    pending = step
                    if let text = step.message { message = text }
                case .success(nil):
                    break
                case .failure(let error):
                    Output.error(
                        "warning: progress: line \(number): \"\(error.word)\" is not a percentage from 0 to 100 "
                            + "or indeterminate; skipped")
                }
            }
            if let step = pending, showsSteps, lastShown.map({ .now >= $0 + Self.interval }) ?? true {
                pending = nil
                lastShown = .now
                var shown = base
                shown.progress = step.progress
                shown.message = message.map { .text($0) }
                shown.printID = false
                shown.json = false
                // A step means nothing later: while Do Not Disturb is on it is dropped, quietly (the final toast is
                // held, and says so), unless --dnd asks otherwise.
                if shown.doNotDisturb == nil { shown.doNotDisturb = .drop }
                shown.quietAboutDoNotDisturb = true
                // The sound is the end's: a step plays none (silent stays silent).
                if shown.sound != .silent { shown.sound = nil }
                if let portal {
                    // Shown until the next step replaces it, however long that takes.
                    shown.duration = .duration(.indefinite)
                    portal.show(shown)
                } else {
                    // A step that cannot be shown is not the end: the next one, or the final toast, says so.
                    _ = show(shown, step: true)
                }
            }
        }
        var final = base
        final.progress = nil
        final.message = message.map { .text($0) }
        if let portal { return portal.finish(final).rawValue }
        return show(final, step: false).rawValue
    }

    /// Shows `options` as `send` would and returns its code; a failure is printed (as a warning for a step).
    private func show(_ options: SendOptions, step: Bool) -> ExitCode {
        do throws(CommandFailure) {
            return try SendCommand.runHere(options, environment: environment)
        } catch {
            Output.error(step ? "warning: progress: a step was not shown: \(error.message)" : error.message)
            return error.code
        }
    }
}

/// `toastkit progress` through the notification portal: one center and presenter for the whole run, so each step
/// replaces the one before (a fresh portal id, the old one removed) and the final toast replaces the last step.
private final class PortalSession: Sendable {
    let center: ToastCenter
    let portal: PortalNotificationPresenter
    let environment: CommandEnvironment

    init(options: SendOptions, environment: CommandEnvironment) {
        self.environment = environment
        var configuration = SendCommand(options: options, environment: environment).configuration
        configuration.backend = environment.backend
        portal = PortalNotificationPresenter(configuration: configuration)
        center = ToastCenter(
            defaultDuration: .standardDefault, maxVisible: 1, presenter: ObservingPresenter(portal), laterStore: nil,
            labels: options.labels)
        center.toastStyle(CommandLineStyle(options: options))
        center.onEvent = { event in
            if case .degraded(_, let reason) = event { Output.error("warning: \(reason)") }
        }
        if options.duration != nil {
            Output.error(
                "warning: the notification portal has no timeout: the final toast stays as long as the notification "
                    + "server keeps it, not the time given with -d/-t")
        }
    }

    /// Presents a step (a failure to show it is reported with the final toast).
    func show(_ options: SendOptions) {
        do throws(CommandFailure) {
            center.present(try SendCommand(options: options, environment: environment).makeMessage())
        } catch {
            Output.error("warning: progress: a step was not shown: \(error.message)")
        }
    }

    /// Presents the final toast and returns once the portal has it and every earlier step is removed.
    func finish(_ options: SendOptions) -> ExitCode {
        let command = SendCommand(options: options, environment: environment)
        do throws(CommandFailure) {
            let message = try command.makeMessage()
            center.present(message)
            let (center, portal) = (self.center, self.portal)
            return try waitForTasks { () async throws(CommandFailure) in
                try await command.announceWhenAccepted(message.id, portal: portal, center: center)
                return .success
            }
        } catch {
            Output.error(error.message)
            return error.code
        }
    }
}

/// Lines of a file descriptor as they come, each once whole (a last line without a newline comes at the end).
struct LineReader {
    let descriptor: Int32
    private var buffer: [UInt8] = []
    /// What one `read` fills, kept from one call to the next.
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private var ended = false

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// The whole lines that came within `waiting` (nil: as long as it takes for one), maybe none; nil at the end of
    /// the input, once every line was returned.
    mutating func next(waiting: Duration?) throws(ReadError) -> [String]? {
        if ended { return nil }
        var lines: [String] = []
        var timeout: Int32 = waiting.map { Int32(clamping: Int64(($0 / .milliseconds(1)).rounded(.up))) } ?? -1
        while lines.isEmpty {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw ReadError(errno: errno)
            }
            if ready == 0 { return lines }  // the time is up
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw ReadError(errno: errno)
            }
            if count == 0 {
                ended = true
                if !buffer.isEmpty { lines.append(String(decoding: buffer, as: UTF8.self)) }
                buffer = []
                return lines.isEmpty ? nil : lines
            }
            buffer += chunk[..<count]
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
                buffer.removeSubrange(...newline)
            }
            // What is already there is read at once; only the first wait is as long as asked.
            timeout = 0
        }
        return lines
    }

    /// Standard input could not be read.
    struct ReadError: Error, CustomStringConvertible {
        let errno: Int32
        var description: String { String(cString: strerror(errno)) }
    }
}
