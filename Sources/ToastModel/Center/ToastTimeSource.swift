/// A clock reduced to what the center and the presenters' shell need: "now" as a `Duration` since the owner was
/// made, and sleeping until such an offset. Erasing the clock's type keeps ``ToastCenter`` non-generic.
package struct ToastTimeSource: Sendable {
    /// The time since the source was made.
    package let now: @Sendable () -> Duration
    /// Sleeps until that offset (throws when cancelled).
    package let sleep: @Sendable (_ until: Duration) async throws -> Void

    /// A task that sleeps until `deadline` and then runs `body`, unless it is cancelled first.
    package func wake(at deadline: Duration, _ body: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        let sleep = self.sleep
        return Task {
            guard (try? await sleep(deadline)) != nil else { return }
            body()
        }
    }

    /// A source on `clock`, starting now.
    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleep = { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) }
    }
}

extension Duration {
    /// The duration in seconds.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
