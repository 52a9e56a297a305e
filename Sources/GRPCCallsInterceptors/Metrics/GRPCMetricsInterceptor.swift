internal import CoreMetrics
public import GRPCCalls
public import GRPCCore

/// One call's metrics; made by ``GRPCMetricsInterceptorFactory``.
public final class GRPCMetricsInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: the mutable state below is touched only by this interceptor's events, which
  // its manager runs one at a time.
  private let config: GRPCMetricsInterceptorFactory.Config
  private let methods: MethodMetricsCache
  /// The call's method's handles, from the start on.
  private var metrics: MethodMetrics?
  private var started: ContinuousClock.Instant?
  private var marshaller: (any GRPCMarshaller)?
  private var sent = MessageTally()
  private var received = MessageTally()

  init(
    manager: GRPCInterceptorManager,
    config: GRPCMetricsInterceptorFactory.Config,
    methods: MethodMetricsCache
  ) {
    self.config = config
    self.methods = methods
    super.init(manager: manager, executesInline: config.executesInline)
  }

  public override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    let metrics = self.methods.metrics(path: requestOptions.path)
    self.metrics = metrics
    self.marshaller = self.config.recordsMessageSizes ? callOptions.marshaller : nil
    self.started = .now
    metrics.started.increment()
    metrics.inFlight.increment()
    super.start(requestOptions: requestOptions, callOptions: callOptions)
  }

  public override func writeData(_ data: any Sendable) {
    self.record(data, in: &self.sent, into: self.metrics?.requestSize)
    super.writeData(data)
  }

  public override func didReceiveData(_ data: any Sendable) {
    self.record(data, in: &self.received, into: self.metrics?.responseSize)
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
    guard let started = self.started, let metrics = self.metrics else { return }
    self.started = nil
    let close = metrics.close(code: error?.code.rawValue ?? 0)
    close.duration.recordInterval(since: started)
    close.finished.increment()
    metrics.requestsPerRPC.record(self.sent.messages)
    metrics.responsesPerRPC.record(self.received.messages)
    metrics.inFlight.decrement()
  }

  /// Counts a message and records its size; nothing before the start (the manager drops such
  /// a write anyway).
  private func record(
    _ message: any Sendable,
    in tally: inout MessageTally,
    into recorder: Recorder?
  ) {
    guard let recorder, let size = tally.count(message, marshaller: self.marshaller) else { return }
    recorder.record(size)
  }
}

extension Timer {
  fileprivate func recordInterval(since start: ContinuousClock.Instant) {
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    self.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
  }
}
