internal import Foundation
internal import GRPCCalls
internal import GRPCCore
internal import GRPCLegacy
internal import GRPCProtoCalls
internal import GRPCProtobuf

/// grpc-calls' own case `rich_error_details` (``RichErrorCase``) on each face: a unary call, and
/// a server-streaming call that fails after one response, each end with the server's
/// `google.rpc.Status` and its typed details.
extension InteropClient {
  /// The call options that ask the server for ``RichErrorCase/status``.
  private var richErrorOptions: GRPCCallOptions {
    var options = self.callOptions
    options.initialMetadata.addString("1", forKey: RichErrorCase.askKey)
    return options
  }

  /// The streaming request: one response before the status.
  private static var richStreamingRequest: Grpc_Testing_StreamingOutputCallRequest {
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = [Self.parameters(size: 8)]
    return request
  }

  /// Checks that `status`, decoded from what `call` ended with, is ``RichErrorCase/status``.
  private static func checkRichStatus(
    _ status: GoogleRPCStatus?,
    code: RPCError.Code?,
    message: String?,
    _ call: String
  ) throws {
    guard let status else {
      throw InteropCaseFailure(
        "\(call): no google.rpc.Status in the trailers (status \(String(describing: code)))"
      )
    }
    guard code == .resourceExhausted, message == RichErrorCase.status.message,
      status == RichErrorCase.status
    else {
      throw InteropCaseFailure(
        "\(call): expected \(RichErrorCase.status), got \(status) (status \(String(describing: code)) \(message ?? ""))"
      )
    }
  }

  private static func checkRichStatus(_ error: GRPCError?, _ call: String) throws {
    guard let error else {
      throw InteropCaseFailure("\(call): expected an error status, the call succeeded")
    }
    try Self.checkRichStatus(
      try error.googleRPCStatus(),
      code: error.code,
      message: error.message,
      call
    )
  }

  /// `GRPCCall2` with serialized bytes.
  func richErrorDetails() async throws {
    let (unary, unaryRecorder) = try self.makeCall("UnaryCall", options: self.richErrorOptions)
    unary.start()
    unary.writeData(try Self.bytes(Grpc_Testing_SimpleRequest()))
    unary.finish()
    try Self.checkRichStatus(
      try await self.expectClose(unaryRecorder, code: .resourceExhausted).error,
      "UnaryCall"
    )

    let (streaming, recorder) = try self.makeCall(
      "StreamingOutputCall",
      options: self.richErrorOptions
    )
    streaming.start()
    streaming.writeData(try Self.bytes(Self.richStreamingRequest))
    streaming.finish()
    try Self.checkRichStatus(
      try await self.expectClose(recorder, code: .resourceExhausted).error,
      "StreamingOutputCall"
    )
    try self.check(
      recorder.messages.count == 1,
      "StreamingOutputCall: expected 1 response, got \(recorder.messages.count)"
    )
    try await self.richErrorRetry()
  }

  /// A retry policy for the status waits as long as its `RetryInfo` asks before it tries again.
  private func richErrorRetry() async throws {
    var options = self.richErrorOptions
    options.executionPolicy = .retry(
      GRPCRetryPolicy(
        maxAttempts: 2,
        initialBackoff: 0.01,
        maxBackoff: 0.02,
        retryableStatusCodes: [.resourceExhausted]
      )
    )
    let started = ContinuousClock.now
    let (call, recorder) = try self.makeCall("UnaryCall", options: options)
    call.start()
    call.writeData(try Self.bytes(Grpc_Testing_SimpleRequest()))
    call.finish()
    try Self.checkRichStatus(
      try await self.expectClose(recorder, code: .resourceExhausted).error,
      "UnaryCall, retried"
    )
    let waited = ContinuousClock.now - started
    let asked = RichErrorCase.retryDelay
    try self.check(
      waited >= asked,
      "UnaryCall, retried: the retry came after \(waited), not the \(asked) RetryInfo asks for"
    )
  }

  /// The generated client's callback methods.
  func generatedRichErrorDetails(_ service: TestService) async throws {
    let unary = ProtoCallRecorder()
    service.unaryCall(
      message: Grpc_Testing_SimpleRequest(),
      responseHandler: unary,
      callOptions: self.richErrorOptions
    ).start()
    try Self.checkRichStatus(try await unary.expectClose(.resourceExhausted).error, "UnaryCall")
    let streaming = ProtoCallRecorder()
    service.streamingOutputCall(
      message: Self.richStreamingRequest,
      responseHandler: streaming,
      callOptions: self.richErrorOptions
    )
    .start()
    try Self.checkRichStatus(
      try await streaming.expectClose(.resourceExhausted).error,
      "StreamingOutputCall"
    )
    try self.check(
      streaming.messages.count == 1,
      "StreamingOutputCall: expected 1 response, got \(streaming.messages.count)"
    )
  }

  /// The generated client's async methods: the thrown `GRPCError`.
  func asyncRichErrorDetails(_ service: TestService) async throws {
    do {
      _ = try await service.unaryCall(
        Grpc_Testing_SimpleRequest(),
        callOptions: self.richErrorOptions
      )
      try Self.checkRichStatus(nil, "UnaryCall")
    } catch let error as GRPCError {
      try Self.checkRichStatus(error, "UnaryCall")
    }
    let received = LockedValue(0)
    do {
      try await service.streamingOutputCall(
        Self.richStreamingRequest,
        callOptions: self.richErrorOptions
      ) { responses in
        for try await _ in responses { received.withLock { $0 += 1 } }
      }
      try Self.checkRichStatus(nil, "StreamingOutputCall")
    } catch let error as GRPCError {
      try Self.checkRichStatus(error, "StreamingOutputCall")
    }
    let count = received.withLock { $0 }
    try self.check(count == 1, "StreamingOutputCall: expected 1 response, got \(count)")
  }

  /// The v1 methods, read as gRPC Objective-C code reads errors: through `NSError.userInfo`.
  func legacyRichErrorDetails(_ service: TestService) async throws {
    let unaryRecorder = LegacyRecorder<Grpc_Testing_SimpleResponse>()
    let unary = service.rpcToUnaryCall(
      with: Grpc_Testing_SimpleRequest(),
      handler: unaryRecorder.handler
    )
    let streamingRecorder = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse>()
    let streaming = service.rpcToStreamingOutputCall(
      with: Self.richStreamingRequest,
      eventHandler: streamingRecorder.eventHandler
    )
    for call in [unary, streaming] {
      call.requestHeaders.addString("1", forKey: RichErrorCase.askKey)
      call.start()
    }
    try await Self.checkLegacyRichStatus(unaryRecorder, "UnaryCall")
    try await Self.checkLegacyRichStatus(streamingRecorder, "StreamingOutputCall")
    try self.check(
      streamingRecorder.responses.count == 1,
      "StreamingOutputCall: expected 1 response, got \(streamingRecorder.responses.count)"
    )
  }

  /// Waits for the v1 call's end and checks its error, bridged to `NSError`, as
  /// ``checkRichStatus(_:code:message:_:)`` does.
  private static func checkLegacyRichStatus<Response>(
    _ recorder: LegacyRecorder<Response>,
    _ call: String
  ) async throws {
    try await recorder.expectEnd(.resourceExhausted)
    let error = recorder.error.map { $0 as NSError }
    try Self.checkRichStatus(
      try error?.googleRPCStatus(),
      code: recorder.error?.code,
      message: error?.localizedDescription,
      call
    )
  }
}
