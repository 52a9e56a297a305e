internal import Foundation
internal import GRPCCalls

/// `soak`: calls of every face, several at a time, for a long while (10 minutes by default);
/// the process's resident memory is read every few seconds and must stay flat.
///
/// The first tenth of the run (at most a minute) is warm-up: connections, caches and allocator
/// pools fill. From then on the figures compare each reading with the first: a process that
/// keeps something per call grows with the number of calls, one that gives back what it takes
/// stays within the allocator's noise. Not part of `all`; `.ci/run` runs a short one.
enum SoakScenario {
  struct Settings: Sendable {
    var duration: Duration = .seconds(600)
    /// Callers running at once, each making one call after another.
    var inFlight = 8
  }

  /// What a soak measured.
  struct Result {
    var calls: Int
    var failures: Int
    var firstFailure: String?
    /// Resident memory at the end of warm-up, in MiB.
    var startMiB: Double
    /// Growth from the end of warm-up to the end, and the largest growth seen, in MiB.
    var growthMiB: Double
    var maxGrowthMiB: Double
    /// The least-squares slope of the readings after warm-up, in MiB per minute.
    var slopeMiBPerMinute: Double
  }

  static func run(target: String, settings: Settings, into report: BenchReport) async throws {
    let result = try await self.measure(target: target, settings: settings)
    let seconds = BenchClock.seconds(settings.duration)
    report.add("soak", "grpc-calls", "mixed", "calls_per_s", Double(result.calls) / seconds)
    report.add("soak", "grpc-calls", "mixed", "failures", Double(result.failures))
    report.add("soak", "grpc-calls", "mixed", "rss_start_mb", result.startMiB)
    report.add("soak", "grpc-calls", "mixed", "rss_growth_mb", result.growthMiB)
    report.add("soak", "grpc-calls", "mixed", "rss_max_growth_mb", result.maxGrowthMiB)
    report.add("soak", "grpc-calls", "mixed", "rss_slope_mb_per_min", result.slopeMiBPerMinute)
    Console.line(
      String(
        format: "soak: %d calls in %.0f s (%d failed), %d in flight; RSS %.1f MiB after warm-up, "
          + "%+.2f MiB at the end (largest %+.2f), slope %+.3f MiB/min",
        result.calls,
        seconds,
        result.failures,
        settings.inFlight,
        result.startMiB,
        result.growthMiB,
        result.maxGrowthMiB,
        result.slopeMiBPerMinute
      )
    )
    if let failure = result.firstFailure {
      throw BenchFailure(
        description: "soak: \(result.failures) calls failed; the first: \(failure)"
      )
    }
  }

  static func measure(target: String, settings: Settings) async throws -> Result {
    let calls = try LeakCalls(target: target)
    defer { calls.close() }
    let tally = SoakTally()
    let start = ContinuousClock.now
    let end = start + settings.duration
    let warmUpEnd = start + min(settings.duration / 10, .seconds(60))

    let sampler = Task { () -> [(minutes: Double, mib: Double)] in
      var readings: [(minutes: Double, mib: Double)] = []
      let interval = min(settings.duration / 60, .seconds(5))
      try? await Task.sleep(until: warmUpEnd)
      while ContinuousClock.now < end, !Task.isCancelled {
        let minutes = BenchClock.seconds(ContinuousClock.now - warmUpEnd) / 60
        readings.append((minutes, Double(ResourceUsage.residentBytes()) / Double(1 << 20)))
        try? await Task.sleep(for: interval)
      }
      return readings
    }
    await withTaskGroup(of: Void.self) { group in
      for caller in 0 ..< settings.inFlight {
        group.addTask {
          // Each caller starts on a different face, so every face is in flight at once.
          var index = caller
          while ContinuousClock.now < end {
            let face = LeakScenario.Face.allCases[index % LeakScenario.Face.allCases.count]
            index += 1
            do {
              try await calls.call(face)
              tally.record(nil)
            } catch {
              tally.record("\(face.rawValue): \(error)")
            }
          }
        }
      }
    }
    // The last reading, once the last calls' teardown had a moment to run.
    try? await Task.sleep(for: .milliseconds(100))
    var readings = await sampler.value
    let endMinutes = BenchClock.seconds(ContinuousClock.now - warmUpEnd) / 60
    readings.append((endMinutes, Double(ResourceUsage.residentBytes()) / Double(1 << 20)))
    let first = readings[0].mib
    let (count, failures, firstFailure) = tally.result
    return Result(
      calls: count,
      failures: failures,
      firstFailure: firstFailure,
      startMiB: first,
      growthMiB: readings[readings.count - 1].mib - first,
      maxGrowthMiB: readings.map { $0.mib - first }.max() ?? 0,
      slopeMiBPerMinute: Self.slope(readings)
    )
  }

  /// The least-squares slope of `mib` over `minutes`.
  private static func slope(_ readings: [(minutes: Double, mib: Double)]) -> Double {
    guard readings.count >= 2 else { return 0 }
    let n = Double(readings.count)
    let meanX = readings.reduce(0) { $0 + $1.minutes } / n
    let meanY = readings.reduce(0) { $0 + $1.mib } / n
    let covariance = readings.reduce(0) { $0 + ($1.minutes - meanX) * ($1.mib - meanY) }
    let variance = readings.reduce(0) { $0 + ($1.minutes - meanX) * ($1.minutes - meanX) }
    return variance > 0 ? covariance / variance : 0
  }
}

/// Calls made and failed by the soak's callers.
private final class SoakTally: Sendable {
  private let state = LockedValue<(calls: Int, failures: Int, first: String?)>((0, 0, nil))

  func record(_ failure: String?) {
    self.state.withLock { state in
      state.calls += 1
      if let failure {
        state.failures += 1
        if state.first == nil { state.first = failure }
      }
    }
  }

  var result: (calls: Int, failures: Int, first: String?) {
    self.state.withLock { ($0.calls, $0.failures, $0.first) }
  }
}
