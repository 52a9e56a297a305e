import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

@Suite("Flow control (L49)")
struct FlowControlTests {
  func options(_ server: TestServer, flowControl: Bool = true) -> GRPCCallOptions {
    var options = server.options
    options.enableFlowControl = flowControl
    return options
  }

  @Test("didWriteData fires after a write is accepted")
  func didWriteAfterWrite() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("StreamingInputCall", options: self.options(server))
      call.start()
      call.writeData(try Grpc_Testing_StreamingInputCallRequest().bytes)
      #expect(await recorder.wait { $0.writeCount == 1 })
      call.finish()
      call.receiveNextMessages(1)
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.writeCount == 1)
    }
  }

  @Test("4-round ping-pong with flow control: 4 didWriteData and 4 messages; off: none")
  func pingPong() async throws {
    try await withTestServer { server in
      for flowControl in [true, false] {
        let (call, recorder) = try server.call(
          "FullDuplexCall",
          options: self.options(server, flowControl: flowControl)
        )
        call.start()
        for round in 1 ... 4 {
          call.receiveNextMessages(1)
          var request = Grpc_Testing_StreamingOutputCallRequest()
          request.responseParameters = [InteropRequests.parameters(size: 10)]
          call.writeData(try request.bytes)
          #expect(await recorder.wait { $0.messages.count == round })
        }
        call.finish()
        #expect(await recorder.waitForClose()?.error == nil)
        #expect(recorder.messages.count == 4)
        #expect(recorder.writeCount == (flowControl ? 4 : 0))
        #expect(recorder.deliveryContractHeld)
      }
    }
  }

  @Test("no demand: nothing delivered for 2 s; receiveNextMessages(1): the message, then close")
  func noDemandHolds() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("StreamingOutputCall", options: self.options(server))
      call.start()
      call.writeData(try InteropRequests.stream(count: 1, size: 7).bytes)
      call.finish()
      try await Task.sleep(for: .seconds(2))
      #expect(recorder.messages.isEmpty)
      #expect(recorder.close == nil)
      call.receiveNextMessages(1)
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.messages.count == 1)
      #expect(recorder.deliveryContractHeld)
    }
  }

  @Test("demand 2 given before start: exactly 2 messages until more is asked for")
  func demandBeforeStart() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("StreamingOutputCall", options: self.options(server))
      call.receiveNextMessages(2)
      call.start()
      call.writeData(try InteropRequests.stream(count: 5, size: 7).bytes)
      call.finish()
      #expect(await recorder.wait { $0.messages.count == 2 })
      try await Task.sleep(for: .milliseconds(500))
      #expect(recorder.messages.count == 2)
      #expect(recorder.close == nil)
      call.receiveNextMessages(0)
      call.receiveNextMessages(-3)
      try await Task.sleep(for: .milliseconds(200))
      #expect(recorder.messages.count == 2)
      call.receiveNextMessages(3)
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.messages.count == 5)
    }
  }

  @Test("demand given right after start works")
  func demandAfterStart() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("StreamingOutputCall", options: self.options(server))
      call.start()
      call.receiveNextMessages(3)
      call.writeData(try InteropRequests.stream(count: 3, size: 7).bytes)
      call.finish()
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.messages.count == 3)
    }
  }

  @Test("an error close arrives with zero demand")
  func errorWithoutDemand() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseStatus.code = 9
      request.responseStatus.message = "precondition"
      let (_, recorder, close) = try await server.complete(
        "StreamingOutputCall",
        request,
        options: self.options(server)
      )
      #expect(close.error?.code == .failedPrecondition)
      #expect(recorder.messages.isEmpty)
    }
  }

  @Test("with flow control off, receiveNextMessages does nothing and messages flow")
  func offIsNoOp() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call(
        "StreamingOutputCall",
        options: self.options(server, flowControl: false)
      )
      call.receiveNextMessages(1)
      call.start()
      call.writeData(try InteropRequests.stream(count: 3, size: 7).bytes)
      call.finish()
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.messages.count == 3)
      #expect(recorder.writeCount == 0)
    }
  }

  @Test("a deadline still fires while the reader waits for demand")
  func deadlineWhileWaiting() async throws {
    try await withTestServer { server in
      var options = self.options(server)
      options.timeout = 0.5
      let (call, recorder) = try server.call("StreamingOutputCall", options: options)
      call.start()
      call.writeData(try InteropRequests.stream(count: 2, size: 7).bytes)
      call.finish()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .deadlineExceeded)
      #expect(recorder.messages.isEmpty)
    }
  }
}
