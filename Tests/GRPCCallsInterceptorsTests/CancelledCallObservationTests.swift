import GRPCCalls
import GRPCCallsInterceptors
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import InMemoryTracing
import Logging
import MetricsTestKit
import Testing
import Tracing

@Suite("Observing interceptors and cancelled calls")
struct CancelledCallObservationTests {
  @Test(
    "a call the app cancels is logged, counted and traced as CANCELLED, and leaves nothing in flight"
  )
  func cancelledCall() async throws {
    try await withTestServer { server in
      let logs = CapturedLogs()
      var logger = logs.logger
      logger.logLevel = .debug
      let metrics = TestMetrics()
      let tracer = InMemoryTracer()
      var options = server.options
      options.interceptorFactories = [
        GRPCLoggingInterceptorFactory(logger: logger),
        GRPCMetricsInterceptorFactory(factory: metrics),
        GRPCTracingInterceptorFactory(tracer: tracer),
      ]
      // A bidirectional call that the server keeps open until the client ends it.
      let (call, recorder) = try server.call("FullDuplexCall", options: options)
      call.start()
      #expect(await eventually { server.recorder.rpcs.isEmpty ? nil : true } == true)
      call.cancel()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)

      let failed = try #require(logs.all.first { $0.message == "RPC failed" })
      #expect(failed.metadata["grpc.code"] == "1")
      #expect(
        logs.all.filter { $0.message.hasPrefix("RPC ") }.map(\.message) == [
          "RPC started", "RPC failed",
        ]
      )

      let method = [
        ("rpc.system", "grpc"), ("rpc.service", "grpc.testing.TestService"),
        ("rpc.method", "FullDuplexCall"),
      ]
      #expect(
        try metrics.expectCounter("rpc.client.finished", method + [("rpc.grpc.status_code", "1")])
          .totalValue == 1
      )
      #expect(
        try metrics.expectTimer("rpc.client.duration", method + [("rpc.grpc.status_code", "1")])
          .values.count == 1
      )
      #expect(try metrics.expectMeter("rpc.client.in_flight", method).lastValue == 0)

      #expect(tracer.activeSpans.isEmpty)
      let span = try #require(tracer.finishedSpans.first)
      #expect(tracer.finishedSpans.count == 1)
      #expect(span.status?.code == .error)
      #expect(span.attributes["rpc.grpc.status_code"]?.toSpanAttribute() == 1)
    }
  }
}
