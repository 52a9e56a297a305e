public import GRPCCalls
public import Logging

/// Logs each call with swift-log: one record when it starts, one when it closes, and, at
/// `.trace`, one per message.
///
/// ```swift
/// var options = GRPCCallOptions()
/// options.interceptorFactories = [GRPCLoggingInterceptorFactory(logger: Logger(label: "rpc"))]
/// ```
///
/// The start record names the method, host, deadline and request metadata; `authorization`
/// and the keys in ``Config/redactedKeys`` show as `<redacted>`, and binary values as their
/// size. The close record gives the status code and message, the duration, and the messages and
/// bytes each way. The options' `logContext` joins every record's metadata.
public struct GRPCLoggingInterceptorFactory: GRPCInterceptorFactory {
  /// What is logged, and at which levels.
  public struct Config: Sendable {
    /// The level of the record at the start of a call.
    public var startLevel: Logger.Level
    /// The level of the close record of a call that succeeded.
    public var successLevel: Logger.Level
    /// The level of the close record of a call that failed.
    public var failureLevel: Logger.Level
    /// Request metadata keys whose values are never logged, besides `authorization`
    /// (lower-case).
    public var redactedKeys: Set<String>
    /// Whether each message is logged, at `.trace`, as text: `Data` as its size, a typed
    /// message (calls with a marshaller) as its description.
    public var logsMessages: Bool
    /// The longest message text logged, in characters; longer text is cut and marked.
    public var messageTextLimit: Int
    /// Whether typed messages are serialized once more to count their bytes.
    public var measuresTypedMessages: Bool
    /// Whether the interceptor runs inline (no hop to a queue of its own). Logging is quick,
    /// so it does unless the log handler blocks.
    public var executesInline: Bool

    /// Start and success at `.debug`, failure at `.info`, messages at `.trace` (cut at 1,024
    /// characters); `authorization`, `cookie` and `x-api-key` redacted.
    public static var defaults: Config {
      Config(
        startLevel: .debug,
        successLevel: .debug,
        failureLevel: .info,
        redactedKeys: ["cookie", "x-api-key"],
        logsMessages: true,
        messageTextLimit: 1024,
        measuresTypedMessages: true,
        executesInline: true
      )
    }
  }

  /// The logger every call's records go to (with the call's fields added).
  public let logger: Logger
  /// What is logged, and at which levels.
  public let config: Config

  /// Creates the factory.
  ///
  /// - Parameters:
  ///   - logger: Where the records go; its level decides whether per-message records appear.
  ///   - config: What is logged, and at which levels.
  public init(logger: Logger, config: Config = .defaults) {
    self.logger = logger
    self.config = config
  }

  public func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor? {
    GRPCLoggingInterceptor(manager: manager, logger: self.logger, config: self.config)
  }
}
