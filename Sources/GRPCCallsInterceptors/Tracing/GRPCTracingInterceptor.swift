public import GRPCCalls
public import GRPCCore
internal import Tracing

/// One call's span; made by ``GRPCTracingInterceptorFactory``.
public final class GRPCTracingInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: the mutable state below is touched only by this interceptor's events, which
  // its manager runs one at a time; the tracer and the span are Sendable.
  private let config: GRPCTracingInterceptorFactory.Config
  private let tracer: any Tracer
  private let parent: ServiceContext
  private var span: (any Span)?
  private var sent = 0
  private var received = 0

  init(
    manager: GRPCInterceptorManager,
    config: GRPCTracingInterceptorFactory.Config,
    tracer: any Tracer,
    parent: ServiceContext
  ) {
    self.config = config
    self.tracer = tracer
    self.parent = parent
    super.init(manager: manager, executesInline: config.executesInline)
  }

  public override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    let name = RPCName(path: requestOptions.path)
    let span = self.tracer.startSpan(name.fullName, context: self.parent, ofKind: .client)
    span.attributes["rpc.system"] = "grpc"
    span.attributes["rpc.service"] = name.service
    span.attributes["rpc.method"] = name.method
    let server = ServerAddress(host: requestOptions.host)
    span.attributes["server.address"] = server.address
    if let port = server.port {
      span.attributes["server.port"] = port
    }
    self.span = span

    var options = callOptions
    self.tracer.inject(span.context, into: &options.initialMetadata, using: MetadataInjector())
    super.start(requestOptions: requestOptions, callOptions: options)
  }

  public override func writeData(_ data: any Sendable) {
    self.sent += 1
    self.addMessageEvent(type: "SENT", id: self.sent)
    super.writeData(data)
  }

  public override func didReceiveData(_ data: any Sendable) {
    self.received += 1
    self.addMessageEvent(type: "RECEIVED", id: self.received)
    super.didReceiveData(data)
  }

  public override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.endSpan(error: error)
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }

  public override func cancel() {
    // The base class closes the call upstream without a `didClose` here: end the span too.
    self.endSpan(error: GRPCError.cancelledInChain)
    super.cancel()
  }

  private func endSpan(error: GRPCError?) {
    // A call closed before it started (an interceptor above answered it) has no span.
    guard let span = self.span else { return }
    self.span = nil
    span.attributes["rpc.grpc.status_code"] = Int(error?.code.rawValue ?? 0)
    if let error {
      span.recordError(error)
      span.setStatus(SpanStatus(code: .error, message: "\(error.code): \(error.message)"))
    }
    span.end()
  }

  private func addMessageEvent(type: String, id: Int) {
    guard self.config.recordsMessageEvents, let span = self.span else { return }
    span.addEvent(
      SpanEvent(
        name: "rpc.message",
        attributes: ["rpc.message.type": "\(type)", "rpc.message.id": .int64(Int64(id))]
      )
    )
  }
}

/// Writes a tracer's headers into request metadata, replacing any value the caller set.
struct MetadataInjector: Injector {
  func inject(_ value: String, forKey key: String, into carrier: inout Metadata) {
    carrier.replaceOrAddString(value, forKey: key)
  }
}

/// `host[:port]` as OpenTelemetry's `server.address` and `server.port`; `[v6]:port` too.
struct ServerAddress: Sendable, Equatable {
  var address: String
  var port: Int?

  init(host: String) {
    if let colon = host.lastIndex(of: ":"), let port = Int(host[host.index(after: colon)...]),
      host.hasPrefix("[") ? host[..<colon].hasSuffix("]") : !host[..<colon].contains(":")
    {
      self.address = String(host[..<colon]).trimmingBrackets
      self.port = port
    } else {
      self.address = host.trimmingBrackets
      self.port = nil
    }
  }
}

extension String {
  fileprivate var trimmingBrackets: String {
    self.hasPrefix("[") && self.hasSuffix("]") ? String(self.dropFirst().dropLast()) : self
  }
}
