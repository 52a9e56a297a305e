/// What makes two calls share a channel: the target and every channel-level option.
///
/// Two calls whose keys are equal run on the same channel, and so on the same HTTP/2 connection;
/// any difference gives a separate one. Call-level options (timeout, metadata, tokens) are not
/// part of the key.
public struct ChannelKey: Hashable, Sendable {
  /// The parsed, normalized host (`name` and `name:443` are the same target).
  var target: HostTarget
  var transportType: GRPCTransportType
  var responseSizeLimit: Int
  var userAgent: String
  var flushCoalescing: Bool
  var http2TargetWindowSize: Int
  var channelPoolDomain: String?
  var channelId: Int

  /// Derives the key of a call to `host` with `options`.
  ///
  /// - Throws: ``GRPCError`` with code `INVALID_ARGUMENT` when `host` is malformed.
  public init(host: String, options: GRPCCallOptions) throws(GRPCError) {
    self.target = try HostTarget(parsing: host)
    self.transportType = options.transportType
    self.responseSizeLimit = options.effectiveResponseSizeLimit
    self.userAgent = UserAgent.value(for: options)
    self.flushCoalescing = options.flushCoalescing
    self.http2TargetWindowSize =
      options.http2TargetWindowSize == 0
      ? GRPCCallOptions.defaultHTTP2TargetWindowSize : options.http2TargetWindowSize
    self.channelPoolDomain = options.channelPoolDomain
    self.channelId = options.channelId
  }
}
