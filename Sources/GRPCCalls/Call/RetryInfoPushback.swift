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
struct RetryInfoPushback: ClientInterceptor {
  /// Marks a pushback trailer added here; never sent on the wire.
  private static let markKey = "grpc-calls-pushback-from-retry-info"
  private static let pushbackKey = "grpc-retry-pushback-ms"

  func intercept<Input: Sendable, Output: Sendable>(
    request: StreamingClientRequest<Input>,
    context: ClientContext,
    next: (StreamingClientRequest<Input>, ClientContext) async throws -> StreamingClientResponse<Output>
  ) async throws -> StreamingClientResponse<Output> {
    var response = try await next(request, context)
    if case .failure(var error) = response.accepted, Self.addPushback(to: &error.metadata, code: error.code) {
      response.accepted = .failure(error)
    }
    return response
  }

  /// The delay a failure's `RetryInfo` asks for, if its trailers hold a valid
  /// `google.rpc.Status` with one.
  static func retryDelay(code: RPCError.Code, trailers: Metadata) -> Duration? {
    let status = try? RPCError(code: code, message: "", metadata: trailers).unpackGoogleRPCStatus()
    guard let delay = status?.details.lazy.compactMap(\.retryInfo).first?.delay, delay >= .zero else {
      return nil
    }
    return delay
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
      let delay = Self.retryDelay(code: code, trailers: metadata)
    else { return false }
    // Capped (at about 31 years) so that a server's absurd delay cannot overflow; the call's
    // deadline bounds the wait anyway.
    let (seconds, attoseconds) = delay.components
    let milliseconds = min(seconds, 1_000_000_000) * 1_000 + attoseconds / 1_000_000_000_000_000
    metadata.addString(String(milliseconds), forKey: Self.pushbackKey)
    metadata.addString("1", forKey: Self.markKey)
    return true
  }
}
