import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import Testing

/// Global interceptors apply to every call in the process, the other suites' included: the
/// counting interceptors here log only calls to this suite's own server, the suite removes them
/// when it is done, and it holds the ``GlobalInterceptorGate`` meanwhile.
@Suite("Global interceptors (L55)", .serialized)
struct GlobalInterceptorTests {
  @Test("a global interceptor sees every event of a flow-controlled ping-pong")
  func globalCounts() async throws {
    try await GlobalInterceptorGate.withTestServer { server in
      let log = InterceptorLog()
      GRPCCall2.registerGlobalInterceptor(
        CountingInterceptor.factory("G", log: log, host: server.server.target)
      )
      defer { GRPCCall2.removeAllGlobalInterceptors() }
      var options = server.options
      options.enableFlowControl = true
      let (recorder, close) = try await InterceptorChainTests.pingPong(server, options: options)
      #expect(close.error == nil)
      #expect(recorder.writeCount == 4)
      try await InterceptorChainTests.expectCounts(log, name: "G")
      #expect(!log.all.contains { $0.hasSuffix("off-queue") })
    }
  }

  @Test("a global interceptor sees a v1 call (GRPCLegacy) as it sees a GRPCCall2")
  func globalSeesV1Calls() async throws {
    try await GlobalInterceptorGate.withTestServer { server in
      let log = InterceptorLog()
      GRPCCall2.registerGlobalInterceptor(
        CountingInterceptor.factory("G", log: log, host: server.server.target)
      )
      defer { GRPCCall2.removeAllGlobalInterceptors() }
      let service = TestService(
        host: server.server.target,
        callOptions: server.options,
        channelPool: server.pool
      )
      _ = try await LegacyInterceptorTests.pingPong(service)
      try await LegacyInterceptorTests.expectV1Counts(log, name: "G")
    }
  }

  @Test("per-call interceptors run before global ones, which run in registration order")
  func perCallThenGlobal() async throws {
    try await GlobalInterceptorGate.withTestServer { server in
      let log = InterceptorLog()
      let host = server.server.target
      GRPCCall2.registerGlobalInterceptor(CountingInterceptor.factory("G1", log: log, host: host))
      GRPCCall2.registerGlobalInterceptor(CountingInterceptor.factory("G2", log: log, host: host))
      defer { GRPCCall2.removeAllGlobalInterceptors() }
      var options = server.options
      options.enableFlowControl = true
      options.interceptorFactories = [CountingInterceptor.factory("P", log: log)]
      let (_, close) = try await InterceptorChainTests.pingPong(server, options: options)
      #expect(close.error == nil)
      for name in ["P", "G1", "G2"] {
        try await InterceptorChainTests.expectCounts(log, name: name)
      }
      #expect(log.order(of: "start") == ["P", "G1", "G2"])
      #expect(log.order(of: "close") == ["G2", "G1", "P"])
    }
  }

  @Test("a call keeps the global interceptors it was made with; removal affects later calls")
  func registrationIsSnapshotted() async throws {
    try await GlobalInterceptorGate.withTestServer { server in
      let log = InterceptorLog()
      GRPCCall2.registerGlobalInterceptor(
        CountingInterceptor.factory("G", log: log, host: server.server.target)
      )
      let (early, earlyRecorder) = try server.call("UnaryCall")
      GRPCCall2.removeAllGlobalInterceptors()
      #expect(GRPCCall2.globalInterceptors.isEmpty)
      let (late, lateRecorder) = try server.call("UnaryCall")
      for (call, recorder) in [(early, earlyRecorder), (late, lateRecorder)] {
        call.start()
        call.writeData(try unaryRequest(responseBytes: 10).bytes)
        call.finish()
        #expect(await recorder.waitForClose()?.error == nil)
      }
      try await Task.sleep(for: .milliseconds(100))
      #expect(log.count("G", "start") == 1)
    }
  }
}
