internal import GRPCCore

/// A channel's transport as its `GRPCClient` sees it: the same, except that it has no service
/// config for any method, and that a stream it cannot open ends the call's request side when
/// the call asks (``StreamOpeningFailure``).
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
    do {
      return try await self.inner.withStream(descriptor: descriptor, options: options, closure)
    } catch {
      StreamOpeningFailure.handler?()
      throw error
    }
  }

  func config(forMethod descriptor: MethodDescriptor) -> MethodConfig? {
    nil
  }
}

/// What a call on the `GRPCClient` path does when a stream of its RPC fails to open, or fails
/// later: the task-local handler of the task that runs the RPC.
///
/// grpc-swift-2's retry executor runs the request producer in a task of its own, beside the
/// attempts. When opening an attempt's stream throws (a retry after the server began to shut
/// down, say), the executor returns that error without cancelling the producer, and then waits
/// for it; a producer waiting for the application's next request would keep the call open
/// until the application finished. A call with a retry policy sets a handler that ends its
/// request side, so that its producer returns and the call closes with the error. The
/// handler runs only for a retry policy: the hedging executor goes on with its other attempts
/// and cancels its producer itself, and the executor without a policy starts its producer only
/// once the stream opened.
enum StreamOpeningFailure {
  @TaskLocal static var handler: (@Sendable () -> Void)?
}
