import Dispatch
import Foundation
import GRPCCallsInterop
import GRPCCallsTestSupport
import Testing

@testable import GRPCCalls

/// Responses that arrive together reach the handler in one hop to its queue.
@Suite("Delivery hops")
struct DeliveryHopTests {
  @Test(
    "a unary call's headers, message and close, arriving together, take one block on the handler's queue"
  )
  func unaryTakesOneHop() async throws {
    try await withTestServer { server in
      let queue = DispatchQueue(label: "counted-handler-queue")
      // Held until every response of the call has reached it, so they arrive together.
      queue.suspend()
      let recorder = CallRecorder(queue: queue)
      let (call, _) = try server.call("UnaryCall", recorder: recorder)
      call.writeData(try Grpc_Testing_SimpleRequest().bytes)
      call.finish()
      call.start()
      let arrived = await eventually { call.deliveryCounts.pending == 3 ? true : nil }
      queue.resume()
      #expect(arrived == true, "the call's responses did not all arrive")
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(call.deliveryCounts.drains == 1)
      #expect(recorder.events.count == 3)
      #expect(recorder.deliveryContractHeld)
    }
  }

  @Test("a response that arrives after the drain emptied the list takes a new hop")
  func laterResponseTakesAnotherHop() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("FullDuplexCall")
      call.start()
      call.writeData(try InteropRequests.stream(count: 1, size: 4).bytes)
      #expect(await recorder.wait { $0.messages.count == 1 })
      call.writeData(try InteropRequests.stream(count: 1, size: 4).bytes)
      #expect(await recorder.wait { $0.messages.count == 2 })
      call.finish()
      #expect(await recorder.waitForClose()?.error == nil)
      // Headers and the first message may share a hop; the second message and the close
      // cannot share one with the first message, which the handler saw before they were sent.
      #expect(call.deliveryCounts.drains >= 2)
    }
  }
}
