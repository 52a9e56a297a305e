/// How long the recorders wait for a call to close before they report that it did not.
///
/// Generous on purpose: a close that never comes is a bug whatever the wait, but on a busy
/// 2-core machine (a build beside the tests, `scripts/test-under-load.sh`) a call that closes
/// normally has been seen to take over 30 s to reach its handler.
public enum CloseWait {
  public static let seconds: Double = 120
}
