internal import GRPCCore
internal import GRPCProtobuf

/// Makes the core's retries and hedging wait the delay a server asks for in a rich status's
/// `RetryInfo` (`google.rpc.Status` in `grpc-status-details-bin`), as they wait for
/// `grpc-retry-pushback-ms`.
///
/// gRPC's retries (gRFC A6) read only the pushback trailer, while servers that send rich errors
/// (grpc-go's `status.WithDetails`, grpcio-status, Google's APIs) say how long to wait with
/// `RetryInfo`. The core reads pushback from the metadata of each attempt's failure, which
/// passes through the client's interceptors: this one adds the trailer, in milliseconds, to a
/// failure that carries `RetryInfo` and no pushback of its own, and marks it so that
/// ``removed(from:)`` takes both away before the application sees the trailers the server sent.
/// As pushback, the delay takes the place of the policy's backoff for that attempt.
struct RetryInfoPushback: ClientInterceptor {
  /// Marks a pushback trailer added here. The space makes it a name no HTTP/2 peer can send,
  /// so a server's own trailers are never taken for ours.
  private static let markKey = "grpc-calls pushback-from-retry-info"
  static let pushbackKey = "grpc-retry-pushback-ms"
  /// The longest delay honoured (about 31 years): longer ones would overflow the clock's
  /// arithmetic. The call's deadline bounds the wait anyway.
  static let longestDelay = Duration.seconds(1_000_000_000)

  func intercept<Input: Sendable, Output: Sendable>(
    request: StreamingClientRequest<Input>,
    context: ClientContext,
    next: (StreamingClientRequest<Input>, ClientContext) async throws -> StreamingClientResponse<
      Output
    >
  ) async throws -> StreamingClientResponse<Output> {
    var response = try await next(request, context)
    if case .failure(var error) = response.accepted,
      Self.addPushback(to: &error.metadata, code: error.code)
    {
      response.accepted = .failure(error)
    }
    return response
  }

  /// The delay a failure's `RetryInfo` asks for, capped at ``longestDelay``, if its trailers hold
  /// a valid `google.rpc.Status` with one.
  static func retryInfoDelay(code: RPCError.Code, trailers: Metadata) -> Duration? {
    let status = try? RPCError(code: code, message: "", metadata: trailers).unpackGoogleRPCStatus()
    guard let delay = status?.details.lazy.compactMap(\.retryInfo).first?.delay, delay >= .zero
    else {
      return nil
    }
    return min(delay, Self.longestDelay)
  }

  /// `error` without the pushback trailer this interceptor added to it.
  static func removed(from error: RPCError) -> RPCError {
    guard error.metadata.contains(where: { $0.key == Self.markKey }) else { return error }
    var error = error
    error.metadata.removeAllValues(forKey: Self.markKey)
    error.metadata.removeAllValues(forKey: Self.pushbackKey)
    return error
  }

  private static func addPushback(to metadata: inout Metadata, code: RPCError.Code) -> Bool {
    guard !metadata.contains(where: { $0.key == Self.pushbackKey }),
      let delay = Self.retryInfoDelay(code: code, trailers: metadata)
    else { return false }
    let (seconds, attoseconds) = delay.components
    let milliseconds = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    metadata.addString(String(milliseconds), forKey: Self.pushbackKey)
    metadata.addString("1", forKey: Self.markKey)
    return true
  }
}
