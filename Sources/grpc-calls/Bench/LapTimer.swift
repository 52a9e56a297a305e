internal import GRPCCalls

/// Records the time between successive laps, in microseconds.
final class LapTimer: Sendable {
  private let state = LockedValue<(last: ContinuousClock.Instant, laps: [UInt64])>((.now, []))

  func lap() {
    let now = ContinuousClock.now
    self.state.withLock { state in
      let elapsed = now - state.last
      state.laps.append(
        UInt64(elapsed.components.seconds) * 1_000_000
          + UInt64(elapsed.components.attoseconds / 1_000_000_000_000)
      )
      state.last = now
    }
  }

  var laps: [UInt64] { self.state.withLock { $0.laps } }
}
