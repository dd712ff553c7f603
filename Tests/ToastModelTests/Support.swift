import Foundation
import Synchronization
import ToastKitTesting
import ToastModel

/// Events with the manual time at which they were delivered, and a way to wait for them.
final class EventLog: Sendable {
    struct Entry: Sendable {
        var event: ToastEvent
        var at: Duration
    }

    private struct Waiter {
        var predicate: @Sendable ([ToastEvent]) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var entries: [Entry] = []
        var waiters: [Waiter] = []
    }

    private let state = Mutex(State())
    private let clock: ManualClock

    init(clock: ManualClock) {
        self.clock = clock
    }

    func append(_ event: ToastEvent) {
        let now = clock.now.offset
        let ready = state.withLock { state in
            state.entries.append(Entry(event: event, at: now))
            let events = state.entries.map(\.event)
            let ready = state.waiters.filter { $0.predicate(events) }.map(\.continuation)
            state.waiters.removeAll { $0.predicate(events) }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    var events: [ToastEvent] { state.withLock { $0.entries.map(\.event) } }
    var entries: [Entry] { state.withLock { $0.entries } }
    var terminal: [ToastEvent] { events.filter(\.isTerminal) }

    /// When `event` was delivered (manual time), if it was.
    func time(of event: ToastEvent) -> Duration? {
        entries.first { $0.event == event }?.at
    }

    func waitUntil(_ predicate: @escaping @Sendable ([ToastEvent]) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if predicate(state.entries.map(\.event)) { return true }
                state.waiters.append(Waiter(predicate: predicate, continuation: continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func waitFor(_ event: ToastEvent) async {
        await waitUntil { $0.contains(event) }
    }
}

/// A center on a manual clock with a recording presenter and an in-memory later store.
struct Harness {
    let clock = ManualClock()
    let presenter: RecordingPresenter
    let store: InMemoryLaterStore
    let center: ToastCenter
    let log: EventLog

    init(
        defaultDuration: ToastDuration = 4,
        maxVisible: Int = 1,
        overflow: ToastOverflowPolicy = .queue,
        attach: Bool = true,
        presenter: RecordingPresenter = RecordingPresenter(),
        store: InMemoryLaterStore = InMemoryLaterStore(),
        labels: ToastLabels = ToastLabels(language: .english)
    ) {
        self.presenter = presenter
        self.store = store
        center = ToastCenter(
            defaultDuration: defaultDuration, maxVisible: maxVisible, overflow: overflow,
            presenter: attach ? presenter : nil, clock: clock, laterStore: store, labels: labels)
        log = EventLog(clock: clock)
        let log = self.log
        center.onEvent = { log.append($0) }
    }

    /// Advances to `seconds` after the start, once the center's timer is armed.
    func advance(to seconds: Double) async {
        clock.advance(to: ManualClock.Instant(offset: .seconds(seconds)))
    }
}

/// An ordered list of strings written from handlers, observers and presenters.
final class Trace: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

func seconds(_ value: Double) -> Duration { .seconds(value) }

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("toastmodel-tests-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
