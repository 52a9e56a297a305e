import CoreMetrics
import Foundation
import GRPCCalls
import GRPCCallsInterceptors
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import MetricsTestKit
import Testing

@Suite("Metrics interceptor over loopback")
struct MetricsInterceptorTests {
  static let method = [
    ("rpc.system", "grpc"), ("rpc.service", "grpc.testing.TestService"), ("rpc.method", "UnaryCall"),
  ]

  @Test("10 calls, 7 OK and 3 failed: exact counts, a duration per call by code, in-flight back at 0")
  func mixedStatuses() async throws {
    try await withTestServer { server in
      let metrics = TestMetrics()
      var options = server.options
      options.interceptorFactories = [GRPCMetricsInterceptorFactory(factory: metrics)]
      for index in 0..<10 {
        var request = try InteropRequests.unary(responseBytes: 100)
        if index % 3 == 2 {
          request.responseStatus.code = 2
          request.responseStatus.message = "planned failure"
        }
        let (_, _, close) = try await server.complete("UnaryCall", request, options: options)
        #expect((close.error == nil) == (index % 3 != 2))
      }
      let ok = Self.method + [("rpc.grpc.status_code", "0")]
      let failed = Self.method + [("rpc.grpc.status_code", "2")]
      #expect(try metrics.expectCounter("rpc.client.started", Self.method).totalValue == 10)
      #expect(try metrics.expectCounter("rpc.client.finished", ok).totalValue == 7)
      #expect(try metrics.expectCounter("rpc.client.finished", failed).totalValue == 3)
      #expect(try metrics.expectTimer("rpc.client.duration", ok).values.count == 7)
      #expect(try metrics.expectTimer("rpc.client.duration", failed).values.count == 3)
      #expect(try metrics.expectTimer("rpc.client.duration", ok).values.allSatisfy { $0 > 0 })
      #expect(try metrics.expectRecorder("rpc.client.requests_per_rpc", Self.method).values.count == 10)
      #expect(try metrics.expectRecorder("rpc.client.requests_per_rpc", Self.method).values.allSatisfy { $0 == 1 })
      // Failed calls got no message.
      let responses = try metrics.expectRecorder("rpc.client.responses_per_rpc", Self.method).values
      #expect(responses.filter { $0 == 1 }.count == 7)
      #expect(responses.filter { $0 == 0 }.count == 3)
      let sizes = try metrics.expectRecorder("rpc.client.response.size", Self.method).values
      #expect(sizes == Array(repeating: 100, count: 7))
      #expect(try metrics.expectMeter("rpc.client.in_flight", Self.method).lastValue == 0)
    }
  }
}
