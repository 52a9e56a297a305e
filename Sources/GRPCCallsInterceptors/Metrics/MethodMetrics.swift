internal import CoreMetrics
internal import GRPCCalls

/// The metric handles of one method, made once and used by each of its calls.
///
/// swift-metrics handles are meant to live long: making one asks the backend for it (Prometheus
/// sanitizes the names, locks its registry and looks the label set up), which cost more than
/// the recording itself when every call made its nine. The handles that carry a status code are
/// made on the first close with that code, so a backend shows only the codes that happened.
final class MethodMetrics: Sendable {
  /// `rpc.system`, `rpc.service`, `rpc.method` and the factory's own dimensions.
  let dimensions: [(String, String)]
  let started: Counter
  let inFlight: Meter
  let requestSize: Recorder
  let responseSize: Recorder
  let requestsPerRPC: Recorder
  let responsesPerRPC: Recorder
  private let factory: any MetricsFactory
  private let closes = LockedValue<[Int: Close]>([:])

  /// The handles of the calls that closed with one status code.
  struct Close: Sendable {
    let duration: Timer
    let finished: Counter
  }

  init(path: String, extraDimensions: [(String, String)], factory: any MetricsFactory) {
    let name = RPCName(path: path)
    let dimensions =
      [("rpc.system", "grpc"), ("rpc.service", name.service), ("rpc.method", name.method)] + extraDimensions
    self.dimensions = dimensions
    self.factory = factory
    self.started = Counter(label: "rpc.client.started", dimensions: dimensions, factory: factory)
    self.inFlight = Meter(label: "rpc.client.in_flight", dimensions: dimensions, factory: factory)
    self.requestSize = Recorder(label: "rpc.client.request.size", dimensions: dimensions, factory: factory)
    self.responseSize = Recorder(label: "rpc.client.response.size", dimensions: dimensions, factory: factory)
    self.requestsPerRPC = Recorder(label: "rpc.client.requests_per_rpc", dimensions: dimensions, factory: factory)
    self.responsesPerRPC = Recorder(label: "rpc.client.responses_per_rpc", dimensions: dimensions, factory: factory)
  }

  /// The handles for a close with `code` (0 for OK).
  func close(code: Int) -> Close {
    if let close = self.closes.withLock({ $0[code] }) {
      return close
    }
    // Made outside the lock: the factory is the backend's code. Two first closes with one code
    // may both make handles; the backend gives both the same metric, and one is kept.
    let withCode = self.dimensions + [("rpc.grpc.status_code", "\(code)")]
    let made = Close(
      duration: Timer(label: "rpc.client.duration", dimensions: withCode, factory: self.factory),
      finished: Counter(label: "rpc.client.finished", dimensions: withCode, factory: self.factory)
    )
    return self.closes.withLock { closes in
      if let kept = closes[code] { return kept }
      closes[code] = made
      return made
    }
  }
}

/// One factory's ``MethodMetrics``, by path, shared by the calls it intercepts.
///
/// Up to `limit` methods are kept (a client calls a fixed set); a call to a method beyond them
/// makes its handles for itself, as every call once did, so a client that calls ever new paths
/// does not grow this table without end.
final class MethodMetricsCache: Sendable {
  private let methods = LockedValue<[String: MethodMetrics]>([:])
  private let limit: Int

  init(limit: Int = 1_000) {
    self.limit = limit
  }

  func metrics(path: String, extraDimensions: [(String, String)], factory: any MetricsFactory) -> MethodMetrics {
    if let metrics = self.methods.withLock({ $0[path] }) {
      return metrics
    }
    // Made outside the lock, as in `MethodMetrics.close(code:)`.
    let made = MethodMetrics(path: path, extraDimensions: extraDimensions, factory: factory)
    return self.methods.withLock { methods in
      if let kept = methods[path] { return kept }
      if methods.count < self.limit {
        methods[path] = made
      }
      return made
    }
  }

  /// How many methods' handles are kept; for tests.
  var count: Int {
    self.methods.withLock { $0.count }
  }
}
