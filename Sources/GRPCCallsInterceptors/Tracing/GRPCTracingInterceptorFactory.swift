public import GRPCCalls
public import Tracing

/// Traces each call with swift-distributed-tracing: one client span per call, and the caller's
/// trace carried to the server in the request metadata.
///
/// The span is named `package.Service/Method` and carries OpenTelemetry's RPC attributes:
/// `rpc.system` (`grpc`), `rpc.service`, `rpc.method`, `server.address`, `server.port` and, at
/// the close, `rpc.grpc.status_code`. A call that does not end OK gets the error status and
/// the recorded `GRPCError`.
///
/// The span's parent is the `ServiceContext` current where the call object is created (a
/// `GRPCCall2` initializer, or the generated client's method), so a call made inside
/// `withSpan` joins that trace. The tracer's instrument injects the span's context into the
/// request metadata; with an OpenTelemetry tracer that is the W3C `traceparent` header.
///
/// ```swift
/// InstrumentationSystem.bootstrap(myOpenTelemetryTracer)
/// GRPCCall2.registerGlobalInterceptor(GRPCTracingInterceptorFactory())
///
/// try await withSpan("checkout") { _ in
///   _ = try await client.unaryCall(request)  // a child span "grpc.testing.TestService/UnaryCall"
/// }
/// ```
public struct GRPCTracingInterceptorFactory: GRPCInterceptorFactory {
  /// What each span records.
  public struct Config: Sendable {
    /// Whether each message sent and received adds a span event (`rpc.message` with
    /// `rpc.message.type` `SENT` or `RECEIVED` and `rpc.message.id`).
    public var recordsMessageEvents: Bool
    /// Whether the interceptor runs inline (no hop to a queue of its own).
    public var executesInline: Bool

    /// No message events; inline.
    public static var defaults: Config {
      Config(recordsMessageEvents: false, executesInline: true)
    }
  }

  public let config: Config
  let tracer: any Tracer

  /// Creates the factory.
  ///
  /// - Parameters:
  ///   - config: What each span records.
  ///   - tracer: The tracer; by default the one `InstrumentationSystem.bootstrap` installed.
  public init(config: Config = .defaults, tracer: any Tracer = InstrumentationSystem.tracer) {
    self.config = config
    self.tracer = tracer
  }

  public func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor? {
    // Called where the call is created: the caller's context is the span's parent.
    GRPCTracingInterceptor(
      manager: manager,
      config: self.config,
      tracer: self.tracer,
      parent: ServiceContext.current ?? .topLevel
    )
  }
}
