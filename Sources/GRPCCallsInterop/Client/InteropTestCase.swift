/// The standard interop client cases, named as in gRPC's interop test descriptions, and
/// grpc-calls' own `rich_error_details` (``RichErrorCase``) and `health`.
public enum InteropTestCase: String, CaseIterable, Sendable {
  case emptyUnary = "empty_unary"
  case largeUnary = "large_unary"
  case clientStreaming = "client_streaming"
  case serverStreaming = "server_streaming"
  case pingPong = "ping_pong"
  case emptyStream = "empty_stream"
  case cancelAfterBegin = "cancel_after_begin"
  case cancelAfterFirstResponse = "cancel_after_first_response"
  case timeoutOnSleepingServer = "timeout_on_sleeping_server"
  case customMetadata = "custom_metadata"
  case statusCodeAndMessage = "status_code_and_message"
  case specialStatusMessage = "special_status_message"
  case unimplementedMethod = "unimplemented_method"
  case unimplementedService = "unimplemented_service"
  case clientCompressedUnary = "client_compressed_unary"
  case serverCompressedUnary = "server_compressed_unary"
  case clientCompressedStreaming = "client_compressed_streaming"
  case serverCompressedStreaming = "server_compressed_streaming"
  /// Not one of gRPC's cases: a status with typed details (``RichErrorCase``).
  case richErrorDetails = "rich_error_details"
  /// Not one of gRPC's cases: the standard health service, watched while statuses flip
  /// (`GRPCHealthClient`; the callback face watches through its callback method).
  case health = "health"
}

/// A check in an interop case that did not hold.
public struct InteropCaseFailure: Error, CustomStringConvertible {
  public var description: String

  public init(_ description: String) {
    self.description = description
  }
}
