internal import Foundation
internal import GRPCCore

/// The interop `grpc.testing.TestService`, as gRPC's interop test descriptions specify it.
///
/// Every method echoes `x-grpc-test-echo-initial` into the response headers,
/// `x-grpc-test-echo-trailing-bin` into the trailers and, for `x-grpc-test-echo-useragent`, the
/// user agent it received; and answers with the status a request's `response_status` asks for.
///
/// Compression is per RPC in the core (the server compresses responses when the client accepts
/// the algorithm): `response_compressed` cannot switch it per message, and `expect_compressed` is
/// checked against the request's `grpc-encoding`, not each message's compressed flag.
struct InteropTestService: Grpc_Testing_TestService.StreamingServiceProtocol {
  let recorder: InteropServerRecorder

  func emptyCall(
    request: StreamingServerRequest<Grpc_Testing_Empty>,
    context: ServerContext
  ) async throws -> StreamingServerResponse<Grpc_Testing_Empty> {
    let echo = try self.begin(request.metadata, context)
    _ = try await Self.single(request.messages)
    return StreamingServerResponse(metadata: echo.initial) { writer in
      try await writer.write(Grpc_Testing_Empty())
      return echo.trailing
    }
  }

  func unaryCall(
    request: StreamingServerRequest<Grpc_Testing_SimpleRequest>,
    context: ServerContext
  ) async throws -> StreamingServerResponse<Grpc_Testing_SimpleResponse> {
    let echo = try self.begin(request.metadata, context)
    let message = try await Self.single(request.messages)
    // Before the headers, so trailers-only, as grpcio and grpc-go answer it: a retry policy
    // sees a rejected attempt it may retry.
    try Self.failRichIfAsked(request.metadata)
    return StreamingServerResponse(metadata: echo.initial) { writer in
      try Self.checkCompression(expected: message.expectCompressed.value, request.metadata)
      try Self.failIfAsked(message.responseStatus, trailers: echo.trailing)
      var response = Grpc_Testing_SimpleResponse()
      response.payload = Self.payload(size: message.responseSize)
      try await writer.write(response)
      return echo.trailing
    }
  }

  func cacheableUnaryCall(
    request: StreamingServerRequest<Grpc_Testing_SimpleRequest>,
    context: ServerContext
  ) async throws -> StreamingServerResponse<Grpc_Testing_SimpleResponse> {
    let echo = try self.begin(request.metadata, context)
    _ = try await Self.single(request.messages)
    var headers = echo.initial
    headers.addString("max-age=60, public", forKey: "cache-control")
    return StreamingServerResponse(metadata: headers) { writer in
      // A fresh value each time, so a client can tell a cached response from a new one.
      var response = Grpc_Testing_SimpleResponse()
      response.payload.body = Data(String(DispatchTime.now().uptimeNanoseconds).utf8)
      try await writer.write(response)
      return echo.trailing
    }
  }

  func streamingOutputCall(
    request: StreamingServerRequest<Grpc_Testing_StreamingOutputCallRequest>,
    context: ServerContext
  ) async throws -> StreamingServerResponse<Grpc_Testing_StreamingOutputCallResponse> {
    let echo = try self.begin(request.metadata, context)
    let message = try await Self.single(request.messages)
    return StreamingServerResponse(metadata: echo.initial) { writer in
      self.recorder.respondingBegan(peer: context.remotePeer)
      defer { self.recorder.respondingEnded(peer: context.remotePeer) }
      try await self.respond(to: message, with: writer, context: context)
      try Self.failIfAsked(message.responseStatus, trailers: echo.trailing)
      try Self.failRichIfAsked(request.metadata)
      return echo.trailing
    }
  }

  func streamingInputCall(
    request: StreamingServerRequest<Grpc_Testing_StreamingInputCallRequest>,
    context: ServerContext
  ) async throws -> StreamingServerResponse<Grpc_Testing_StreamingInputCallResponse> {
    let echo = try self.begin(request.metadata, context)
    return StreamingServerResponse(metadata: echo.initial) { writer in
      var total = 0
      try await self.recorder.readRequests(request.messages, metadata: request.metadata) {
        message in
        try Self.checkCompression(expected: message.expectCompressed.value, request.metadata)
        total += message.payload.body.count
      }
      var response = Grpc_Testing_StreamingInputCallResponse()
      response.aggregatedPayloadSize = Int32(clamping: total)
      try await writer.write(response)
      return echo.trailing
    }
  }

  func fullDuplexCall(
    request: StreamingServerRequest<Grpc_Testing_StreamingOutputCallRequest>,
    context: ServerContext
  ) async throws -> StreamingServerResponse<Grpc_Testing_StreamingOutputCallResponse> {
    let echo = try self.begin(request.metadata, context)
    return StreamingServerResponse(metadata: echo.initial) { writer in
      try await self.recorder.readRequests(request.messages, metadata: request.metadata) {
        message in
        try Self.failIfAsked(message.responseStatus, trailers: echo.trailing)
        try await self.respond(to: message, with: writer, context: context)
      }
      return echo.trailing
    }
  }

  func halfDuplexCall(
    request: StreamingServerRequest<Grpc_Testing_StreamingOutputCallRequest>,
    context: ServerContext
  ) async throws -> StreamingServerResponse<Grpc_Testing_StreamingOutputCallResponse> {
    let echo = try self.begin(request.metadata, context)
    return StreamingServerResponse(metadata: echo.initial) { writer in
      var messages: [Grpc_Testing_StreamingOutputCallRequest] = []
      try await self.recorder.readRequests(request.messages, metadata: request.metadata) {
        message in
        messages.append(message)
      }
      for message in messages {
        try Self.failIfAsked(message.responseStatus, trailers: echo.trailing)
        try await self.respond(to: message, with: writer, context: context)
      }
      return echo.trailing
    }
  }

  func unimplementedCall(
    request: StreamingServerRequest<Grpc_Testing_Empty>,
    context: ServerContext
  ) async throws -> StreamingServerResponse<Grpc_Testing_Empty> {
    _ = try self.begin(request.metadata, context)
    throw RPCError(code: .unimplemented, message: "UnimplementedCall is not implemented")
  }
}
