import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// Interceptors that run inline (`executesInline`): no hop to a queue of their own, with the
/// same events, order and lifetime as queued ones.
@Suite("Inline interceptors")
struct InlineInterceptorTests {
  @Test("an inline interceptor sees every event of a flow-controlled ping-pong, one at a time")
  func counts() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      var options = server.options
      options.enableFlowControl = true
      options.interceptorFactories = [CountingInterceptor.factory("I", log: log, inline: true)]
      let (recorder, close) = try await InterceptorChainTests.pingPong(server, options: options)
      #expect(close.error == nil)
      #expect(try InterceptorChainTests.payloadSizes(recorder) == [10, 20, 30, 40])
      try await InterceptorChainTests.expectCounts(log, name: "I")
      #expect(!log.all.contains { $0.hasSuffix("off-queue") }, "\(log.all)")
    }
  }

  @Test(
    "inline and queued interceptors in one chain: requests go down in order, responses up in reverse"
  )
  func mixedChain() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      var options = server.options
      options.enableFlowControl = true
      options.interceptorFactories = [
        CountingInterceptor.factory("A", log: log),
        CountingInterceptor.factory("B", log: log, inline: true),
        CountingInterceptor.factory("C", log: log, inline: true),
        CountingInterceptor.factory("D", log: log),
      ]
      let (_, close) = try await InterceptorChainTests.pingPong(server, options: options)
      #expect(close.error == nil)
      for name in ["A", "B", "C", "D"] {
        try await InterceptorChainTests.expectCounts(log, name: name)
      }
      #expect(log.order(of: "start") == ["A", "B", "C", "D"])
      #expect(log.order(of: "close") == ["D", "C", "B", "A"])
      #expect(!log.all.contains { $0.hasSuffix("off-queue") }, "\(log.all)")
    }
  }

  @Test(
    "20 ping-pongs at once through an inline interceptor: every call sees all its events, none overlapping"
  )
  func concurrentCalls() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      try await InterceptorChainTests.pingPongs(20, server) {
        CountingInterceptor.factory("I\($0)", log: log, inline: true)
      }
      for index in 0 ..< 20 {
        try await InterceptorChainTests.expectCounts(log, name: "I\(index)")
      }
      #expect(!log.all.contains { $0.hasSuffix("off-queue") })
    }
  }

  @Test("an inline interceptor overriding didClose without super does not keep its chain alive")
  func lifetime() async throws {
    try await withTestServer { server in
      let made = WeakBox()
      let options = made.options(server.options) {
        ClosingWithoutSuper(manager: $0, executesInline: true)
      }
      do {
        let (call, recorder) = try server.call("UnaryCall", options: options)
        made.setCall(call)
        call.start()
        call.writeData(try Grpc_Testing_SimpleRequest().bytes)
        call.finish()
        #expect(await recorder.waitForClose()?.error == nil)
      }
      let freed = await eventually { made.allNil ? true : nil }
      #expect(freed == true, "still alive: \(made.alive)")
    }
  }
}
