public import CoreMetrics
public import GRPCCalls

/// Records each call in swift-metrics, named as OpenTelemetry's RPC semantic conventions name
/// client metrics, so any metrics backend shows them.
///
/// Per call, with the dimensions `rpc.system` (`grpc`), `rpc.service` and `rpc.method`:
/// - `rpc.client.duration`: a timer, also with `rpc.grpc.status_code` (0 for OK);
/// - `rpc.client.requests_per_rpc` and `rpc.client.responses_per_rpc`: recorders of message
///   counts; `rpc.client.request.size` and `rpc.client.response.size`: recorders of each
///   message's bytes;
/// - `rpc.client.started` and `rpc.client.finished` (with `rpc.grpc.status_code`): counters;
/// - `rpc.client.in_flight`: a meter, up at the start and down at the close.
///
/// ```swift
/// GRPCCall2.registerGlobalInterceptor(GRPCMetricsInterceptorFactory())
/// ```
public struct GRPCMetricsInterceptorFactory: GRPCInterceptorFactory {
  /// What is recorded.
  public struct Config: Sendable {
    /// Dimensions added to every metric (a deployment, a region).
    public var dimensions: [(String, String)]
    /// Whether each message's size is recorded; a typed message is serialized once more for it.
    public var recordsMessageSizes: Bool
    /// Whether the interceptor runs inline (no hop to a queue of its own). Recording is quick,
    /// so it does unless the backend blocks.
    public var executesInline: Bool

    /// No extra dimensions; message sizes recorded; inline.
    public static var defaults: Config {
      Config(dimensions: [], recordsMessageSizes: true, executesInline: true)
    }
  }

  public let config: Config
  /// Each method's handles in the backend, shared by the calls of this factory and its copies.
  let methods: MethodMetricsCache

  /// Creates the factory.
  ///
  /// - Parameters:
  ///   - config: What is recorded.
  ///   - factory: The metrics backend; by default the one `MetricsSystem.bootstrap` installed.
  public init(config: Config = .defaults, factory: any MetricsFactory = MetricsSystem.factory) {
    self.config = config
    self.methods = MethodMetricsCache(extraDimensions: config.dimensions, factory: factory)
  }

  public func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor? {
    GRPCMetricsInterceptor(manager: manager, config: self.config, methods: self.methods)
  }
}
