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
    ("rpc.system", "grpc"), ("rpc.service", "grpc.testing.TestService"),
    ("rpc.method", "UnaryCall"),
  ]

  @Test(
    "10 calls, 7 OK and 3 failed: exact counts, a duration per call by code, in-flight back at 0, handles made once"
  )
  func mixedStatuses() async throws {
    try await withTestServer { server in
      let counting = CountingMetricsFactory()
      let metrics = counting.test
      var options = server.options
      options.interceptorFactories = [GRPCMetricsInterceptorFactory(factory: counting)]
      for index in 0 ..< 10 {
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
      #expect(
        try metrics.expectRecorder("rpc.client.requests_per_rpc", Self.method).values.count == 10
      )
      #expect(
        try metrics.expectRecorder("rpc.client.requests_per_rpc", Self.method).values.allSatisfy {
          $0 == 1
        }
      )
      // Failed calls got no message.
      let responses = try metrics.expectRecorder("rpc.client.responses_per_rpc", Self.method).values
      #expect(responses.filter { $0 == 1 }.count == 7)
      #expect(responses.filter { $0 == 0 }.count == 3)
      let sizes = try metrics.expectRecorder("rpc.client.response.size", Self.method).values
      #expect(sizes == Array(repeating: 100, count: 7))
      #expect(try metrics.expectMeter("rpc.client.in_flight", Self.method).lastValue == 0)
      // Asked of the backend once for all 10 calls: started, in_flight, request.size,
      // response.size, requests_per_rpc, responses_per_rpc; duration and finished per code.
      #expect(counting.made == 10)
    }
  }
}

/// A metrics backend that counts the handles it is asked to make (recording goes to a
/// `TestMetrics`).
private final class CountingMetricsFactory: MetricsFactory {
  let test = TestMetrics()
  private let count = LockedValue(0)

  var made: Int { self.count.withLock { $0 } }

  func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
    self.count.withLock { $0 += 1 }
    return self.test.makeCounter(label: label, dimensions: dimensions)
  }

  func makeFloatingPointCounter(
    label: String,
    dimensions: [(String, String)]
  ) -> any FloatingPointCounterHandler {
    self.count.withLock { $0 += 1 }
    return self.test.makeFloatingPointCounter(label: label, dimensions: dimensions)
  }

  func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
    self.count.withLock { $0 += 1 }
    return self.test.makeMeter(label: label, dimensions: dimensions)
  }

  func makeRecorder(
    label: String,
    dimensions: [(String, String)],
    aggregate: Bool
  ) -> any RecorderHandler {
    self.count.withLock { $0 += 1 }
    return self.test.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
  }

  func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
    self.count.withLock { $0 += 1 }
    return self.test.makeTimer(label: label, dimensions: dimensions)
  }

  func destroyCounter(_ handler: any CounterHandler) { self.test.destroyCounter(handler) }
  func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
    self.test.destroyFloatingPointCounter(handler)
  }
  func destroyMeter(_ handler: any MeterHandler) { self.test.destroyMeter(handler) }
  func destroyRecorder(_ handler: any RecorderHandler) { self.test.destroyRecorder(handler) }
  func destroyTimer(_ handler: any TimerHandler) { self.test.destroyTimer(handler) }
}
