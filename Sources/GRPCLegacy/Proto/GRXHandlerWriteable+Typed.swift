public import GRPCCalls
internal import GRPCCore

/// The typed handlers of generated v1 methods: gRPC Objective-C's `(Response *, NSError *)`
/// blocks, with the response type and `GRPCError` spelled out.
extension GRXHandlerWriteable {
  /// A writeable that calls `handler` exactly once, when the call ends: with its response, or
  /// with the error it ended with. Generated v1 unary and client-streaming methods use it.
  ///
  /// Unlike gRPC Objective-C's generated methods, which answered at the first response
  /// (``GRXHandlerWriteable/init(singleHandler:)``), it waits for the status: a server that
  /// sends a response and then fails the call reports the failure, as every other gRPC stub
  /// does. The end without a response is `INTERNAL` (13), "The server closed the call without
  /// a response".
  public static func unaryHandler<Response: Sendable>(
    _ handler: @escaping @Sendable (Response?, GRPCError?) -> Void
  ) -> GRXHandlerWriteable {
    let first = FirstResponse<Response>()
    return GRXHandlerWriteable(
      valueHandler: { value in
        guard let response = value as? Response else { return }
        first.value.withLock { if $0 == nil { $0 = response } }
      },
      completionHandler: { error in
        let response = first.value.withLock { $0.take() }
        if let error {
          handler(nil, GRPCError(legacy: error))
        } else if let response {
          handler(response, nil)
        } else {
          handler(
            nil,
            GRPCError(
              code: .internalError,
              message: "The server closed the call without a response"
            )
          )
        }
      }
    )
  }

  /// A writeable that calls `eventHandler(false, response, nil)` for each response, then
  /// `eventHandler(true, nil, error)` once, last.
  public static func eventHandler<Response: Sendable>(
    _ eventHandler: @escaping @Sendable (_ done: Bool, Response?, GRPCError?) -> Void
  ) -> GRXHandlerWriteable {
    GRXHandlerWriteable(eventHandler: { done, value, error in
      eventHandler(done, value as? Response, error.map(GRPCError.init(legacy:)))
    })
  }
}

/// The first response of a unary-style v1 call, kept until the call ends.
private final class FirstResponse<Response: Sendable>: Sendable {
  let value = LockedValue<Response?>(nil)
}

extension GRPCError {
  /// What a v1 handler gets for `error`: itself when it is a `GRPCError`; otherwise the
  /// requests writer's own error (gRPC Objective-C passed it on as is), as UNKNOWN.
  init(legacy error: any Error) {
    if let error = error as? GRPCError {
      self = error
    } else {
      self.init(code: .unknown, message: "The requests writer failed: \(error)", cause: error)
    }
  }
}
