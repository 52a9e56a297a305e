internal import Foundation
internal import GRPCCalls
internal import GRPCCore
internal import GRPCProtoCalls

/// The standard cases through the generated client's async/await methods.
extension InteropClient {
  var service: TestService {
    TestService(host: self.target, callOptions: self.callOptions, channelPool: self.channelPool)
  }

  func runAsync(_ testCase: InteropTestCase) async throws {
    let service = self.service
    switch testCase {
    case .emptyUnary:
      _ = try await service.emptyCall(Grpc_Testing_Empty())
    case .largeUnary:
      try Self.checkLarge(try await service.unaryCall(Self.largeRequest()))
    case .clientStreaming:
      let response = try await service.streamingInputCall { writer in
        try await writer.write(contentsOf: [27182, 8, 1828, 45904].map(Self.inputRequest(size:)))
      }
      try self.check(
        response.aggregatedPayloadSize == 74922,
        "aggregated size \(response.aggregatedPayloadSize)"
      )
    case .serverStreaming:
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = Self.pingPongResponseSizes.map(Self.parameters(size:))
      let sizes = try await service.streamingOutputCall(request) { try await Self.sizes(of: $0) }
      try self.check(sizes == Self.pingPongResponseSizes.map(Int.init), "response sizes \(sizes)")
    case .pingPong:
      try await self.asyncPingPong(service)
    case .emptyStream:
      let sizes = try await service.fullDuplexCall { _ in
      } body: {
        try await Self.sizes(of: $0)
      }
      try self.check(sizes.isEmpty, "expected no responses, got \(sizes.count)")
    case .cancelAfterBegin:
      let task = Task {
        // The cancel ends the sleep.
        try await service.streamingInputCall { _ in try await Task.sleep(for: .seconds(300)) }
      }
      task.cancel()
      try await Self.expect(.cancelled) { _ = try await task.value }
    case .cancelAfterFirstResponse:
      try await self.asyncCancelAfterFirstResponse(service)
    case .timeoutOnSleepingServer:
      var options = self.callOptions
      options.timeout = 0.001
      try await Self.expect(.deadlineExceeded) {
        _ = try await service.fullDuplexCall(callOptions: options) { writer in
          var request = Grpc_Testing_StreamingOutputCallRequest()
          request.payload.body = Data(count: 27182)
          try await writer.write(request)
          try await Task.sleep(for: .seconds(30))  // the request side stays open
        } body: {
          try await Self.sizes(of: $0)
        }
      }
    case .customMetadata:
      try await self.asyncCustomMetadata(service)
    case .statusCodeAndMessage, .specialStatusMessage:
      let message = testCase == .statusCodeAndMessage ? "test status message" : Self.specialMessage
      var request = Grpc_Testing_SimpleRequest()
      request.responseStatus = Self.status(message)
      try await Self.expect(.unknown, message: message) { _ = try await service.unaryCall(request) }
      if testCase == .statusCodeAndMessage {
        var request = Grpc_Testing_StreamingOutputCallRequest()
        request.responseStatus = Self.status(message)
        let streaming = request
        try await Self.expect(.unknown, message: message) {
          _ = try await service.fullDuplexCall {
            try await $0.write(streaming)
          } body: {
            try await Self.sizes(of: $0)
          }
        }
      }
    case .unimplementedMethod:
      try await Self.expect(.unimplemented) {
        _ = try await service.unimplementedCall(Grpc_Testing_Empty())
      }
    case .unimplementedService:
      let other = UnimplementedService(
        host: self.target,
        callOptions: self.callOptions,
        channelPool: self.channelPool
      )
      try await Self.expect(.unimplemented) {
        _ = try await other.unimplementedCall(Grpc_Testing_Empty())
      }
    case .clientCompressedUnary, .serverCompressedUnary, .clientCompressedStreaming,
      .serverCompressedStreaming:
      try await self.asyncCompression(testCase, service)
    case .richErrorDetails:
      try await self.asyncRichErrorDetails(service)
    case .health:
      try await self.health(callback: false)
    }
  }

  private func asyncPingPong(_ service: TestService) async throws {
    // Each ping goes out once the previous pong came back.
    let (pongs, pongSeen) = AsyncStream.makeStream(of: Void.self)
    let sizes = try await service.fullDuplexCall { writer in
      var seen = pongs.makeAsyncIterator()
      for (index, (requestSize, responseSize)) in zip(
        Self.pingPongRequestSizes,
        Self.pingPongResponseSizes
      ).enumerated() {
        if index > 0 { await seen.next() }
        var request = Grpc_Testing_StreamingOutputCallRequest()
        request.responseParameters = [Self.parameters(size: responseSize)]
        request.payload.body = Data(count: Int(requestSize))
        try await writer.write(request)
      }
    } body: { responses in
      var sizes: [Int] = []
      for try await response in responses {
        sizes.append(response.payload.body.count)
        pongSeen.yield()
      }
      return sizes
    }
    try self.check(sizes == Self.pingPongResponseSizes.map(Int.init), "pong sizes \(sizes)")
  }

  private func asyncCancelAfterFirstResponse(_ service: TestService) async throws {
    let (first, firstSeen) = AsyncStream.makeStream(of: Void.self)
    let task = Task {
      // A call that ends before its first response (nothing listening) ends the wait too.
      defer { firstSeen.finish() }
      try await service.fullDuplexCall { writer in
        var request = Grpc_Testing_StreamingOutputCallRequest()
        request.responseParameters = [Self.parameters(size: 31415)]
        request.payload.body = Data(count: 27182)
        try await writer.write(request)
        // The cancel after the first response ends the sleep, however long that response takes.
        try await Task.sleep(for: .seconds(300))
      } body: { responses in
        for try await _ in responses { firstSeen.yield() }
      }
    }
    var iterator = first.makeAsyncIterator()
    guard await iterator.next() != nil else {
      try await task.value
      throw InteropCaseFailure("the call ended before its first response")
    }
    task.cancel()
    try await Self.expect(.cancelled) { try await task.value }
  }

  private func asyncCustomMetadata(_ service: TestService) async throws {
    var options = self.callOptions
    options.initialMetadata.addString(
      "test_initial_metadata_value",
      forKey: "x-grpc-test-echo-initial"
    )
    options.initialMetadata.addBinary([0xAB, 0xAB, 0xAB], forKey: "x-grpc-test-echo-trailing-bin")
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = [Self.parameters(size: 314_159)]
    request.payload.body = Data(count: 271_828)
    let streaming = request
    // The unary method, read as a stream so that its headers and trailers are at hand.
    let unary = try await service.serverStreaming(
      method: "UnaryCall",
      request: Self.largeRequest(),
      responseType: Grpc_Testing_SimpleResponse.self,
      callOptions: options
    ) { responses in
      for try await _ in responses {}
      return (responses.initialMetadata, responses.trailingMetadata)
    }
    let duplex = try await service.fullDuplexCall(callOptions: options) {
      try await $0.write(streaming)
    } body: {
      responses in
      for try await _ in responses {}
      return (responses.initialMetadata, responses.trailingMetadata)
    }
    for (method, (headers, trailers)) in [("UnaryCall", unary), ("FullDuplexCall", duplex)] {
      let initial = headers?[stringValues: "x-grpc-test-echo-initial"].first { _ in true }
      try self.check(
        initial == "test_initial_metadata_value",
        "\(method): initial echo \(initial.debugDescription)"
      )
      let trailing = trailers?[binaryValues: "x-grpc-test-echo-trailing-bin"].first { _ in true }
      try self.check(
        trailing == [0xAB, 0xAB, 0xAB],
        "\(method): trailing echo \(trailing.debugDescription)"
      )
    }
  }

  private func asyncCompression(_ testCase: InteropTestCase, _ service: TestService) async throws {
    var gzip = self.callOptions
    gzip.compressionAlgorithm = .gzip
    switch testCase {
    case .clientCompressedUnary:
      var probe = Self.largeRequest()
      probe.expectCompressed.value = true
      try await Self.expect(.invalidArgument) { _ = try await service.unaryCall(probe) }
      try Self.checkLarge(try await service.unaryCall(probe, callOptions: gzip))
      try Self.checkLarge(try await service.unaryCall(Self.largeRequest()))
    case .serverCompressedUnary:
      for compressed in [true, false] {
        var request = Self.largeRequest()
        request.responseCompressed.value = compressed
        try Self.checkLarge(try await service.unaryCall(request))
      }
    case .clientCompressedStreaming:
      var probe = Self.inputRequest(size: 27182)
      probe.expectCompressed.value = true
      try await Self.expect(.invalidArgument) {
        _ = try await service.streamingInputCall { try await $0.write(probe) }
      }
      // Compressed too (compression is per channel), so it does not ask the server to check.
      let second = Self.inputRequest(size: 45904)
      let response = try await service.streamingInputCall(callOptions: gzip) { writer in
        try await writer.write(contentsOf: [probe, second])
      }
      try self.check(
        response.aggregatedPayloadSize == 73086,
        "aggregated size \(response.aggregatedPayloadSize)"
      )
    default:
      let request = Self.serverCompressedStreamingRequest()
      let sizes = try await service.streamingOutputCall(request) { try await Self.sizes(of: $0) }
      try self.check(sizes == [31415, 92653], "response sizes \(sizes)")
    }
  }

  // MARK: Helpers shared by every face

  static let specialMessage = "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n"

  static func largeRequest() -> Grpc_Testing_SimpleRequest {
    var request = Grpc_Testing_SimpleRequest()
    request.responseSize = 314_159
    request.payload.body = Data(count: 271_828)
    return request
  }

  static func checkLarge(_ response: Grpc_Testing_SimpleResponse) throws {
    guard response.payload.body == Data(count: 314_159) else {
      throw InteropCaseFailure(
        "expected 314159 zero bytes, got \(response.payload.body.count) bytes"
      )
    }
  }

  static func inputRequest(size: Int) -> Grpc_Testing_StreamingInputCallRequest {
    var request = Grpc_Testing_StreamingInputCallRequest()
    request.payload.body = Data(count: size)
    return request
  }

  static func status(_ message: String) -> Grpc_Testing_EchoStatus {
    var status = Grpc_Testing_EchoStatus()
    status.code = 2
    status.message = message
    return status
  }

  static func sizes(
    of responses: GRPCResponseStream<Grpc_Testing_StreamingOutputCallResponse>
  ) async throws -> [Int] {
    var sizes: [Int] = []
    for try await response in responses {
      sizes.append(response.payload.body.count)
    }
    return sizes
  }

  /// Runs `body`, which must fail with `code` (and `message`, if given).
  static func expect(
    _ code: RPCError.Code,
    message: String? = nil,
    _ body: () async throws -> Void
  ) async throws {
    do {
      try await body()
    } catch let error as GRPCError {
      guard error.code == code else {
        throw InteropCaseFailure("expected status \(code), got \(error)")
      }
      if let message, error.message != message {
        throw InteropCaseFailure(
          "expected message \(message.debugDescription), got \(error.message.debugDescription)"
        )
      }
      return
    }
    throw InteropCaseFailure("expected status \(code), the call succeeded")
  }
}
