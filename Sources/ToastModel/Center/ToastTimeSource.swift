/// A clock reduced to what the center needs: "now" as a `Duration` since the center was made, and sleeping
/// until such an offset. Erasing the clock's type keeps ``ToastCenter`` non-generic.
struct ToastTimeSource: Sendable {
    let now: @Sendable () -> Duration
    let sleep: @Sendable (_ until: Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleep = { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) }
    }
}
