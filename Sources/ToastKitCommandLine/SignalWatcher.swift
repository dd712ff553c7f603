import Dispatch
import Glibc
import ToastKitAgent

/// Turns SIGINT and SIGTERM into values on an async stream, so a waiting command can close its toast first.
final class SignalWatcher {
    /// The signals, as they arrive.
    let signals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    /// Starts watching `numbers` (their default action is turned off while watched).
    init(_ numbers: [Int32] = [SIGINT, SIGTERM]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        signals = stream
        var sources: [any DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)
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
