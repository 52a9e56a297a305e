internal import CoreMetrics

/// A channel's figures, through swift-metrics (``GRPCChannelPool/Config/metricsFactory``), with
/// the target as the `target` dimension:
///
/// | label | kind | counts |
/// |---|---|---|
/// | `grpc_calls.connections.opened` | counter | connections established (the server's SETTINGS came) |
/// | `grpc_calls.connections.closed` | counter | established connections that closed |
/// | `grpc_calls.connections.failed` | counter | connection attempts that closed before they were established |
/// | `grpc_calls.calls.in_flight` | meter | calls holding the channel |
struct ChannelMetrics: Sendable {
  private let opened: Counter
  private let closed: Counter
  private let failed: Counter
  private let callsInFlight: Meter

  init(target: String, factory: any MetricsFactory) {
    let dimensions = [("target", target)]
    func connections(_ event: String) -> Counter {
      Counter(label: "grpc_calls.connections.\(event)", dimensions: dimensions, factory: factory)
    }
    self.opened = connections("opened")
    self.closed = connections("closed")
    self.failed = connections("failed")
    self.callsInFlight = Meter(
      label: "grpc_calls.calls.in_flight",
      dimensions: dimensions,
      factory: factory
    )
  }

  func connectionEstablished() {
    self.opened.increment()
  }

  /// A connection closed, `established` or not (a failed attempt).
  func connectionClosed(established: Bool) {
    (established ? self.closed : self.failed).increment()
  }

  func callStarted() {
    self.callsInFlight.increment()
  }

  func callEnded() {
    self.callsInFlight.decrement()
  }
}
