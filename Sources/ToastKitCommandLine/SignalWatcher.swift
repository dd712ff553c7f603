import Dispatch
import Glibc
import ToastKitAgent

/// Turns SIGINT and SIGTERM into values on an async stream, so a waiting command can close its toast first.
final class SignalWatcher {
    /// The signals, as they arrive.
    let signals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    /// Starts watching `numbers`.
    ///
    /// The signals are not set to `SIG_IGN` first: on Linux, Dispatch installs its own handler when the source is
    /// registered, a moment after `resume()`, and a signal that came in between was discarded (a Ctrl-C right after
    /// start was lost in about half the tries, and `send --wait` then waited out its limit). Until the handler is in
    /// place the signal's default action applies, so the command ends at once with 128 + the signal, as a Ctrl-C
    /// before anything waits always has.
    init(_ numbers: [Int32] = [SIGINT, SIGTERM]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        signals = stream
        var sources: [any DispatchSourceSignal] = []
        for number in numbers {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// The exit code for having been stopped by `signal`: 128 + its number.
    static func exitCode(for signal: Int32) -> Int32 { 128 + signal }

    /// The signal's name.
    static func name(of signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(signal)"
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
