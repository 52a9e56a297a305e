import Dispatch
import Foundation
import GRPCCallsInterop
import GRPCCallsTestSupport
import SwiftProtobuf
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

  @Test(
    "a server stream that floods the client is read on the handler's queue, so its messages take no hop of their own"
  )
  func floodReadOnHandlerQueue() async throws {
    // The raw path reads the transport's stream itself; the `GRPCClient` path reads what the
    // core's executor hands it. A global interceptor on a queue of its own would read the stream
    // there, and pass each burst up with a hop.
    try await GlobalInterceptorGate.exclusive {
      try await self.floodOnHandlerQueue()
    }
  }

  private func floodOnHandlerQueue() async throws {
    try await withTestServer(path: .raw) { server in
      let queue = DispatchQueue(label: "flooded-handler-queue")
      let recorder = CallRecorder(queue: queue)
      let (call, _) = try server.call("StreamingOutputCall", recorder: recorder)
      // Spaced out, so that the messages arrive one by one rather than in a few reads.
      let messages = 40
      var request = InteropRequests.stream(count: messages, size: 16)
      for index in request.responseParameters.indices {
        request.responseParameters[index].intervalUs = 2_000
      }
      call.writeData(try request.bytes)
      call.finish()
      call.start()
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.messages.count == messages)
      #expect(recorder.deliveryContractHeld)
      // Before the reading moves: the headers and at most five messages (a stream floods the
      // client once its responses outnumber its one request by more than two to one), each
      // perhaps a hop; then the close, which the runner sends after its reading task ended.
      let hops = call.deliveryCounts.drains
      #expect(hops <= 7, "\(hops) hops to the handler's queue for \(messages) messages")
    }
  }

  @Test(
    "a flooding stream read on the last interceptor's queue passes every message through each interceptor on its own queue, in order",
    arguments: RPCPath.allCases
  )
  func floodThroughInterceptors(path: RPCPath) async throws {
    try await withTestServer(path: path) { server in
      let log = InterceptorLog()
      var options = server.options
      // Below the handler: one on a serial queue of its own, one on a concurrent queue, one
      // inline; the stream is read on the queue of the one nearest the transport.
      options.interceptorFactories = [
        CountingInterceptor.factory("A", log: log),
        CountingInterceptor.factory("B", log: log, inline: true),
        CountingInterceptor.factory(
          "C",
          log: log,
          queue: DispatchQueue(label: "flood.concurrent", attributes: .concurrent)
        ),
      ]
      let (call, recorder) = try server.call("StreamingOutputCall", options: options)
      let messages = 200
      var request = InteropRequests.stream(count: messages, size: 16)
      for index in request.responseParameters.indices {
        // Each response's size tells it apart from the others.
        request.responseParameters[index].size = Int32(16 + index)
      }
      call.writeData(try request.bytes)
      call.finish()
      call.start()
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.deliveryContractHeld)
      #expect(recorder.closeCount == 1)
      let sizes = try recorder.messages.map {
        try Grpc_Testing_StreamingOutputCallResponse(serializedBytes: $0).payload.body.count
      }
      #expect(sizes == (0 ..< messages).map { 16 + $0 })
      let offQueue = log.all.filter { $0.hasSuffix(".off-queue") }
      #expect(offQueue.isEmpty, "events off their interceptor's queue or overlapping: \(offQueue)")
      for name in ["A", "B", "C"] {
        #expect(log.count(name, "data") == messages, "\(name)")
      }
    }
  }
}
