internal import Foundation
internal import GRPCCalls
internal import GRPCCore
internal import GRPCProtoCalls
internal import SwiftProtobuf

/// The standard cases through the generated client's callback methods (L38's face).
extension InteropClient {
  func runGenerated(_ testCase: InteropTestCase) async throws {
    let service = self.service
    let recorder = ProtoCallRecorder()
    switch testCase {
    case .emptyUnary:
      service.emptyCall(message: Grpc_Testing_Empty(), responseHandler: recorder).start()
      try await recorder.expectClose(nil)
      try self.check(
        try recorder.messages(as: Grpc_Testing_Empty.self).count == 1,
        "expected 1 response"
      )
    case .largeUnary:
      service.unaryCall(message: Self.largeRequest(), responseHandler: recorder).start()
      try await recorder.expectClose(nil)
      try Self.checkLarge(try self.single(recorder))
    case .clientStreaming:
      let call = service.streamingInputCall(responseHandler: recorder)
      call.start()
      for size in [27182, 8, 1828, 45904] { call.writeMessage(Self.inputRequest(size: size)) }
      call.finish()
      try await recorder.expectClose(nil)
      let response: Grpc_Testing_StreamingInputCallResponse = try self.single(recorder)
      try self.check(
        response.aggregatedPayloadSize == 74922,
        "aggregated size \(response.aggregatedPayloadSize)"
      )
    case .serverStreaming:
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = Self.pingPongResponseSizes.map(Self.parameters(size:))
      service.streamingOutputCall(message: request, responseHandler: recorder).start()
      try await recorder.expectClose(nil)
      let sizes = try self.outputSizes(recorder)
      try self.check(sizes == Self.pingPongResponseSizes.map(Int.init), "response sizes \(sizes)")
    case .pingPong:
      let call = service.fullDuplexCall(responseHandler: recorder)
      call.start()
      for (index, (requestSize, responseSize)) in zip(
        Self.pingPongRequestSizes,
        Self.pingPongResponseSizes
      ).enumerated() {
        var request = Grpc_Testing_StreamingOutputCallRequest()
        request.responseParameters = [Self.parameters(size: responseSize)]
        request.payload.body = Data(count: Int(requestSize))
        call.writeMessage(request)
        try self.check(
          await recorder.wait { $0.messages.count > index },
          "no response to ping \(index + 1)"
        )
      }
      call.finish()
      try await recorder.expectClose(nil)
      let sizes = try self.outputSizes(recorder)
      try self.check(sizes == Self.pingPongResponseSizes.map(Int.init), "pong sizes \(sizes)")
    case .emptyStream:
      let call = service.fullDuplexCall(responseHandler: recorder)
      call.start()
      call.finish()
      try await recorder.expectClose(nil)
      try self.check(recorder.messages.isEmpty, "expected no responses")
    case .cancelAfterBegin:
      let call = service.streamingInputCall(responseHandler: recorder)
      call.start()
      call.cancel()
      try await recorder.expectClose(.cancelled, message: "Canceled by app")
    case .cancelAfterFirstResponse:
      let box = LockedValue<
        GRPCStreamingProtoCall<
          Grpc_Testing_StreamingOutputCallRequest, Grpc_Testing_StreamingOutputCallResponse
        >?
      >(nil)
      let cancelling = ProtoCallRecorder { index in
        if index == 0 { box.withLock { $0 }?.cancel() }
      }
      let call = service.fullDuplexCall(responseHandler: cancelling)
      box.withLock { $0 = call }
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [Self.parameters(size: 31415)]
      request.payload.body = Data(count: 27182)
      call.start()
      call.writeMessage(request)
      try await cancelling.expectClose(.cancelled, message: "Canceled by app")
      try self.check(
        cancelling.messages.count == 1,
        "expected 1 response, got \(cancelling.messages.count)"
      )
    case .timeoutOnSleepingServer:
      var options = self.callOptions
      options.timeout = 0.001
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.payload.body = Data(count: 27182)
      let call = service.fullDuplexCall(responseHandler: recorder, callOptions: options)
      call.start()
      call.writeMessage(request)
      try await recorder.expectClose(.deadlineExceeded)
    case .customMetadata:
      var options = self.callOptions
      options.initialMetadata.addString(
        "test_initial_metadata_value",
        forKey: "x-grpc-test-echo-initial"
      )
      options.initialMetadata.addBinary(
        [0xAB, 0xAB, 0xAB],
        forKey: "x-grpc-test-echo-trailing-bin"
      )
      let unary = ProtoCallRecorder()
      service.unaryCall(message: Self.largeRequest(), responseHandler: unary, callOptions: options)
        .start()
      var streaming = Grpc_Testing_StreamingOutputCallRequest()
      streaming.responseParameters = [Self.parameters(size: 314_159)]
      streaming.payload.body = Data(count: 271_828)
      let call = service.fullDuplexCall(responseHandler: recorder, callOptions: options)
      call.start()
      call.writeMessage(streaming)
      call.finish()
      for (method, each) in [("UnaryCall", unary), ("FullDuplexCall", recorder)] {
        let close = try await each.expectClose(nil)
        let initial = each.initialMetadata?[stringValues: "x-grpc-test-echo-initial"].first { _ in
          true
        }
        try self.check(
          initial == "test_initial_metadata_value",
          "\(method): initial echo \(initial.debugDescription)"
        )
        let trailing = close.trailers?[binaryValues: "x-grpc-test-echo-trailing-bin"].first { _ in
          true
        }
        try self.check(
          trailing == [0xAB, 0xAB, 0xAB],
          "\(method): trailing echo \(trailing.debugDescription)"
        )
      }
    case .statusCodeAndMessage, .specialStatusMessage:
      let message = testCase == .statusCodeAndMessage ? "test status message" : Self.specialMessage
      var request = Grpc_Testing_SimpleRequest()
      request.responseStatus = Self.status(message)
      service.unaryCall(message: request, responseHandler: recorder).start()
      try await recorder.expectClose(.unknown, message: message)
      if testCase == .statusCodeAndMessage {
        var streaming = Grpc_Testing_StreamingOutputCallRequest()
        streaming.responseStatus = Self.status(message)
        let duplex = ProtoCallRecorder()
        let call = service.fullDuplexCall(responseHandler: duplex)
        call.start()
        call.writeMessage(streaming)
        call.finish()
        try await duplex.expectClose(.unknown, message: message)
      }
    case .unimplementedMethod:
      service.unimplementedCall(message: Grpc_Testing_Empty(), responseHandler: recorder).start()
      try await recorder.expectClose(.unimplemented)
    case .unimplementedService:
      UnimplementedService(
        host: self.target,
        callOptions: self.callOptions,
        channelPool: self.channelPool
      )
      .unimplementedCall(message: Grpc_Testing_Empty(), responseHandler: recorder).start()
      try await recorder.expectClose(.unimplemented)
    case .clientCompressedUnary, .serverCompressedUnary, .clientCompressedStreaming,
      .serverCompressedStreaming:
      try await self.generatedCompression(testCase, service)
    case .richErrorDetails:
      try await self.generatedRichErrorDetails(service)
    case .health:
      try await self.health(callback: true)
    }
  }

  private func generatedCompression(
    _ testCase: InteropTestCase,
    _ service: TestService
  ) async throws {
    var gzip = self.callOptions
    gzip.compressionAlgorithm = .gzip
    switch testCase {
    case .clientCompressedUnary, .serverCompressedUnary:
      var probe = Self.largeRequest()
      probe.expectCompressed.value = true
      var attempts: [(Grpc_Testing_SimpleRequest, GRPCCallOptions?, RPCError.Code?)] = []
      if testCase == .clientCompressedUnary {
        attempts = [
          (probe, nil, .invalidArgument), (probe, gzip, nil), (Self.largeRequest(), nil, nil),
        ]
      } else {
        for compressed in [true, false] {
          var request = Self.largeRequest()
          request.responseCompressed.value = compressed
          attempts.append((request, nil, nil))
        }
      }
      for (request, options, code) in attempts {
        let recorder = ProtoCallRecorder()
        service.unaryCall(message: request, responseHandler: recorder, callOptions: options).start()
        try await recorder.expectClose(code)
        if code == nil { try Self.checkLarge(try self.single(recorder)) }
      }
    case .clientCompressedStreaming:
      var first = Self.inputRequest(size: 27182)
      first.expectCompressed.value = true
      let refused = ProtoCallRecorder()
      let probe = service.streamingInputCall(responseHandler: refused)
      probe.start()
      probe.writeMessage(first)
      probe.finish()
      try await refused.expectClose(.invalidArgument)
      let recorder = ProtoCallRecorder()
      let call = service.streamingInputCall(responseHandler: recorder, callOptions: gzip)
      call.start()
      call.writeMessage(first)
      call.writeMessage(Self.inputRequest(size: 45904))
      call.finish()
      try await recorder.expectClose(nil)
      let response: Grpc_Testing_StreamingInputCallResponse = try self.single(recorder)
      try self.check(
        response.aggregatedPayloadSize == 73086,
        "aggregated size \(response.aggregatedPayloadSize)"
      )
    default:
      let request = Self.serverCompressedStreamingRequest()
      let recorder = ProtoCallRecorder()
      service.streamingOutputCall(message: request, responseHandler: recorder).start()
      try await recorder.expectClose(nil)
      let sizes = try self.outputSizes(recorder)
      try self.check(sizes == [31415, 92653], "response sizes \(sizes)")
    }
  }

  private func single<M: SwiftProtobuf.Message>(_ recorder: ProtoCallRecorder) throws -> M {
    let messages = try recorder.messages(as: M.self)
    try self.check(messages.count == 1, "expected 1 response, got \(messages.count)")
    return messages[0]
  }

  private func outputSizes(_ recorder: ProtoCallRecorder) throws -> [Int] {
    try recorder.messages(as: Grpc_Testing_StreamingOutputCallResponse.self).map(
      \.payload.body.count
    )
  }
}
