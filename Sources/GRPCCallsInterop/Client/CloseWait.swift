/// How long the recorders wait for an event of a call (a message, its close) before they report
/// that it did not come; also the deadline of a test's call when the deadline is only a safety
/// net, not what the test is about.
///
/// Generous on purpose: an event that never comes is a bug whatever the wait, but on a busy
/// 2-core machine (a build beside the tests, `scripts/test-under-load.sh`, where every loopback
/// test of the suite starts at once) an event that comes normally has been seen to take over
/// a minute to reach its handler.
public enum CloseWait {
  public static let seconds: Double = 120

  /// Polls `condition` until it holds, for up to `seconds`; whether it held.
  ///
  /// The one polling loop behind the recorders' waits and the tests' `eventually`: a test waits
  /// for the event itself, never for a set time after which it assumes the event came.
  public static func poll(
    upTo seconds: Double = Self.seconds,
    until condition: () -> Bool
  ) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
      guard ContinuousClock.now < deadline else { return false }
      do {
        try await Task.sleep(for: .milliseconds(5))
      } catch {
        // Cancelled: a cancelled sleep returns at once, so polling on would spin.
        return condition()
      }
    }
    return true
  }
}
