public import GRPCCalls
internal import GRPCCore
public import GRPCProtobuf

extension GRPCError {
  /// The server's rich error status: the `google.rpc.Status` it sent in the
  /// `grpc-status-details-bin` trailer, with its details decoded by GRPCProtobuf (`ErrorInfo`,
  /// `RetryInfo`, `BadRequest`, `ResourceInfo`… and `Any` for the rest), or `nil` when it sent
  /// none. Servers send one with grpcio-status's `rpc_status`, grpc-go's `status.WithDetails`,
  /// or by throwing a `GoogleRPCStatus` from a grpc-swift-2 handler.
  ///
  /// ```swift
  /// } catch let error as GRPCError {
  ///   for detail in try error.googleRPCStatus()?.details ?? [] {
  ///     if let retry = detail.retryInfo { print("retry in", retry.delay) }
  ///   }
  /// }
  /// ```
  ///
  /// - Throws: A `GRPCError` with code `internalError` when the trailer is not a valid
  ///   `google.rpc.Status` (a server bug: the call's own code and message still hold).
  public func googleRPCStatus() throws -> GoogleRPCStatus? {
    do {
      return try RPCError(code: self.code, message: self.message, metadata: self.trailers)
        .unpackGoogleRPCStatus()
    } catch {
      throw GRPCError(
        code: .internalError,
        message:
          "The server's grpc-status-details-bin trailer is not a valid google.rpc.Status: \(error)",
        trailers: self.trailers,
        cause: error
      )
    }
  }
}
