public import GRPCCore

/// Why a call failed: a gRPC status code and message, with the metadata the server sent.
///
/// Every failed call closes with exactly one `GRPCError`. A status other than OK from the server
/// keeps the server's code and message; failures on this side (deadline, cancellation, an
/// unreachable server, an oversize response) carry the code gRPC assigns to them. The error that
/// caused it, when there was one, is kept as ``cause``.
///
/// It bridges to `NSError` in the domain `io.grpc` with the same numeric codes as gRPC
/// Objective-C's `GRPCErrorCode` (see ``errorDomain``).
public struct GRPCError: Error, Sendable {
  /// The gRPC status code, 1 to 16.
  public var code: RPCError.Code

  /// A description of the failure: the server's status message, or one written by this library.
  public var message: String

  /// The response headers (initial metadata) received before the failure, if any.
  public var headers: Metadata

  /// The trailers received with the status, if any.
  public var trailers: Metadata

  /// The underlying error, when the failure came from one.
  public var cause: (any Error)?

  /// More than the status message says: what went wrong in detail and what to do about it.
  /// The status message stays as gRPC gives it (apps and tests compare it); this is for logs
  /// and for people. Bridged to `NSError` as `NSDebugDescriptionErrorKey`.
  public var debugMessage: String?

  /// Creates an error.
  public init(
    code: RPCError.Code,
    message: String,
    headers: Metadata = [:],
    trailers: Metadata = [:],
    cause: (any Error)? = nil,
    debugMessage: String? = nil
  ) {
    self.code = code
    self.message = message
    self.headers = headers
    self.trailers = trailers
    self.cause = cause
    self.debugMessage = debugMessage
  }
}

extension GRPCError: CustomStringConvertible {
  public var description: String {
    var text = "\(self.code) (\(self.code.rawValue)): \(self.message)"
    if let debugMessage = self.debugMessage {
      text += ". \(debugMessage)"
    }
    if let cause = self.cause {
      text += " (cause: \(String(describing: cause)))"
    }
    return text
  }
}

extension GRPCError {
  /// The error a call reports when the application cancelled it.
  static let canceledByApp = GRPCError(code: .cancelled, message: "Canceled by app")
}
