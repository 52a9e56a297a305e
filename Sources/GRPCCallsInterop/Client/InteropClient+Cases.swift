internal import Foundation
internal import GRPCCalls
internal import GRPCCore

/// The standard cases, as gRPC's interop test descriptions define them.
extension InteropClient {
  static let pingPongRequestSizes: [Int32] = [27182, 8, 1828, 45904]
  static let pingPongResponseSizes: [Int32] = [31415, 9, 2653, 58979]

  func emptyUnary() async throws {
    let (call, recorder) = try self.makeCall("EmptyCall")
    call.start()
    call.writeData(try Self.bytes(Grpc_Testing_Empty()))
    call.finish()
    try await self.expectClose(recorder, code: nil)
    try self.check(
      recorder.messages.count == 1,
      "expected 1 response, got \(recorder.messages.count)"
    )
    _ = try Self.decode(Grpc_Testing_Empty.self, recorder.messages[0])
  }

  func largeUnary() async throws {
    let (call, recorder) = try self.makeCall("UnaryCall")
    call.start()
    call.writeData(try Self.bytes(Self.largeRequest()))
    call.finish()
    try await self.expectClose(recorder, code: nil)
    try self.check(
      recorder.messages.count == 1,
      "expected 1 response, got \(recorder.messages.count)"
    )
    try Self.checkLarge(try Self.decode(Grpc_Testing_SimpleResponse.self, recorder.messages[0]))
  }

  func clientStreaming() async throws {
    let (call, recorder) = try self.makeCall("StreamingInputCall")
    call.start()
    for size in [27182, 8, 1828, 45904] {
      var request = Grpc_Testing_StreamingInputCallRequest()
      request.payload.body = Data(count: size)
      call.writeData(try Self.bytes(request))
    }
    call.finish()
    try await self.expectClose(recorder, code: nil)
    try self.check(
      recorder.messages.count == 1,
      "expected 1 response, got \(recorder.messages.count)"
    )
    let response = try Self.decode(
      Grpc_Testing_StreamingInputCallResponse.self,
      recorder.messages[0]
    )
    try self.check(
      response.aggregatedPayloadSize == 74922,
      "expected aggregated size 74922, got \(response.aggregatedPayloadSize)"
    )
  }

  func serverStreaming() async throws {
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = Self.pingPongResponseSizes.map(Self.parameters(size:))
    let (call, recorder) = try self.makeCall("StreamingOutputCall")
    call.start()
    call.writeData(try Self.bytes(request))
    call.finish()
    try await self.expectClose(recorder, code: nil)
    let sizes = try recorder.messages.map {
      try Self.decode(Grpc_Testing_StreamingOutputCallResponse.self, $0).payload.body.count
    }
    try self.check(
      sizes == Self.pingPongResponseSizes.map(Int.init),
      "expected response sizes \(Self.pingPongResponseSizes), got \(sizes)"
    )
  }

  func pingPong() async throws {
    let (call, recorder) = try self.makeCall("FullDuplexCall")
    call.start()
    for (index, (requestSize, responseSize)) in zip(
      Self.pingPongRequestSizes,
      Self.pingPongResponseSizes
    ).enumerated() {
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [Self.parameters(size: responseSize)]
      request.payload.body = Data(count: Int(requestSize))
      call.writeData(try Self.bytes(request))
      let arrived = await recorder.wait { $0.messages.count > index || $0.close != nil }
      try self.check(arrived && recorder.close == nil, "no response to ping \(index + 1)")
      let response = try Self.decode(
        Grpc_Testing_StreamingOutputCallResponse.self,
        recorder.messages[index]
      )
      try self.check(
        response.payload.body.count == Int(responseSize),
        "pong \(index + 1): expected \(responseSize) bytes, got \(response.payload.body.count)"
      )
    }
    call.finish()
    try await self.expectClose(recorder, code: nil)
    try self.check(
      recorder.messages.count == 4,
      "expected 4 responses, got \(recorder.messages.count)"
    )
  }

  func emptyStream() async throws {
    let (call, recorder) = try self.makeCall("FullDuplexCall")
    call.start()
    call.finish()
    try await self.expectClose(recorder, code: nil)
    try self.check(
      recorder.messages.isEmpty,
      "expected no responses, got \(recorder.messages.count)"
    )
  }

  func cancelAfterBegin() async throws {
    let (call, recorder) = try self.makeCall("StreamingInputCall")
    call.start()
    call.cancel()
    try await self.expectClose(recorder, code: .cancelled, message: "Canceled by app")
    try self.check(
      recorder.messages.isEmpty,
      "expected no responses, got \(recorder.messages.count)"
    )
  }

  func cancelAfterFirstResponse() async throws {
    let box = CallBox()
    let recorder = CallRecorder { _, index in
      if index == 0 { box.call?.cancel() }
    }
    let (call, _) = try self.makeCall("FullDuplexCall", recorder: recorder)
    box.call = call
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = [Self.parameters(size: 31415)]
    request.payload.body = Data(count: 27182)
    call.start()
    call.writeData(try Self.bytes(request))
    try await self.expectClose(recorder, code: .cancelled, message: "Canceled by app")
    try self.check(
      recorder.messages.count == 1,
      "expected 1 response, got \(recorder.messages.count)"
    )
  }

  func timeoutOnSleepingServer() async throws {
    var options = self.callOptions
    options.timeout = 0.001
    let (call, recorder) = try self.makeCall("FullDuplexCall", options: options)
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.payload.body = Data(count: 27182)
    call.start()
    call.writeData(try Self.bytes(request))
    try await self.expectClose(recorder, code: .deadlineExceeded)
    try self.check(
      recorder.messages.isEmpty,
      "expected no responses, got \(recorder.messages.count)"
    )
  }

  func customMetadata() async throws {
    var options = self.callOptions
    options.initialMetadata.addString(
      "test_initial_metadata_value",
      forKey: "x-grpc-test-echo-initial"
    )
    options.initialMetadata.addBinary([0xAB, 0xAB, 0xAB], forKey: "x-grpc-test-echo-trailing-bin")

    var unary = Grpc_Testing_SimpleRequest()
    unary.responseSize = 314_159
    unary.payload.body = Data(count: 271_828)
    var streaming = Grpc_Testing_StreamingOutputCallRequest()
    streaming.responseParameters = [Self.parameters(size: 314_159)]
    streaming.payload.body = Data(count: 271_828)

    for (method, request) in [
      ("UnaryCall", try Self.bytes(unary)), ("FullDuplexCall", try Self.bytes(streaming)),
    ] {
      let (call, recorder) = try self.makeCall(method, options: options)
      call.start()
      call.writeData(request)
      call.finish()
      let close = try await self.expectClose(recorder, code: nil)
      let initial = recorder.initialMetadata?[stringValues: "x-grpc-test-echo-initial"].first { _ in
        true
      }
      try self.check(
        initial == "test_initial_metadata_value",
        "\(method): initial metadata echo was \(initial.debugDescription)"
      )
      let trailing = close.trailers?[binaryValues: "x-grpc-test-echo-trailing-bin"].first { _ in
        true
      }
      try self.check(
        trailing == [0xAB, 0xAB, 0xAB],
        "\(method): trailing metadata echo was \(trailing.debugDescription)"
      )
    }
  }

  func statusCodeAndMessage() async throws {
    try await self.echoStatus(message: "test status message")
  }

  func specialStatusMessage() async throws {
    try await self.echoStatus(
      message: "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n",
      methods: ["UnaryCall"]
    )
  }

  func unimplemented(service: String) async throws {
    let (call, recorder) = try self.makeCall("UnimplementedCall", service: service)
    call.start()
    call.writeData(try Self.bytes(Grpc_Testing_Empty()))
    call.finish()
    try await self.expectClose(recorder, code: .unimplemented)
  }

  /// Asks the server for status 2 with `message`, on a unary and a streaming call.
  private func echoStatus(
    message: String,
    methods: [String] = ["UnaryCall", "FullDuplexCall"]
  ) async throws {
    var status = Grpc_Testing_EchoStatus()
    status.code = 2
    status.message = message
    var unary = Grpc_Testing_SimpleRequest()
    unary.responseStatus = status
    var streaming = Grpc_Testing_StreamingOutputCallRequest()
    streaming.responseStatus = status
    for method in methods {
      let (call, recorder) = try self.makeCall(method)
      call.start()
      call.writeData(method == "UnaryCall" ? try Self.bytes(unary) : try Self.bytes(streaming))
      call.finish()
      try await self.expectClose(recorder, code: .unknown, message: message)
    }
  }

  static func parameters(size: Int32) -> Grpc_Testing_ResponseParameters {
    var parameters = Grpc_Testing_ResponseParameters()
    parameters.size = size
    return parameters
  }
}
