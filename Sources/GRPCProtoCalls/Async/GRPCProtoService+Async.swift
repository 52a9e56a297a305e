public import GRPCCalls
internal import GRPCCore
public import SwiftProtobuf

/// async/await calls, over the same `GRPCCall2` (interceptors included).
///
/// Streaming calls run with flow control on: responses are read as the caller iterates, and
/// writes wait for the transport. A unary or server-streaming request leaves with the end of
/// the stream in one flush. Responses reach the caller without a dispatch hop. Cancelling the calling task cancels the RPC; the call then throws
/// `CANCELLED` ("Canceled by app"), also when the cancellation surfaced first in the caller's
/// own closures as a `CancellationError`. A call that a body leaves unfinished is cancelled
/// when the body returns.
extension GRPCProtoService {
  /// A unary call: one request, one response.
  ///
  /// ```swift
  /// let response = try await service.unary(method: "UnaryCall", request: request,
  ///                                         responseType: Grpc_Testing_SimpleResponse.self)
  /// ```
  public func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
    method: String,
    request: Request,
    responseType: Response.Type,
    callOptions: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default
  ) async throws -> Response {
    try await self.unaryResponse(
      method: method,
      request: request,
      responseType: responseType,
      callOptions: callOptions,
      safety: safety
    ).message
  }

  /// A unary call that also returns the response headers and trailers.
  ///
  /// ```swift
  /// let response = try await service.unaryResponse(method: "UnaryCall", request: request,
  ///                                                 responseType: Grpc_Testing_SimpleResponse.self)
  /// print(response.metadata, response.message, response.trailers)
  /// ```
  public func unaryResponse<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
    method: String,
    request: Request,
    responseType: Response.Type,
    callOptions: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default
  ) async throws -> GRPCResponse<Response> {
    try await self.withAsyncCall(
      method,
      Request.self,
      Response.self,
      callOptions,
      safety,
      flowControl: false,
      requests: [request]
    ) { (bridge: AsyncCallBridge, _) in
      try await Self.single(bridge, Response.self)
    }
  }

  /// A server-streaming call: one request; `body` reads the responses.
  public func serverStreaming<
    Request: SwiftProtobuf.Message,
    Response: SwiftProtobuf.Message,
    Result: Sendable
  >(
    method: String,
    request: Request,
    responseType: Response.Type,
    callOptions: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default,
    body: (GRPCResponseStream<Response>) async throws -> Result
  ) async throws -> Result {
    try await self.withAsyncCall(
      method,
      Request.self,
      Response.self,
      callOptions,
      safety,
      flowControl: true,
      requests: [request]
    ) { (bridge: AsyncCallBridge, _) in
      try await body(GRPCResponseStream(bridge: bridge))
    }
  }

  /// A client-streaming call: `requests` writes the requests; one response.
  public func clientStreaming<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
    method: String,
    requestType: Request.Type,
    responseType: Response.Type,
    callOptions: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default,
    requests: (GRPCRequestWriter<Request>) async throws -> Void
  ) async throws -> Response {
    try await self.clientStreamingResponse(
      method: method,
      requestType: requestType,
      responseType: responseType,
      callOptions: callOptions,
      safety: safety,
      requests: requests
    ).message
  }

  /// A client-streaming call that also returns the response headers and trailers.
  public func clientStreamingResponse<
    Request: SwiftProtobuf.Message,
    Response: SwiftProtobuf.Message
  >(
    method: String,
    requestType: Request.Type,
    responseType: Response.Type,
    callOptions: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default,
    requests: (GRPCRequestWriter<Request>) async throws -> Void
  ) async throws -> GRPCResponse<Response> {
    try await self.withAsyncCall(
      method,
      Request.self,
      Response.self,
      callOptions,
      safety,
      flowControl: true
    ) {
      (bridge: AsyncCallBridge, call) in
      try await requests(GRPCRequestWriter(bridge: bridge))
      call.finish()
      return try await Self.single(bridge, Response.self)
    }
  }

  /// A bidirectional-streaming call: `requests` writes the requests while `body` reads the
  /// responses; the request side half-closes when `requests` returns.
  ///
  /// The call ends when `body` returns: a `requests` closure still running then (waiting on a
  /// stream of the app's own, say) is cancelled, and the call with it unless it had closed.
  public func bidirectionalStreaming<
    Request: SwiftProtobuf.Message,
    Response: SwiftProtobuf.Message,
    Result: Sendable
  >(
    method: String,
    requestType: Request.Type,
    responseType: Response.Type,
    callOptions: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default,
    requests: @escaping @Sendable (GRPCRequestWriter<Request>) async throws -> Void,
    body: (GRPCResponseStream<Response>) async throws -> Result
  ) async throws -> Result {
    try await self.withAsyncCall(
      method,
      Request.self,
      Response.self,
      callOptions,
      safety,
      flowControl: true
    ) {
      (bridge: AsyncCallBridge, call) in
      let writer = Task {
        try await requests(GRPCRequestWriter(bridge: bridge))
        call.finish()
      }
      do {
        let result = try await body(GRPCResponseStream(bridge: bridge))
        // The body is done with the call: requests still to come have nowhere to go.
        writer.cancel()
        if case .failure(let error) = await writer.result, !(error is CancellationError) {
          throw error
        }
        return result
      } catch {
        writer.cancel()
        throw error
      }
    }
  }

  /// Runs `body` on a started call; cancels the call when `body` leaves it unfinished, or the
  /// task is cancelled.
  ///
  /// - Parameters:
  ///   - flowControl: Whether responses are read on demand and writes wait for the transport.
  ///   - requests: All the requests, when they are known up front: they are written and the
  ///     request side half-closed before the start, so they leave with END_STREAM at once.
  private func withAsyncCall<
    Request: SwiftProtobuf.Message,
    Response: SwiftProtobuf.Message,
    Result
  >(
    _ method: String,
    _ request: Request.Type,
    _ response: Response.Type,
    _ callOptions: GRPCCallOptions?,
    _ safety: GRPCCallSafety,
    flowControl: Bool,
    requests: [Request]? = nil,
    _ body: (AsyncCallBridge, GRPCCall2) async throws -> Result
  ) async throws -> Result {
    var options = callOptions ?? self.callOptions
    options.enableFlowControl = flowControl
    let bridge = AsyncCallBridge(flowControlled: flowControl)
    let call = self.makeCall(
      method,
      Request.self,
      Response.self,
      bridge,
      options,
      safety,
      deliveringInline: true
    )
    bridge.call = call
    if let requests {
      for request in requests {
        call.writeData(request)
      }
      call.finish()
    }
    call.start()
    return try await withTaskCancellationHandler {
      defer { call.cancel() }  // after a clean close, a no-op
      do {
        return try await body(bridge, call)
      } catch is CancellationError {
        // The task was cancelled while the caller's own code waited (a sleep in a request
        // writer, say): the call was cancelled with it, and that is what the caller hears.
        throw GRPCError(code: .cancelled, message: "Canceled by app")
      }
    } onCancel: {
      call.cancel()
    }
  }

  /// The one response of a unary-response call, with its headers and trailers.
  private static func single<Response>(
    _ bridge: AsyncCallBridge,
    _ type: Response.Type
  ) async throws -> GRPCResponse<Response> {
    guard let message = try await bridge.nextMessage() else {
      throw GRPCError(
        code: .internalError,
        message: "The server closed the call without a response"
      )
    }
    let response = try responseCast(message, to: Response.self)
    let trailers = try await bridge.waitForClose()
    return GRPCResponse(metadata: bridge.headers ?? [:], message: response, trailers: trailers)
  }
}
