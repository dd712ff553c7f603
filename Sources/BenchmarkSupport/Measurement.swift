import Glibc

/// A benchmark failure with a message.
public struct BenchmarkError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    /// Creates the error.
    public init(_ description: String) { self.description = description }
}

// MARK: Clocks

/// CLOCK_MONOTONIC in nanoseconds.
public func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// CLOCK_MONOTONIC in microseconds.
public func monotonicMicroseconds() -> Double {
    Double(monotonicNanoseconds()) / 1e3
}

/// This process's user+system CPU time, all threads, in microseconds.
public func processCPUMicroseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
    let micros = usage.ru_utime.tv_usec + usage.ru_stime.tv_usec
    return Double(seconds) * 1e6 + Double(micros)
}

/// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in microseconds: a loop's own cost, whatever else the
/// machine is doing.
public func threadCPUMicroseconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e6 + Double(spec.tv_nsec) / 1e3
}

/// Nearest-rank percentile of sorted values (the same rule as the C clients).
public func percentile(_ sorted: [Double], _ quantile: Double) -> Double {
    let rank = min(max(Int((quantile * Double(sorted.count)).rounded(.up)), 1), sorted.count)
    return sorted[rank - 1]
}

// MARK: Call loops

/// What a loop of calls measured.
public struct Figures: Sendable {
    /// Calls per second of wall time.
    public var callsPerSecond: Double
    /// Median latency of one call (sequential loops).
    public var medianMicroseconds: Double?
    /// 99th-percentile latency of one call (sequential loops).
    public var p99Microseconds: Double?
    /// This process's CPU time per call.
    public var cpuMicrosecondsPerCall: Double
}

/// Times `body`, which makes `calls` calls: wall time and this process's CPU time.
public func timed(calls: Int, _ body: () async throws -> Void) async rethrows -> Figures {
    let cpu = processCPUMicroseconds()
    let started = monotonicMicroseconds()
    try await body()
    let elapsed = monotonicMicroseconds() - started
    return Figures(
        callsPerSecond: Double(calls) / (elapsed / 1e6), medianMicroseconds: nil, p99Microseconds: nil,
        cpuMicrosecondsPerCall: (processCPUMicroseconds() - cpu) / Double(calls))
}

/// `calls` calls one after another, with each call's latency when asked (median and p99 in the figures).
public func sequentialLoop(
    calls: Int,
    measureLatency: Bool,
    _ call: (Int) async throws -> Void
) async rethrows -> Figures {
    var latencies = [Double]()
    if measureLatency { latencies.reserveCapacity(calls) }
    var figures = try await timed(calls: calls) {
        for index in 0..<calls {
            let start = monotonicMicroseconds()
            try await call(index)
            if measureLatency { latencies.append(monotonicMicroseconds() - start) }
        }
    }
    if measureLatency {
        latencies.sort()
        figures.medianMicroseconds = percentile(latencies, 0.5)
        figures.p99Microseconds = percentile(latencies, 0.99)
    }
    return figures
}

/// `calls` calls with up to `window` in flight: a task group refilled as calls finish.
public func pipelinedLoop(
    calls: Int,
    window: Int,
    _ call: @escaping @Sendable (Int) async throws -> Void
) async throws -> Figures {
    try await timed(calls: calls) {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            while next < min(window, calls) {
                let index = next
                group.addTask { try await call(index) }
                next += 1
            }
            while try await group.next() != nil {
                guard next < calls else { continue }
                let index = next
                group.addTask { try await call(index) }
                next += 1
            }
        }
    }
}
