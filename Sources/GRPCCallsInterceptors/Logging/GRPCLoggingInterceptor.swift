internal import Foundation
public import GRPCCalls
public import GRPCCore
internal import Logging

/// One call's logging; made by ``GRPCLoggingInterceptorFactory``.
public final class GRPCLoggingInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: the mutable state below is touched only by this interceptor's events, which
  // its manager runs one at a time.
  private var logger: Logger
  private let config: GRPCLoggingInterceptorFactory.Config
  private var started: ContinuousClock.Instant?
  private var marshaller: (any GRPCMarshaller)?
  private var sent = MessageTally()
  private var received = MessageTally()

  init(
    manager: GRPCInterceptorManager,
    logger: Logger,
    config: GRPCLoggingInterceptorFactory.Config
  ) {
    self.logger = logger
    self.config = config
    super.init(manager: manager, executesInline: config.executesInline)
  }

  public override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    self.started = .now
    self.marshaller = self.config.measuresTypedMessages ? callOptions.marshaller : nil
    for (key, value) in callOptions.logContext {
      self.logger[metadataKey: key] = "\(value)"
    }
    self.logger[metadataKey: "grpc.method"] = "\(RPCName(path: requestOptions.path).fullName)"
    self.logger[metadataKey: "grpc.host"] = "\(requestOptions.host)"
    var metadata: Logger.Metadata = [
      "grpc.request_metadata": .dictionary(self.redacted(callOptions.initialMetadata))
    ]
    if callOptions.timeout > 0 {
      metadata["grpc.deadline_s"] = "\(callOptions.timeout)"
    }
    self.logger.log(level: self.config.startLevel, "RPC started", metadata: metadata)
    super.start(requestOptions: requestOptions, callOptions: callOptions)
  }

  public override func writeData(_ data: any Sendable) {
    let size = self.sent.count(data, marshaller: self.marshaller)
    self.logMessage(data, size: size, direction: "request")
    super.writeData(data)
  }

  public override func didReceiveData(_ data: any Sendable) {
    let size = self.received.count(data, marshaller: self.marshaller)
    self.logMessage(data, size: size, direction: "response")
    super.didReceiveData(data)
  }

  public override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.logClose(error: error)
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }

  public override func cancel() {
    // The base class closes the call upstream without a `didClose` here: log that close too.
    self.logClose(error: GRPCError.cancelledInChain)
    super.cancel()
  }

  /// The close record, once, for a call whose start was logged.
  private func logClose(error: GRPCError?) {
    guard let started = self.started else { return }
    self.started = nil
    var metadata: Logger.Metadata = [
      "grpc.code": "\(error?.code.rawValue ?? 0)",
      "grpc.messages_sent": "\(self.sent.messages)",
      "grpc.messages_received": "\(self.received.messages)",
      "grpc.bytes_sent": "\(self.sent.bytes)",
      "grpc.bytes_received": "\(self.received.bytes)",
      "grpc.duration_ms": "\(Self.milliseconds(ContinuousClock.now - started))",
    ]
    if let error {
      metadata["grpc.status"] = "\(error.code)"
      metadata["grpc.message"] = "\(error.message)"
      self.logger.log(level: self.config.failureLevel, "RPC failed", metadata: metadata)
    } else {
      metadata["grpc.status"] = "ok"
      self.logger.log(level: self.config.successLevel, "RPC finished", metadata: metadata)
    }
  }

  private func logMessage(_ message: any Sendable, size: Int?, direction: String) {
    guard self.config.logsMessages, self.logger.logLevel <= .trace else { return }
    var text = message is Data ? "<\(size ?? 0) bytes>" : String(describing: message)
    if text.count > self.config.messageTextLimit {
      text = String(text.prefix(self.config.messageTextLimit)) + "… (cut)"
    }
    var metadata: Logger.Metadata = ["grpc.message_text": "\(text)"]
    if let size {
      metadata["grpc.message_bytes"] = "\(size)"
    }
    self.logger.trace("RPC \(direction) message", metadata: metadata)
  }

  /// The request metadata as log metadata: redacted keys and binary values hidden.
  private func redacted(_ metadata: Metadata) -> Logger.Metadata {
    var result: Logger.Metadata = [:]
    for (key, value) in metadata {
      let name = key.lowercased()
      if name == "authorization" || self.config.redactedKeys.contains(name) {
        result[name] = "<redacted>"
        continue
      }
      switch value {
      case .string(let text):
        result[name] = "\(text)"
      case .binary(let bytes):
        result[name] = "<\(bytes.count) bytes>"
      }
    }
    return result
  }

  private static func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
  }
}
