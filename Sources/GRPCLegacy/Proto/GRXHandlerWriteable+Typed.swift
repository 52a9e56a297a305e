public import GRPCCalls
internal import GRPCCore

/// The typed handlers of generated v1 methods: gRPC Objective-C's `(Response *, NSError *)`
/// blocks, with the response type and `GRPCError` spelled out.
extension GRXHandlerWriteable {
  /// A writeable that calls `handler` exactly once: with the first response, or with the
  /// error the call ended with (see ``GRXHandlerWriteable/init(singleHandler:)``).
  public static func singleHandler<Response: Sendable>(
    _ handler: @escaping @Sendable (Response?, GRPCError?) -> Void
  ) -> GRXHandlerWriteable {
    GRXHandlerWriteable(singleHandler: { value, error in
      handler(value as? Response, error.map(GRPCError.init(legacy:)))
    })
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
