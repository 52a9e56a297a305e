internal import GRPCCore

/// A channel's transport as its `GRPCClient` sees it: the same, except that it has no service
/// config for any method, and that it runs the calling task's handler when a stream fails
/// (``TransportStreamFailure``).
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
      TransportStreamFailure.handler?()
      throw error
    }
  }

  func config(forMethod descriptor: MethodDescriptor) -> MethodConfig? {
    nil
  }
}

/// What the call whose task opens a stream does when the transport's `withStream` throws (the
/// stream did not open, or failed): the task-local handler that the call bound.
///
/// grpc-swift-2's retry executor runs the request producer, and the RPC's deadline, in child
/// tasks beside the attempts. When `withStream` throws (a retry after the server began to shut
/// down, say), the executor returns that error without cancelling them, and then waits for
/// them: a producer waiting for the application's next request, or for room in the executor's
/// buffer, would keep the call open until the application finished, and the deadline's sleep
/// until the deadline. A call with a retry policy binds a handler that cancels its RPC's task,
/// which cancels them; the call then closes with the transport's error. Other calls bind none:
/// the hedging executor goes on with its other attempts and cancels its producer itself, and
/// the executor without a policy starts its producer only once the stream opened.
enum TransportStreamFailure {
  @TaskLocal static var handler: (@Sendable () -> Void)?
}
