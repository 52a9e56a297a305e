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
      [("rpc.system", "grpc"), ("rpc.service", name.service), ("rpc.method", name.method)]
      + extraDimensions
    self.dimensions = dimensions
    self.factory = factory
    self.started = Counter(label: "rpc.client.started", dimensions: dimensions, factory: factory)
    self.inFlight = Meter(label: "rpc.client.in_flight", dimensions: dimensions, factory: factory)
    self.requestSize = Recorder(
      label: "rpc.client.request.size",
      dimensions: dimensions,
      factory: factory
    )
    self.responseSize = Recorder(
      label: "rpc.client.response.size",
      dimensions: dimensions,
      factory: factory
    )
    self.requestsPerRPC = Recorder(
      label: "rpc.client.requests_per_rpc",
      dimensions: dimensions,
      factory: factory
    )
    self.responsesPerRPC = Recorder(
      label: "rpc.client.responses_per_rpc",
      dimensions: dimensions,
      factory: factory
    )
  }

  /// The handles for a close with `code` (0 for OK).
  func close(code: Int) -> Close {
    self.closes.value(for: code) {
      let withCode = self.dimensions + [("rpc.grpc.status_code", "\(code)")]
      return Close(
        duration: Timer(label: "rpc.client.duration", dimensions: withCode, factory: self.factory),
        finished: Counter(label: "rpc.client.finished", dimensions: withCode, factory: self.factory)
      )
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
  /// The factory's own dimensions, added to every metric.
  private let extraDimensions: [(String, String)]
  private let factory: any MetricsFactory
  private let limit: Int

  init(extraDimensions: [(String, String)], factory: any MetricsFactory, limit: Int = 1_000) {
    self.extraDimensions = extraDimensions
    self.factory = factory
    self.limit = limit
  }

  func metrics(path: String) -> MethodMetrics {
    self.methods.value(for: path, limit: self.limit) {
      MethodMetrics(path: path, extraDimensions: self.extraDimensions, factory: self.factory)
    }
  }

  /// How many methods' handles are kept; for tests.
  var count: Int {
    self.methods.withLock { $0.count }
  }
}

extension LockedValue {
  /// The value kept for `key`, or one `make` makes, kept if fewer than `limit` are.
  ///
  /// `make` runs outside the lock: it calls the metrics backend. Two threads that miss together
  /// may both make one; the backend gives both the same metric, and the first kept is returned.
  fileprivate func value<Key: Hashable, Element>(
    for key: Key,
    limit: Int = .max,
    make: () -> Element
  ) -> Element where Value == [Key: Element] {
    if let kept = self.withLock({ $0[key] }) {
      return kept
    }
    let made = make()
    return self.withLock { table in
      if let kept = table[key] { return kept }
      if table.count < limit {
        table[key] = made
      }
      return made
    }
  }
}
