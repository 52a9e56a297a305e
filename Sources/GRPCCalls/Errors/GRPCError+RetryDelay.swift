internal import GRPCCore

extension GRPCError {
  /// How long the server asked the client to wait before it tries again, as the channel's
  /// retries read it: its `grpc-retry-pushback-ms` trailer, or else the delay of the
  /// `RetryInfo` in its rich status (`grpc-status-details-bin`); `nil` when it asked for
  /// neither, or asked not to retry (``serverAskedNotToRetry``). At most about 31 years.
  ///
  /// The channel's retries and hedging (``GRPCCallOptions/executionPolicy``) and the token
  /// refresh interceptor already wait this long; code that retries by itself can do the same.
  public var serverRetryDelay: Duration? {
    switch self.pushback {
    case .after(let milliseconds):
      return min(.milliseconds(milliseconds), RetryInfoPushback.longestDelay)
    case .stop:
      return nil
    case .none:
      return RetryInfoPushback.retryInfoDelay(code: self.code, trailers: self.trailers)
    }
  }

  /// Whether the server asked the client not to try again: a negative (or unreadable)
  /// `grpc-retry-pushback-ms` trailer (gRFC A6).
  public var serverAskedNotToRetry: Bool {
    if case .stop = self.pushback { return true }
    return false
  }

  private enum Pushback {
    /// No `grpc-retry-pushback-ms` trailer.
    case none
    /// A negative or unreadable one: do not retry.
    case stop
    /// Retry after this many milliseconds.
    case after(Int64)
  }

  /// The server's `grpc-retry-pushback-ms`.
  private var pushback: Pushback {
    let values = self.trailers[stringValues: RetryInfoPushback.pushbackKey]
    guard let text = values.first(where: { _ in true }) else { return .none }
    guard let milliseconds = Int64(text), milliseconds >= 0 else { return .stop }
    return .after(milliseconds)
  }
}
