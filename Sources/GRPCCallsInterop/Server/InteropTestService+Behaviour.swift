internal import Foundation
internal import GRPCCore
internal import GRPCProtobuf

extension InteropTestService {
  /// The metadata a response echoes back.
  struct Echo {
    var initial: Metadata = [:]
    var trailing: Metadata = [:]
  }

  static let echoInitialKey = "x-grpc-test-echo-initial"
  static let echoTrailingKey = "x-grpc-test-echo-trailing-bin"
  static let echoUserAgentKey = "x-grpc-test-echo-useragent"

  /// Records the RPC and works out what to echo.
  ///
  /// - Throws: UNAVAILABLE for an attempt that ``InteropServerRecorder/failAttemptsKey`` asks to
  ///   fail; UNAUTHENTICATED when the `authorization` is not the one
  ///   ``InteropServerRecorder/requiredAuthorizationKey`` names.
  func begin(_ metadata: Metadata, _ context: ServerContext) throws -> Echo {
    self.recorder.received(context, metadata: metadata)
    try self.recorder.health.apply(metadata)
    if let required = metadata[stringValues: InteropServerRecorder.requiredAuthorizationKey].first(
      where: { _ in true }),
      !metadata[stringValues: "authorization"].contains(required)
    {
      throw Self.failure(.unauthenticated, "The access token is not valid (any more)", metadata)
    }
    if let value = metadata[stringValues: InteropServerRecorder.failAttemptsKey].first(where: { _ in
      true
    }) {
      let parts = value.split(separator: "/", maxSplits: 1)
      if parts.count == 2, let failures = Int(parts[0]) {
        let attempt = self.recorder.countAttempt(String(parts[1]))
        if attempt <= failures {
          throw Self.failure(.unavailable, "attempt \(attempt) fails on purpose", metadata)
        }
      }
    }
    var echo = Echo()
    for value in metadata[stringValues: Self.echoInitialKey] {
      echo.initial.addString(value, forKey: Self.echoInitialKey)
    }
    for value in metadata[binaryValues: Self.echoTrailingKey] {
      echo.trailing.addBinary(value, forKey: Self.echoTrailingKey)
    }
    if metadata[Self.echoUserAgentKey].contains(where: { _ in true }) {
      for agent in metadata[stringValues: "user-agent"] {
        echo.initial.addString(agent, forKey: Self.echoUserAgentKey)
      }
    }
    return echo
  }

  /// A failure `begin` throws: with a rich status whose `RetryInfo` holds the delay that
  /// ``InteropServerRecorder/retryDelayKey`` asks for, if it does.
  private static func failure(
    _ code: RPCError.Code,
    _ message: String,
    _ metadata: Metadata
  ) -> any Error {
    guard
      let text = metadata[stringValues: InteropServerRecorder.retryDelayKey].first(where: { _ in
        true
      }),
      let milliseconds = Int64(text)
    else { return RPCError(code: code, message: message) }
    let details = [
      ErrorDetails.retryInfo(ErrorDetails.RetryInfo(delay: .milliseconds(milliseconds)))
    ]
    return GoogleRPCStatus(code: code, message: message, details: details)
  }

  /// The one request message of a unary-request method.
  static func single<Message>(
    _ messages: RPCAsyncSequence<Message, any Error>
  ) async throws
    -> Message
  {
    var iterator = messages.makeAsyncIterator()
    guard let message = try await iterator.next() else {
      throw RPCError(code: .invalidArgument, message: "Expected one request message, got none")
    }
    return message
  }

  /// Fails the RPC with the status the request asks for, if any.
  static func failIfAsked(_ status: Grpc_Testing_EchoStatus, trailers: Metadata) throws {
    guard status.code != 0 else { return }
    let code = Status.Code(rawValue: Int(status.code)).flatMap(RPCError.Code.init) ?? .unknown
    throw RPCError(code: code, message: status.message, metadata: trailers)
  }

  /// Fails the RPC with ``RichErrorCase/status`` when its metadata asks for it.
  static func failRichIfAsked(_ metadata: Metadata) throws {
    guard metadata[RichErrorCase.askKey].contains(where: { _ in true }) else { return }
    throw RichErrorCase.status
  }

  /// Fails with INVALID_ARGUMENT when the client should have compressed the request and did not.
  static func checkCompression(expected: Bool, _ metadata: Metadata) throws {
    guard expected else { return }
    let encoding = metadata[stringValues: "grpc-encoding"].first(where: { _ in true })
    guard let encoding, encoding != "identity" else {
      throw RPCError(code: .invalidArgument, message: "Expected a compressed request message")
    }
  }

  /// Writes one response per `response_parameters` entry, sleeping `interval_us` before each.
  ///
  /// A stream the client ends is recorded once (tests wait for that record): when a write
  /// fails, or when the RPC is seen cancelled. The second is needed because the transport may
  /// accept and drop writes after the client reset the stream. The handler writes on after a
  /// cancellation, as the transport also cancels RPCs when the server shuts down gracefully and
  /// those must complete.
  func respond(
    to request: Grpc_Testing_StreamingOutputCallRequest,
    with writer: RPCWriter<Grpc_Testing_StreamingOutputCallResponse>,
    context: ServerContext
  ) async throws {
    var recorded = false
    func recordEnd() {
      guard !recorded else { return }
      recorded = true
      self.recorder.streamEndedEarly()
    }
    do {
      for parameters in request.responseParameters {
        if parameters.intervalUs > 0 {
          try await Task.sleep(for: .microseconds(parameters.intervalUs))
        }
        var response = Grpc_Testing_StreamingOutputCallResponse()
        response.payload = Self.payload(size: parameters.size)
        try await writer.write(response)
        self.recorder.streamedResponseWritten()
        if context.cancellation.isCancelled {
          recordEnd()
        }
      }
      if !recorded {
        self.recorder.streamCompleted()
      }
    } catch {
      recordEnd()
      throw error
    }
  }

  /// A COMPRESSABLE payload of `size` zero bytes.
  static func payload(size: Int32) -> Grpc_Testing_Payload {
    var payload = Grpc_Testing_Payload()
    payload.type = .compressable
    payload.body = Data(count: max(0, Int(size)))
    return payload
  }
}
