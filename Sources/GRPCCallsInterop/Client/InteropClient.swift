internal import Foundation
public import GRPCCalls
internal import GRPCCore
internal import SwiftProtobuf

/// Runs the interop cases against a server through the library: the generated client's
/// callback or async methods, or `GRPCCall2` directly.
public struct InteropClient: Sendable {
  /// The server, `host:port`.
  public var target: String
  /// The options every call starts from.
  public var callOptions: GRPCCallOptions
  /// The pool calls take channels from.
  public var channelPool: GRPCChannelPool

  /// Creates a client for `target` with `callOptions` (plaintext by default).
  public init(
    target: String,
    callOptions: GRPCCallOptions? = nil,
    channelPool: GRPCChannelPool = .shared
  ) {
    self.target = target
    self.callOptions =
      callOptions
      ?? {
        var options = GRPCCallOptions()
        options.transportType = .insecure
        return options
      }()
    self.channelPool = channelPool
  }

  /// Which face of the library the cases run through.
  public enum API: String, CaseIterable, Sendable {
    /// The generated `TestService` client's callback methods (L38's proto calls).
    case generated
    /// The generated client's async/await methods.
    case async
    /// `GRPCCall2` with serialized bytes: the raw call API.
    case raw
    /// The generated client's v1 methods (GRPCLegacy: GRX writers, `GRPCProtoCall`).
    case legacy
  }

  /// Runs one case through `api`; throws ``InteropCaseFailure`` (or the call's error) when it
  /// fails.
  public func run(_ testCase: InteropTestCase, api: API = .generated) async throws {
    switch api {
    case .generated: try await self.runGenerated(testCase)
    case .async: try await self.runAsync(testCase)
    case .raw: try await self.runRaw(testCase)
    case .legacy: try await self.runLegacy(testCase)
    }
  }

  private func runRaw(_ testCase: InteropTestCase) async throws {
    switch testCase {
    case .emptyUnary: try await self.emptyUnary()
    case .largeUnary: try await self.largeUnary()
    case .clientStreaming: try await self.clientStreaming()
    case .serverStreaming: try await self.serverStreaming()
    case .pingPong: try await self.pingPong()
    case .emptyStream: try await self.emptyStream()
    case .cancelAfterBegin: try await self.cancelAfterBegin()
    case .cancelAfterFirstResponse: try await self.cancelAfterFirstResponse()
    case .timeoutOnSleepingServer: try await self.timeoutOnSleepingServer()
    case .customMetadata: try await self.customMetadata()
    case .statusCodeAndMessage: try await self.statusCodeAndMessage()
    case .specialStatusMessage: try await self.specialStatusMessage()
    case .unimplementedMethod: try await self.unimplemented(service: "grpc.testing.TestService")
    case .unimplementedService:
      try await self.unimplemented(service: "grpc.testing.UnimplementedService")
    case .clientCompressedUnary: try await self.clientCompressedUnary()
    case .serverCompressedUnary: try await self.serverCompressedUnary()
    case .clientCompressedStreaming: try await self.clientCompressedStreaming()
    case .serverCompressedStreaming: try await self.serverCompressedStreaming()
    case .richErrorDetails: try await self.richErrorDetails()
    case .health: try await self.rawHealthCheck()
    }
  }

  /// Makes a call to `service/method` with a fresh recorder.
  public func makeCall(
    _ method: String,
    service: String = "grpc.testing.TestService",
    options: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default,
    recorder: CallRecorder = CallRecorder()
  ) throws -> (GRPCCall2, CallRecorder) {
    let request = try GRPCRequestOptions(
      host: self.target,
      path: "/\(service)/\(method)",
      safety: safety
    )
    let call = GRPCCall2(
      requestOptions: request,
      responseHandler: recorder,
      callOptions: options ?? self.callOptions,
      channelPool: self.channelPool
    )
    return (call, recorder)
  }
}

extension InteropClient {
  /// Waits for the close and checks it carries `code` (nil: success).
  @discardableResult
  func expectClose(
    _ recorder: CallRecorder,
    code expected: RPCError.Code?,
    message: String? = nil
  ) async throws -> CallRecorder.Close {
    guard let close = await recorder.waitForClose() else {
      throw InteropCaseFailure("the call did not close within \(Int(CloseWait.seconds)) s")
    }
    switch (expected, close.error) {
    case (nil, nil):
      break
    case (nil, let error?):
      throw error
    case (let code?, nil):
      throw InteropCaseFailure("expected status \(code), the call succeeded")
    case (let code?, let error?):
      guard error.code == code else {
        throw InteropCaseFailure("expected status \(code), got \(error)")
      }
      if let message, error.message != message {
        throw InteropCaseFailure(
          "expected message \(message.debugDescription), got \(error.message.debugDescription)"
        )
      }
    }
    guard recorder.closeCount == 1, recorder.deliveryContractHeld else {
      throw InteropCaseFailure("callbacks broke the delivery contract: \(recorder.events)")
    }
    return close
  }

  func check(_ condition: Bool, _ description: @autoclosure () -> String) throws {
    if !condition { throw InteropCaseFailure(description()) }
  }

  static func bytes(_ message: some SwiftProtobuf.Message) throws -> Data {
    try message.serializedData()
  }

  static func decode<M: SwiftProtobuf.Message>(_ type: M.Type, _ data: Data) throws -> M {
    try M(serializedBytes: data)
  }
}
