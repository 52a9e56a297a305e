internal import Histogram

/// What one client accumulates over the slices of a scenario.
struct Tally: Sendable {
  /// Latencies in microseconds (calls or round trips).
  var latencies = Histogram<UInt64>(
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: .three
  )
  var calls = 0
  /// Calls (or streams) that failed; left out of every other figure.
  var failures = 0
  var messages = 0
  var bytes = 0
  var seconds = 0.0
  var cpuSeconds = 0.0
  var contextSwitches = 0

  mutating func record(microseconds: UInt64) {
    _ = self.latencies.record(Swift.max(1, microseconds))
  }

  /// Adds the process's CPU time and context switches since `start`.
  mutating func addUsage(since start: ResourceUsage) {
    let end = ResourceUsage.now()
    self.cpuSeconds += end.cpuSeconds - start.cpuSeconds
    self.contextSwitches += end.contextSwitches - start.contextSwitches
  }

  mutating func add(_ other: Tally) {
    self.latencies.add(other.latencies)
    self.calls += other.calls
    self.failures += other.failures
    self.messages += other.messages
    self.bytes += other.bytes
    self.seconds += other.seconds
    self.cpuSeconds += other.cpuSeconds
    self.contextSwitches += other.contextSwitches
  }

  var p50: Double { self.percentile(50) }
  var p90: Double { self.percentile(90) }
  var p99: Double { self.percentile(99) }
  var max: Double { Double(self.latencies.max) }

  func percentile(_ percentile: Double) -> Double {
    Double(self.latencies.valueAtPercentile(percentile))
  }

  var callsPerSecond: Double { self.seconds > 0 ? Double(self.calls) / self.seconds : 0 }
  var messagesPerSecond: Double { self.seconds > 0 ? Double(self.messages) / self.seconds : 0 }
  var megabytesPerSecond: Double { self.seconds > 0 ? Double(self.bytes) / 1e6 / self.seconds : 0 }
  /// CPU seconds per 1,000 calls (or round trips, or messages for streams).
  var cpuPerThousand: Double {
    self.perUnit(self.cpuSeconds) * 1000
  }

  /// The process's context switches per call (or round trip, or message for streams).
  var switchesPerUnit: Double {
    self.perUnit(Double(self.contextSwitches))
  }

  private func perUnit(_ total: Double) -> Double {
    let units = self.calls > 0 ? self.calls : self.messages
    return units > 0 ? total / Double(units) : 0
  }
}

/// Microseconds since `start`.
func microseconds(since start: ContinuousClock.Instant) -> UInt64 {
  let elapsed = ContinuousClock.now - start
  return UInt64(elapsed.components.seconds) * 1_000_000
    + UInt64(elapsed.components.attoseconds / 1_000_000_000_000)
}
