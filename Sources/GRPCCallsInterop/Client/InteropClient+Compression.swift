internal import Foundation
internal import GRPCCalls
internal import GRPCCore
internal import SwiftProtobuf

/// The compression cases of gRPC's interop test descriptions.
///
/// Compression is a channel setting here (``GRPCCallOptions/compressionAlgorithm``), not a
/// per-message one: where a case sends one message compressed and the next uncompressed, both
/// go compressed, and the second does not ask the server to check (its `expect_compressed` is
/// left unset). The cases that ask only for compressed responses send plain requests: a server
/// need not accept compressed ones (grpc-go's interop server installs no decompressor), and
/// every channel accepts gzip responses.
extension InteropClient {
  /// The client's options with gzip request compression (which also accepts compressed
  /// responses).
  private var gzipOptions: GRPCCallOptions {
    var options = self.callOptions
    options.compressionAlgorithm = .gzip
    return options
  }

  func clientCompressedUnary() async throws {
    // The probe: a server that checks must refuse an uncompressed request it expects compressed.
    var expectsCompressed = Self.largeRequest()
    expectsCompressed.expectCompressed.value = true
    var (call, recorder) = try self.makeCall("UnaryCall")
    try await self.send(expectsCompressed, on: call)
    try await self.expectClose(recorder, code: .invalidArgument)

    for (request, options) in [
      (expectsCompressed, self.gzipOptions),
      (Self.largeRequest(), self.callOptions),
    ] {
      (call, recorder) = try self.makeCall("UnaryCall", options: options)
      try await self.send(request, on: call)
      try await self.expectClose(recorder, code: nil)
      try self.checkLargeUnaryResponse(recorder)
    }
  }

  func serverCompressedUnary() async throws {
    for compressed in [true, false] {
      var request = Self.largeRequest()
      request.responseCompressed.value = compressed
      let (call, recorder) = try self.makeCall("UnaryCall")
      try await self.send(request, on: call)
      try await self.expectClose(recorder, code: nil)
      try self.checkLargeUnaryResponse(recorder)
    }
  }

  func clientCompressedStreaming() async throws {
    var probe = Grpc_Testing_StreamingInputCallRequest()
    probe.expectCompressed.value = true
    probe.payload.body = Data(count: 27182)
    var (call, recorder) = try self.makeCall("StreamingInputCall")
    try await self.send(probe, on: call)
    try await self.expectClose(recorder, code: .invalidArgument)

    (call, recorder) = try self.makeCall("StreamingInputCall", options: self.gzipOptions)
    call.start()
    for (size, expectCompressed) in [(27182, true), (45904, false)] {
      var request = Grpc_Testing_StreamingInputCallRequest()
      if expectCompressed {
        request.expectCompressed.value = true
      }
      request.payload.body = Data(count: size)
      call.writeData(try Self.bytes(request))
    }
    call.finish()
    try await self.expectClose(recorder, code: nil)
    let response = try Self.decode(
      Grpc_Testing_StreamingInputCallResponse.self,
      try self.only(recorder)
    )
    try self.check(
      response.aggregatedPayloadSize == 73086,
      "expected aggregated size 73086, got \(response.aggregatedPayloadSize)"
    )
  }

  func serverCompressedStreaming() async throws {
    let request = Self.serverCompressedStreamingRequest()
    let (call, recorder) = try self.makeCall("StreamingOutputCall")
    try await self.send(request, on: call)
    try await self.expectClose(recorder, code: nil)
    let sizes = try recorder.messages.map {
      try Self.decode(Grpc_Testing_StreamingOutputCallResponse.self, $0).payload.body.count
    }
    try self.check(sizes == [31415, 92653], "expected response sizes [31415, 92653], got \(sizes)")
  }

  /// server_compressed_streaming's request: 31415 bytes compressed, then 92653 uncompressed.
  static func serverCompressedStreamingRequest() -> Grpc_Testing_StreamingOutputCallRequest {
    var request = Grpc_Testing_StreamingOutputCallRequest()
    let parameters: [(Bool, Int32)] = [(true, 31415), (false, 92653)]
    request.responseParameters = parameters.map { compressed, size in
      var parameters = Self.parameters(size: size)
      parameters.compressed.value = compressed
      return parameters
    }
    return request
  }

  /// Starts `call`, sends `request` and half-closes.
  private func send(_ request: some SwiftProtobuf.Message, on call: GRPCCall2) async throws {
    call.start()
    call.writeData(try Self.bytes(request))
    call.finish()
  }

  private func only(_ recorder: CallRecorder) throws -> Data {
    try self.check(
      recorder.messages.count == 1,
      "expected 1 response, got \(recorder.messages.count)"
    )
    return recorder.messages[0]
  }

  private func checkLargeUnaryResponse(_ recorder: CallRecorder) throws {
    try Self.checkLarge(try Self.decode(Grpc_Testing_SimpleResponse.self, try self.only(recorder)))
  }
}
