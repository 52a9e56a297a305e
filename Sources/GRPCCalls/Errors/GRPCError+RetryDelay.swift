internal import GRPCCore

extension GRPCError {
  /// How long the server asked the client to wait before it tries again, as the channel's
  /// retries read it: its `grpc-retry-pushback-ms` trailer, or else the delay of the
  /// `RetryInfo` in its rich status (`grpc-status-details-bin`); `nil` when it asked for
  /// neither, or asked not to retry (a negative pushback). At most about 31 years.
  ///
  /// The channel's retries and hedging (``GRPCCallOptions/executionPolicy``) and the token
  /// refresh interceptor already wait this long; code that retries by itself can do the same.
  public var serverRetryDelay: Duration? {
    if let text = self.trailers[stringValues: RetryInfoPushback.pushbackKey].first(where: { _ in true }) {
      guard let milliseconds = Int64(text), milliseconds >= 0 else { return nil }
      return min(.milliseconds(milliseconds), RetryInfoPushback.longestDelay)
    }
    return RetryInfoPushback.retryInfoDelay(code: self.code, trailers: self.trailers)
  }
}
