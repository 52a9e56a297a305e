package import GRPCCalls

extension GRPCCallOptions {
  /// These options with a reconnection backoff of 0.1 s growing to about 1 s.
  ///
  /// With the default backoff (1 s, growing to 2 minutes), a test stalled by a busy machine
  /// while its server was down can see the next connection attempt come after its call's
  /// deadline; a test whose call waits for a server to come back takes these.
  package func reconnectingSoon() -> Self {
    var options = self
    options.connectInitialBackoff = 0.1
    options.connectMaxBackoff = 1
    return options
  }
}
