internal import GRPCCore
public import GRPCProtobuf

/// grpc-calls' own interop case `rich_error_details` (not one of gRPC's standard cases): a
/// request with ``askKey`` in its metadata fails with ``status``, a `google.rpc.Status` with typed
/// details in the `grpc-status-details-bin` trailer, after the responses it asked for. The
/// interop servers of `grpc-calls serve` and `interop/python/server.py` (grpcio-status) answer it.
public enum RichErrorCase {
  /// The request metadata that asks for ``status``.
  public static let askKey = "x-grpc-calls-rich-status"

  /// The delay of the status's `RetryInfo`: a retry policy for `RESOURCE_EXHAUSTED` waits this
  /// long before it tries again.
  public static let retryDelay = Duration.seconds(2)

  /// What the server fails the call with.
  public static let status = GoogleRPCStatus(
    code: .resourceExhausted,
    message: "out of stock",
    details: [
      .errorInfo(
        ErrorDetails.ErrorInfo(reason: "STOCKOUT", domain: "example.com", metadata: ["sku": "42"])
      ),
      .retryInfo(ErrorDetails.RetryInfo(delay: Self.retryDelay)),
    ]
  )
}
