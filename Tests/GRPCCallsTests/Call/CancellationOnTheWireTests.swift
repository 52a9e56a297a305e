import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCProtoCalls
import SwiftProtobuf
import Testing

/// A cancelled call is a reset on the wire, never an end: RST_STREAM(CANCEL) and no END_STREAM
/// before it, so the server's handler sees a cancellation and not a complete request stream
/// (gRPC's HTTP/2 protocol; grpc-go and gRPC core clients do the same). Read back from the
/// client's own bytes through a recording proxy, and from the server's own record of how the
/// request stream ended.
@Suite("Cancellation on the wire")
struct CancellationOnTheWireTests {
  @Test(
    "cancel, task cancellation and a deadline reset the stream with CANCEL and no END_STREAM",
    arguments: CancelTrigger.allCases,
    ["StreamingInputCall", "FullDuplexCall"]
  )
  func resetNotEnd(trigger: CancelTrigger, method: String) async throws {
    try await withTestServer { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port, recordingClientBytes: true)
      defer { proxy.close() }
      let testID = UUID().uuidString
      let error = try await trigger.cancel(method: method, testID: testID, target: "127.0.0.1:\(proxy.port)", server: server)
      #expect(error?.code == trigger.expectedCode, "\(String(describing: error))")

      // The server's record comes once its handler has seen the cancel. A deadline may pass on
      // a busy machine before the handler read anything: then only the wire is checked.
      let read = server.recorder.readRequest(testID: testID)
      let end = read ? await eventually { server.recorder.requestStreamEnd(testID: testID) } : "cancelled"
      #expect(read || trigger == .deadline, "the server's handler never read the request")
      let frames = proxy.clientFrames
      let resets = frames.filter(\.isReset)
      // A deadline is the server's too (grpc-timeout): when its own ends the stream first, no
      // reset is owed.
      #expect(resets.allSatisfy { $0.errorCode == RecordedHTTP2Frame.cancel }, "\(frames)")
      #expect(trigger == .deadline || resets.count == 1, "\(frames)")
      #expect(end == "cancelled", "\(frames)")
      #expect(frames.filter(\.endsStream).isEmpty, "the client half-closed a cancelled call: \(frames)")
    }
  }
}

/// How a test cancels a streaming call that has sent one request and waits for more.
enum CancelTrigger: String, CaseIterable, Sendable {
  /// `GRPCCall2.cancel()`.
  case cancel
  /// Cancelling the task of an async-face call.
  case task
  /// The call's deadline.
  case deadline

  var expectedCode: RPCError.Code {
    self == .deadline ? .deadlineExceeded : .cancelled
  }

  /// Starts `method` on `target` with one request and cancels it once the server read it;
  /// returns the error the call closed with.
  func cancel(method: String, testID: String, target: String, server: TestServer) async throws -> GRPCError? {
    var options = server.options
    options.initialMetadata.addString(testID, forKey: InteropServerRecorder.testIDKey)
    if self == .deadline {
      // Long enough for the stream to reach the server on a busy machine, which the test waits
      // for before the deadline passes.
      options.timeout = 5
    }
    let request = InteropRequests.stream(count: 1, size: 8)
    // The handler is reading the request stream: the cancel can only end it one way.
    let arrived: @Sendable () async -> Void = {
      _ = await eventually { server.recorder.readRequest(testID: testID) ? true : nil }
    }
    if self == .task {
      let service = TestService(host: target, callOptions: options, channelPool: server.pool)
      let task = Task {
        if method == "FullDuplexCall" {
          try await service.fullDuplexCall(requests: { writer in
            try await writer.write(request)
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
    let client = InteropClient(target: target, callOptions: options, channelPool: server.pool)
    let (call, recorder) = try client.makeCall(method)
    call.start()
    call.writeData(
      method == "FullDuplexCall" ? try request.serializedData() : try Grpc_Testing_StreamingInputCallRequest().serializedData()
    )
    if self == .cancel {
      await arrived()
      call.cancel()
    }
    return await recorder.waitForClose()?.error
  }
}
