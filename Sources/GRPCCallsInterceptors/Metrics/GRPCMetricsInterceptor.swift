internal import CoreMetrics
public import GRPCCalls
public import GRPCCore

/// One call's metrics; made by ``GRPCMetricsInterceptorFactory``.
public final class GRPCMetricsInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: the mutable state below is touched only by this interceptor's events, which
  // its manager runs one at a time.
  private let config: GRPCMetricsInterceptorFactory.Config
  private let factory: any MetricsFactory
  private var dimensions: [(String, String)] = []
  private var started: ContinuousClock.Instant?
  private var marshaller: (any GRPCMarshaller)?
  private var sent = MessageTally()
  private var received = MessageTally()

  init(manager: GRPCInterceptorManager, config: GRPCMetricsInterceptorFactory.Config, factory: any MetricsFactory) {
    self.config = config
    self.factory = factory
    super.init(manager: manager, executesInline: config.executesInline)
  }

  public override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    let name = RPCName(path: requestOptions.path)
    self.dimensions =
      [("rpc.system", "grpc"), ("rpc.service", name.service), ("rpc.method", name.method)]
      + self.config.dimensions
    self.marshaller = self.config.recordsMessageSizes ? callOptions.marshaller : nil
    self.started = .now
    Counter(label: "rpc.client.started", dimensions: self.dimensions, factory: self.factory).increment()
    self.inFlight.increment()
    super.start(requestOptions: requestOptions, callOptions: callOptions)
  }

  public override func writeData(_ data: any Sendable) {
    self.record(data, in: &self.sent, label: "rpc.client.request.size")
    super.writeData(data)
  }

  public override func didReceiveData(_ data: any Sendable) {
    self.record(data, in: &self.received, label: "rpc.client.response.size")
    super.didReceiveData(data)
  }

  public override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.recordClose(error: error)
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }

  public override func cancel() {
    // The base class closes the call upstream without a `didClose` here: count that close too.
    self.recordClose(error: GRPCError.cancelledInChain)
    super.cancel()
  }

  private func recordClose(error: GRPCError?) {
    // Only a started call counts: one closed before it started (an interceptor above answered
    // it) never reached this one.
    guard let started = self.started else { return }
    self.started = nil
    let withCode = self.dimensions + [("rpc.grpc.status_code", "\(error?.code.rawValue ?? 0)")]
    Timer(label: "rpc.client.duration", dimensions: withCode, factory: self.factory)
      .recordInterval(since: started)
    Counter(label: "rpc.client.finished", dimensions: withCode, factory: self.factory).increment()
    Recorder(label: "rpc.client.requests_per_rpc", dimensions: self.dimensions, factory: self.factory)
      .record(self.sent.messages)
    Recorder(label: "rpc.client.responses_per_rpc", dimensions: self.dimensions, factory: self.factory)
      .record(self.received.messages)
    self.inFlight.decrement()
  }

  private var inFlight: Meter {
    Meter(label: "rpc.client.in_flight", dimensions: self.dimensions, factory: self.factory)
  }

  private func record(_ message: any Sendable, in tally: inout MessageTally, label: String) {
    guard let size = tally.count(message, marshaller: self.marshaller) else { return }
    Recorder(label: label, dimensions: self.dimensions, factory: self.factory).record(size)
  }
}

extension Timer {
  fileprivate func recordInterval(since start: ContinuousClock.Instant) {
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    self.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
  }
}
