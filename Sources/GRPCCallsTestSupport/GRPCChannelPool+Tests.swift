public import GRPCCalls

extension GRPCChannelPool.Config {
  /// A pool whose channels stay open until the test disconnects or shuts it down.
  ///
  /// The default idle delay (30 s) closes a channel between two calls of a test that a busy
  /// machine stalls for that long, and the next call opens a connection the test did not
  /// expect. Tests that count connections, or follow one connection's state, take this one.
  public static var forTests: Self { Self(idleTimeout: .seconds(3600)) }
}
