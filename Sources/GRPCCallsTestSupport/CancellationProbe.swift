public import Foundation
public import GRPCCalls
internal import GRPCCallsInterop
public import GRPCCore
internal import GRPCLegacy
internal import GRPCProtoCalls
internal import SwiftProtobuf

/// One cancelled streaming call and what it must look like: RST_STREAM(CANCEL) on the wire with
/// no END_STREAM before it, and a server whose handler saw a cancellation, never a complete
/// request stream (gRPC's HTTP/2 protocol; grpc-go and gRPC core clients do the same).
///
/// The call sends one request, waits until `arrived` says the server has it, and is then
/// cancelled by ``trigger``. Used by the in-process test and by `grpc-calls cancellation`,
/// which runs it against grpcio and grpc-go and reads their own records.
public struct CancellationProbe: Sendable {
  /// How the call is cancelled.
  public enum Trigger: String, CaseIterable, Sendable {
    /// `GRPCCall2.cancel()`.
    case cancel
    /// Cancelling the task of an async-face call.
    case task
    /// The call's deadline.
    case deadline
    /// `GRPCProtoCall.cancel()` on the v1 face (GRPCLegacy).
    case legacy
    /// An interceptor cancelling the rest of its chain on its own (`cancelNextInterceptor()`).
    case interceptor

    /// The code the call must close with.
    public var expectedCode: RPCError.Code {
      self == .deadline ? .deadlineExceeded : .cancelled
    }
  }

  /// The streaming methods of the interop TestService a probe cancels.
  public static let methods = ["StreamingInputCall", "FullDuplexCall"]

  public var trigger: Trigger
  /// `StreamingInputCall` or `FullDuplexCall`.
  public var method: String
  /// Sent as `InteropServerRecorder.testIDKey`, which names the call in the server's record.
  public var testID: String
  /// The call's deadline with ``Trigger/deadline``, in seconds: long enough for the request to
  /// reach the server on a busy machine.
  public var deadline: TimeInterval

  public init(
    trigger: Trigger,
    method: String,
    testID: String = UUID().uuidString,
    deadline: TimeInterval = 5
  ) {
    self.trigger = trigger
    self.method = method
    self.testID = testID
    self.deadline = deadline
  }

  /// Makes the call to `target` and cancels it once `arrived` returns; returns the error the
  /// call closed with (`nil` if it succeeded).
  ///
  /// With ``Trigger/deadline`` the deadline alone ends the call; `arrived` is not awaited.
  public func run(
    target: String,
    options: GRPCCallOptions,
    pool: GRPCChannelPool,
    arrived: @escaping @Sendable () async -> Void
  ) async throws -> GRPCError? {
    var options = options
    options.initialMetadata.addString(self.testID, forKey: InteropServerRecorder.testIDKey)
    if self.trigger == .deadline {
      options.timeout = self.deadline
    }
    switch self.trigger {
    case .task:
      return try await self.runAsync(
        service: TestService(host: target, callOptions: options, channelPool: pool),
        arrived: arrived
      )
    case .legacy:
      return try await self.runLegacy(
        service: TestService(host: target, callOptions: options, channelPool: pool),
        arrived: arrived
      )
    case .cancel, .deadline, .interceptor:
      let canceller = CancellingInterceptorFactory()
      if self.trigger == .interceptor {
        options.interceptorFactories.append(canceller)
      }
      let client = InteropClient(target: target, callOptions: options, channelPool: pool)
      let (call, recorder) = try client.makeCall(self.method)
      call.start()
      call.writeData(try self.request.serializedData())
      switch self.trigger {
      case .cancel:
        await arrived()
        call.cancel()
      case .interceptor:
        await arrived()
        canceller.cancel()
      default:
        break
      }
      return await recorder.waitForClose()?.error
    }
  }

  /// What is wrong with the cancelled call: the error it closed with, the client's HTTP/2 frames
  /// on its connection and the server's record of how the request stream ended ("cancelled",
  /// "deadline", "complete", …; `nil` when the server recorded nothing). Empty when all is well.
  public func problems(
    error: GRPCError?,
    frames: [RecordedHTTP2Frame],
    serverOutcome: String?
  ) -> [String] {
    var problems: [String] = []
    if error?.code != self.trigger.expectedCode {
      problems.append(
        "closed with \(error.map { "\($0)" } ?? "success"), not \(self.trigger.expectedCode)"
      )
    }
    let resets = frames.filter(\.isReset)
    if !resets.allSatisfy({ $0.errorCode == RecordedHTTP2Frame.cancel }) {
      problems.append("a reset other than CANCEL")
    }
    // A deadline is the server's too (grpc-timeout): when its own ends the stream first, no
    // reset is owed.
    if self.trigger != .deadline, resets.count != 1 {
      problems.append("\(resets.count) resets, not 1")
    }
    if frames.contains(where: \.endsStream) {
      problems.append("the client half-closed the cancelled call (END_STREAM)")
    }
    // A server cannot tell a passed deadline from a reset that came at the same moment.
    let accepted = self.trigger == .deadline ? ["cancelled", "deadline"] : ["cancelled"]
    if !accepted.contains(serverOutcome ?? "") {
      problems.append(
        "the server's handler recorded \(serverOutcome.map { "'\($0)'" } ?? "nothing"), not \(accepted.joined(separator: " or "))"
      )
    }
    if !problems.isEmpty {
      problems.append("client frames: \(frames)")
    }
    return problems
  }

  private var isDuplex: Bool { self.method == "FullDuplexCall" }

  /// The one request: FullDuplexCall asks for one small response.
  private var request: any SwiftProtobuf.Message {
    self.isDuplex
      ? InteropRequests.stream(count: 1, size: 8) : Grpc_Testing_StreamingInputCallRequest()
  }

  private func runAsync(
    service: TestService,
    arrived: @escaping @Sendable () async -> Void
  ) async throws -> GRPCError? {
    let duplex = self.isDuplex
    let task = Task {
      if duplex {
        try await service.fullDuplexCall(requests: { writer in
          try await writer.write(InteropRequests.stream(count: 1, size: 8))
          try await Task.sleep(for: .seconds(3600))
        }) { responses in
          for try await _ in responses {}
        }
      } else {
        _ = try await service.streamingInputCall { writer in
          try await writer.write(Grpc_Testing_StreamingInputCallRequest())
          try await Task.sleep(for: .seconds(3600))
        }
      }
    }
    await arrived()
    task.cancel()
    switch await task.result {
    case .success: return nil
    case .failure(let error): return error as? GRPCError
    }
  }

  private func runLegacy(
    service: TestService,
    arrived: @escaping @Sendable () async -> Void
  ) async throws -> GRPCError? {
    let pipe = GRXBufferedPipe()
    let ended = LockedValue<(ended: Bool, error: GRPCError?)>((false, nil))
    let call: GRPCProtoCall
    if self.isDuplex {
      call = service.rpcToFullDuplexCall(withRequestsWriter: pipe) { done, _, error in
        if done { ended.withLock { $0 = (true, error) } }
      }
    } else {
      call = service.rpcToStreamingInputCall(withRequestsWriter: pipe) { _, error in
        ended.withLock { $0 = (true, error) }
      }
    }
    call.start()
    pipe.writeValue(self.request)
    await arrived()
    call.cancel()
    let end = await eventually { ended.withLock { $0.ended ? $0 : nil } }
    guard let end else {
      throw TestSupportFailure(
        description: "the v1 call did not end within \(Int(CloseWait.seconds)) s of its cancel"
      )
    }
    return end.error
  }
}

/// Makes one interceptor that, when told, cancels the rest of its chain and closes the call
/// towards the application, as an interceptor that gives up on a call does.
private final class CancellingInterceptorFactory: GRPCInterceptorFactory {
  private let made = LockedValue<GRPCInterceptor?>(nil)

  func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor? {
    let interceptor = GRPCInterceptor(manager: manager)
    self.made.withLock { $0 = interceptor }
    return interceptor
  }

  /// Cancels from the interceptor's own queue, where its events run.
  func cancel() {
    guard let interceptor = self.made.withLock({ $0 }) else { return }
    interceptor.dispatchQueue.async {
      interceptor.manager.cancelNextInterceptor()
      interceptor.manager.forwardPreviousInterceptorClose(
        trailingMetadata: nil,
        error: GRPCError(code: .cancelled, message: "Cancelled by the interceptor")
      )
      interceptor.manager.shutDown()
    }
  }
}
