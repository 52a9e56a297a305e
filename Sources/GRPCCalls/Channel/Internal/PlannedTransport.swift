internal import GRPCCore

/// A channel's transport as its `GRPCClient` sees it: the same, except that it has no service
/// config for any method.
///
/// Each call merges its method's service config into its own options once, in ``CallPlan``,
/// whichever path it takes to the core. `GRPCClient` would merge the config again into what
/// the plan left unset, and so bring back, say, a retry policy that `enableRetry` turned off.
struct PlannedTransport<Inner: ClientTransport>: ClientTransport {
  typealias Bytes = Inner.Bytes

  let inner: Inner

  var retryThrottle: RetryThrottle? { self.inner.retryThrottle }

  func connect() async throws {
    try await self.inner.connect()
  }

  func beginGracefulShutdown() {
    self.inner.beginGracefulShutdown()
  }

  func withStream<T: Sendable>(
    descriptor: MethodDescriptor,
    options: CallOptions,
    _ closure: (_ stream: RPCStream<Inbound, Outbound>, _ context: ClientContext) async throws -> T
  ) async throws -> T {
    try await self.inner.withStream(descriptor: descriptor, options: options, closure)
  }

  func config(forMethod descriptor: MethodDescriptor) -> MethodConfig? {
    nil
  }
}
