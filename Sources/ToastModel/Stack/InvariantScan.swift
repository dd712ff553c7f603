// InvariantScan: when a debug build runs a state machine's full invariant scan — the one rule the stack and the
// presenter machines share, so the checks stay on everywhere and stay linear overall.

/// When a debug build scans a machine's whole state for its invariants: after every step while the state is short,
/// then after every (count / ``itemsPerStep``)th step, so the scans cost about ``itemsPerStep`` items per step
/// however long the state grows.
///
/// A larger share made debug builds quadratic in practice: at 256 items per step, 10,000 toasts presented from 16
/// tasks took 35 s to present and 53 s in all (the scans ran under the presenter's lock, which every task waits for);
/// at 16, 0.2 s and 8 s.
package enum InvariantScan {
    /// The items a scan costs per step, on average, once the state is long.
    package static let itemsPerStep = 16

    /// Whether the scan is due at step `step` (counted by the machine) over a state of `count` items.
    package static func isDue(step: Int, count: Int) -> Bool {
        step % max(1, count / itemsPerStep) == 0
    }
}
