internal import GRPCCore

extension GRPCError {
  /// How long the server asked the client to wait before it tries again: the delay of the
  /// `RetryInfo` in its rich status (`grpc-status-details-bin`), or else its
  /// `grpc-retry-pushback-ms` trailer; `nil` when it asked for neither (or, with a negative
  /// pushback, asked not to retry).
  ///
  /// The channel's retries and hedging (``GRPCCallOptions/executionPolicy``) and the token
  /// refresh interceptor already wait this long; code that retries by itself can do the same.
  public var serverRetryDelay: Duration? {
    if let delay = RetryInfoPushback.retryDelay(code: self.code, trailers: self.trailers) {
      return delay
    }
    guard let text = self.trailers[stringValues: "grpc-retry-pushback-ms"].first(where: { _ in true }),
      let milliseconds = Int64(text), milliseconds >= 0
    else { return nil }
    return .milliseconds(milliseconds)
  }
}
