internal import Foundation
internal import GRPCCalls
internal import GRPCCore
internal import GRPCLegacy

/// The standard cases through the generated client's v1 methods (gRPC Objective-C's pre-L38
/// API, GRPCLegacy): requests from GRX writers, responses to v1 handlers.
extension InteropClient {
  func runLegacy(_ testCase: InteropTestCase) async throws {
    let service = self.service
    switch testCase {
    case .emptyUnary:
      let recorder = LegacyRecorder<Grpc_Testing_Empty>()
      service.emptyCall(with: Grpc_Testing_Empty(), handler: recorder.handler)
      try await recorder.expectEnd(nil)
      try self.check(recorder.responses.count == 1, "expected 1 response")
    case .largeUnary:
      let recorder = LegacyRecorder<Grpc_Testing_SimpleResponse>()
      service.unaryCall(with: Self.largeRequest(), handler: recorder.handler)
      try await recorder.expectEnd(nil)
      try Self.checkLarge(try self.single(recorder))
    case .clientStreaming:
      let recorder = LegacyRecorder<Grpc_Testing_StreamingInputCallResponse>()
      let requests = GRXWriter(
        values: [27182, 8, 1828, 45904].map { Self.inputRequest(size: $0) as any Sendable }
      )
      service.streamingInputCall(withRequestsWriter: requests, handler: recorder.handler)
      try await recorder.expectEnd(nil)
      let response = try self.single(recorder)
      try self.check(
        response.aggregatedPayloadSize == 74922,
        "aggregated size \(response.aggregatedPayloadSize)"
      )
    case .serverStreaming:
      let recorder = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse>()
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = Self.pingPongResponseSizes.map(Self.parameters(size:))
      service.streamingOutputCall(with: request, eventHandler: recorder.eventHandler)
      try await recorder.expectEnd(nil)
      let sizes = recorder.responses.map(\.payload.body.count)
      try self.check(sizes == Self.pingPongResponseSizes.map(Int.init), "response sizes \(sizes)")
    case .pingPong:
      try await self.legacyPingPong(service)
    case .emptyStream:
      let recorder = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse>()
      let pipe = GRXBufferedPipe()
      service.fullDuplexCall(withRequestsWriter: pipe, eventHandler: recorder.eventHandler)
      pipe.writesFinished(withError: nil)
      try await recorder.expectEnd(nil)
      try self.check(recorder.responses.isEmpty, "expected no responses")
    case .cancelAfterBegin:
      let recorder = LegacyRecorder<Grpc_Testing_StreamingInputCallResponse>()
      let pipe = GRXBufferedPipe()
      let call = service.rpcToStreamingInputCall(
        withRequestsWriter: pipe,
        handler: recorder.handler
      )
      call.start()
      call.cancel()
      try await recorder.expectEnd(.cancelled, message: "Canceled by app")
      let stopped = await recorder.wait { _ in pipe.state == .finished }
      try self.check(stopped, "the requests writer was not stopped: \(pipe.state)")
    case .cancelAfterFirstResponse:
      let box = LockedValue<GRPCProtoCall?>(nil)
      let recorder = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse> { index in
        if index == 0 { box.withLock { $0 }?.cancel() }
      }
      let pipe = GRXBufferedPipe()
      let call = service.rpcToFullDuplexCall(
        withRequestsWriter: pipe,
        eventHandler: recorder.eventHandler
      )
      box.withLock { $0 = call }
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [Self.parameters(size: 31415)]
      request.payload.body = Data(count: 27182)
      call.start()
      pipe.writeValue(request)
      try await recorder.expectEnd(.cancelled, message: "Canceled by app")
      try self.check(
        recorder.responses.count == 1,
        "expected 1 response, got \(recorder.responses.count)"
      )
    case .timeoutOnSleepingServer:
      let recorder = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse>()
      let pipe = GRXBufferedPipe()
      let call = service.rpcToFullDuplexCall(
        withRequestsWriter: pipe,
        eventHandler: recorder.eventHandler
      )
      call.timeout = 0.001
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.payload.body = Data(count: 27182)
      call.start()
      pipe.writeValue(request)
      try await recorder.expectEnd(.deadlineExceeded)
    case .customMetadata:
      try await self.legacyCustomMetadata(service)
    case .statusCodeAndMessage, .specialStatusMessage:
      let message = testCase == .statusCodeAndMessage ? "test status message" : Self.specialMessage
      var request = Grpc_Testing_SimpleRequest()
      request.responseStatus = Self.status(message)
      let recorder = LegacyRecorder<Grpc_Testing_SimpleResponse>()
      service.unaryCall(with: request, handler: recorder.handler)
      try await recorder.expectEnd(.unknown, message: message)
      if testCase == .statusCodeAndMessage {
        var streaming = Grpc_Testing_StreamingOutputCallRequest()
        streaming.responseStatus = Self.status(message)
        let duplex = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse>()
        service.fullDuplexCall(
          withRequestsWriter: GRXWriter(value: streaming),
          eventHandler: duplex.eventHandler
        )
        try await duplex.expectEnd(.unknown, message: message)
      }
    case .unimplementedMethod:
      let recorder = LegacyRecorder<Grpc_Testing_Empty>()
      service.unimplementedCall(with: Grpc_Testing_Empty(), handler: recorder.handler)
      try await recorder.expectEnd(.unimplemented)
    case .unimplementedService:
      let recorder = LegacyRecorder<Grpc_Testing_Empty>()
      UnimplementedService(
        host: self.target,
        callOptions: self.callOptions,
        channelPool: self.channelPool
      )
      .unimplementedCall(with: Grpc_Testing_Empty(), handler: recorder.handler)
      try await recorder.expectEnd(.unimplemented)
    case .clientCompressedUnary, .serverCompressedUnary, .clientCompressedStreaming,
      .serverCompressedStreaming:
      try await self.legacyCompression(testCase)
    case .richErrorDetails:
      try await self.legacyRichErrorDetails(service)
    case .health:
      // The health client has no v1 face: its callback face stands in.
      try await self.health(callback: true)
    }
  }

  /// Ping-pong through a buffered pipe: each request is written after the last response.
  private func legacyPingPong(_ service: TestService) async throws {
    let recorder = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse>()
    let pipe = GRXBufferedPipe()
    service.fullDuplexCall(withRequestsWriter: pipe, eventHandler: recorder.eventHandler)
    for (index, (requestSize, responseSize)) in zip(
      Self.pingPongRequestSizes,
      Self.pingPongResponseSizes
    ).enumerated() {
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [Self.parameters(size: responseSize)]
      request.payload.body = Data(count: Int(requestSize))
      pipe.writeValue(request)
      try self.check(
        await recorder.wait { $0.responses.count > index },
        "no response to ping \(index + 1)"
      )
    }
    pipe.writesFinished(withError: nil)
    try await recorder.expectEnd(nil)
    let sizes = recorder.responses.map(\.payload.body.count)
    try self.check(sizes == Self.pingPongResponseSizes.map(Int.init), "pong sizes \(sizes)")
  }

  /// Request headers set on the v1 call come back: the initial echo in its response headers,
  /// the `-bin` trailer echo in its trailers.
  private func legacyCustomMetadata(_ service: TestService) async throws {
    let unaryRecorder = LegacyRecorder<Grpc_Testing_SimpleResponse>()
    let unary = service.rpcToUnaryCall(with: Self.largeRequest(), handler: unaryRecorder.handler)
    var streaming = Grpc_Testing_StreamingOutputCallRequest()
    streaming.responseParameters = [Self.parameters(size: 314_159)]
    streaming.payload.body = Data(count: 271_828)
    let duplexRecorder = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse>()
    let duplex = service.rpcToFullDuplexCall(
      withRequestsWriter: GRXWriter(value: streaming),
      eventHandler: duplexRecorder.eventHandler
    )
    for call in [unary, duplex] {
      call.requestHeaders.addString(
        "test_initial_metadata_value",
        forKey: "x-grpc-test-echo-initial"
      )
      call.requestHeaders.addBinary([0xAB, 0xAB, 0xAB], forKey: "x-grpc-test-echo-trailing-bin")
      call.start()
    }
    try await unaryRecorder.expectEnd(nil)
    try await duplexRecorder.expectEnd(nil)
    for (method, call) in [("UnaryCall", unary), ("FullDuplexCall", duplex)] {
      // A single handler answers at the first response; the trailers come at the close.
      let closed = await unaryRecorder.wait { _ in call.responseTrailers != nil }
      try self.check(closed, "\(method): no trailers")
      let initial = call.responseHeaders?[stringValues: "x-grpc-test-echo-initial"].first { _ in
        true
      }
      try self.check(
        initial == "test_initial_metadata_value",
        "\(method): initial echo \(initial.debugDescription)"
      )
      let trailing = call.responseTrailers?[binaryValues: "x-grpc-test-echo-trailing-bin"].first {
        _ in true
      }
      try self.check(
        trailing == [0xAB, 0xAB, 0xAB],
        "\(method): trailing echo \(trailing.debugDescription)"
      )
    }
  }

  /// The compression cases: requests compressed with gzip where a case asks for it, through a
  /// service whose options say so.
  private func legacyCompression(_ testCase: InteropTestCase) async throws {
    var gzipOptions = self.callOptions
    gzipOptions.compressionAlgorithm = .gzip
    let plain = self.service
    let gzip = TestService(
      host: self.target,
      callOptions: gzipOptions,
      channelPool: self.channelPool
    )
    switch testCase {
    case .clientCompressedUnary, .serverCompressedUnary:
      var probe = Self.largeRequest()
      probe.expectCompressed.value = true
      var attempts: [(Grpc_Testing_SimpleRequest, TestService, RPCError.Code?)] = []
      if testCase == .clientCompressedUnary {
        attempts = [
          (probe, plain, .invalidArgument), (probe, gzip, nil), (Self.largeRequest(), plain, nil),
        ]
      } else {
        for compressed in [true, false] {
          var request = Self.largeRequest()
          request.responseCompressed.value = compressed
          attempts.append((request, plain, nil))
        }
      }
      for (request, service, code) in attempts {
        let recorder = LegacyRecorder<Grpc_Testing_SimpleResponse>()
        service.unaryCall(with: request, handler: recorder.handler)
        try await recorder.expectEnd(code)
        if code == nil { try Self.checkLarge(try self.single(recorder)) }
      }
    case .clientCompressedStreaming:
      var first = Self.inputRequest(size: 27182)
      first.expectCompressed.value = true
      let refused = LegacyRecorder<Grpc_Testing_StreamingInputCallResponse>()
      plain.streamingInputCall(
        withRequestsWriter: GRXWriter(value: first),
        handler: refused.handler
      )
      try await refused.expectEnd(.invalidArgument)
      let recorder = LegacyRecorder<Grpc_Testing_StreamingInputCallResponse>()
      let requests = GRXWriter(values: [first, Self.inputRequest(size: 45904)] as [any Sendable])
      gzip.streamingInputCall(withRequestsWriter: requests, handler: recorder.handler)
      try await recorder.expectEnd(nil)
      let response = try self.single(recorder)
      try self.check(
        response.aggregatedPayloadSize == 73086,
        "aggregated size \(response.aggregatedPayloadSize)"
      )
    default:
      let recorder = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse>()
      plain.streamingOutputCall(
        with: Self.serverCompressedStreamingRequest(),
        eventHandler: recorder.eventHandler
      )
      try await recorder.expectEnd(nil)
      let sizes = recorder.responses.map(\.payload.body.count)
      try self.check(sizes == [31415, 92653], "response sizes \(sizes)")
    }
  }

  private func single<Response>(_ recorder: LegacyRecorder<Response>) throws -> Response {
    let responses = recorder.responses
    try self.check(responses.count == 1, "expected 1 response, got \(responses.count)")
    return responses[0]
  }
}
