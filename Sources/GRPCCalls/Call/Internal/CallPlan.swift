internal import Foundation
internal import GRPCCore

/// What one call runs with: its own options, with its method's service config filling in what
/// they leave open (``GRPCCallOptions/serviceConfig`` says which wins where).
struct CallPlan: Sendable {
  /// Seconds; `0`: no deadline.
  var timeout: TimeInterval
  var waitForReady: Bool
  var responseSizeLimit: Int
  /// The largest request message the method's config allows; `nil`: no limit.
  var requestSizeLimit: Int?
  var executionPolicy: RPCExecutionPolicy?

  /// - Parameters:
  ///   - method: The service config's entry for the call's method, if any.
  /// - Throws: `INVALID_ARGUMENT` naming what is wrong with the call's execution policy.
  init(
    _ callOptions: GRPCCallOptions,
    safety: GRPCCallSafety,
    key: ChannelKey,
    method: MethodConfig?
  ) throws(GRPCError) {
    // The shorter deadline wins, as in gRPC's service config.
    let configured = method?.timeout.map(Self.seconds) ?? 0
    self.timeout =
      callOptions.timeout > 0 && configured > 0
      ? min(callOptions.timeout, configured) : max(callOptions.timeout, configured)
    // A call can turn waitForReady on, not off: its option has no "unset".
    self.waitForReady = callOptions.waitForReady || method?.waitForReady == true
    self.responseSizeLimit = min(key.responseSizeLimit, method?.maxResponseMessageBytes ?? .max)
    self.requestSizeLimit = method?.maxRequestMessageBytes
    if key.enableRetry {
      self.executionPolicy =
        try callOptions.executionPolicy?.core(safety: safety) ?? method?.executionPolicy
    }
  }

  /// The core's options for the call.
  func coreOptions(compression: GRPCCompressionAlgorithm) -> CallOptions {
    var options = CallOptions.defaults
    if self.timeout > 0 {
      options.timeout = .seconds(self.timeout)
    }
    // The HTTP/2 transport limits *response* messages by `maxRequestMessageBytes` and ignores
    // `maxResponseMessageBytes` (Design article, "Where the core needed help"), so set both;
    // requests are checked as they are serialized (``MessageCoder``).
    options.maxRequestMessageBytes = self.responseSizeLimit
    options.maxResponseMessageBytes = self.responseSizeLimit
    options.compression = compression.core
    options.waitForReady = self.waitForReady
    options.executionPolicy = self.executionPolicy
    return options
  }

  private static func seconds(_ duration: Duration) -> TimeInterval {
    let (seconds, attoseconds) = duration.components
    return max(0, Double(seconds) + Double(attoseconds) / 1e18)
  }
}
