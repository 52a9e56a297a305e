import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Logging
import SwiftProtobuf
import Testing

@Suite("Call lifecycle and callback delivery")
struct LifecycleTests {
  @Test("writes before start are buffered and sent after it")
  func writesBeforeStart() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("StreamingInputCall")
      for size in [3, 4, 5] {
        var request = Grpc_Testing_StreamingInputCallRequest()
        request.payload.body = Data(count: size)
        call.writeData(try request.bytes)
      }
      call.finish()
      call.start()
      #expect(await recorder.waitForClose()?.error == nil)
      let response = try Grpc_Testing_StreamingInputCallResponse(
        serializedBytes: try #require(recorder.messages.first)
      )
      #expect(response.aggregatedPayloadSize == 12)
    }
  }

  @Test("misuse is a no-op: start twice, write after finish, finish twice")
  func misuse() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("StreamingInputCall")
      call.start()
      call.start()
      var request = Grpc_Testing_StreamingInputCallRequest()
      request.payload.body = Data(count: 10)
      call.writeData(try request.bytes)
      call.finish()
      call.writeData(try request.bytes)
      call.finish()
      #expect(await recorder.waitForClose()?.error == nil)
      let response = try Grpc_Testing_StreamingInputCallResponse(
        serializedBytes: try #require(recorder.messages.first)
      )
      #expect(response.aggregatedPayloadSize == 10)
      #expect(server.recorder.rpcs.count == 1)
      try await CancellationTests.expectNothingMoreArrives(recorder)
    }
  }

  @Test("misuse warns once per kind through GRPCCall2.logger, word for word")
  func misuseWarnings() async throws {
    let logs = CapturedLogs()
    let previous = GRPCCall2.logger
    GRPCCall2.logger = logs.logger
    defer { GRPCCall2.logger = previous }
    // A service of this test's own, so warnings from other tests running beside it differ.
    let path = "/grpc.testing.MisuseProbe/Once"
    func warnings() -> [String] {
      logs.all.filter { $0.level == .warning && $0.message.contains(path) }.map(\.message)
    }
    try await withTestServer { server in
      let (call, recorder) = try server.call("Once", service: "grpc.testing.MisuseProbe")
      call.start()
      call.start()
      call.start()
      call.finish()
      call.writeData(Data([1]))
      call.writeData(Data([2]))
      _ = await recorder.waitForClose()

      // Released holding writes, never started.
      do {
        let (dropped, _) = try server.call("Once", service: "grpc.testing.MisuseProbe")
        dropped.writeData(Data([1]))
        dropped.finish()
      }
      let all = await eventually { warnings().count >= 3 ? warnings() : nil } ?? warnings()
      #expect(
        all == [
          "start() was called twice on a call to \(path); the second call does nothing",
          "writeData(_:) after finish() on a call to \(path) is dropped",
          "A call to \(path) was released without start(): its 2 buffered request(s) were never sent. Call start() to send them.",
        ]
      )
    }
  }

  @Test("10 concurrent calls with mixed statuses each close exactly once with the right code")
  func concurrentCalls() async throws {
    try await withTestServer { server in
      let codes: [Int32] = [0, 2, 5, 0, 7, 13, 0, 14, 3, 0]
      var calls: [(GRPCCall2, CallRecorder, Int32)] = []
      for code in codes {
        var request = Grpc_Testing_SimpleRequest()
        request.responseSize = 8
        request.responseStatus.code = code
        request.responseStatus.message = "status \(code)"
        let (call, recorder) = try server.call("UnaryCall")
        call.start()
        call.writeData(try request.bytes)
        call.finish()
        calls.append((call, recorder, code))
      }
      for (_, recorder, code) in calls {
        let close = try #require(await recorder.waitForClose())
        if code == 0 {
          #expect(close.error == nil)
          #expect(recorder.messages.count == 1)
        } else {
          #expect(close.error?.code.rawValue == Int(code))
          #expect(close.error?.message == "status \(code)")
          #expect(recorder.messages.isEmpty)
        }
      }
      try await Task.sleep(for: .milliseconds(100))
      for (_, recorder, _) in calls {
        #expect(recorder.closeCount == 1)
        #expect(recorder.deliveryContractHeld)
      }
    }
  }

  @Test("callbacks run on the handler's queue, one at a time, even when it is concurrent")
  func concurrentHandlerQueue() async throws {
    try await withTestServer { server in
      let queue = DispatchQueue(label: "concurrent-handler", attributes: .concurrent)
      let recorder = CallRecorder(queue: queue)
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = Array(
        repeating: InteropRequests.parameters(size: 100),
        count: 100
      )
      let (call, _) = try server.call("StreamingOutputCall", recorder: recorder)
      call.start()
      call.writeData(try request.bytes)
      call.finish()
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.messages.count == 100)
      #expect(recorder.deliveryContractHeld)
      guard case .initialMetadata = recorder.events.first else {
        Issue.record(
          "the first callback was not the headers: \(String(describing: recorder.events.first))"
        )
        return
      }
    }
  }

  @Test("a call whose reference the caller dropped still completes, then is freed")
  func droppedReference() async throws {
    try await withTestServer { server in
      let recorder = CallRecorder()
      weak var weakCall: GRPCCall2?
      do {
        var request = Grpc_Testing_StreamingOutputCallRequest()
        request.responseParameters = [InteropRequests.parameters(size: 5)]
        request.responseParameters[0].intervalUs = 100_000
        let (call, _) = try server.call("StreamingOutputCall", recorder: recorder)
        weakCall = call
        call.start()
        call.writeData(try request.bytes)
        call.finish()
      }
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.messages.count == 1)
      // The call kept itself alive until its close, and no longer.
      let freed = await eventually { weakCall == nil ? true : nil }
      #expect(freed == true)
    }
  }
}
