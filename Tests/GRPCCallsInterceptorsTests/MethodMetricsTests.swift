import CoreMetrics
import MetricsTestKit
import Testing

@testable import GRPCCallsInterceptors

@Suite("Metrics interceptor: each method's handles, made once")
struct MethodMetricsTests {
  @Test(
    "the table keeps at most its limit of methods; a method beyond it still gets working handles"
  )
  func tableIsBounded() throws {
    let metrics = TestMetrics()
    let cache = MethodMetricsCache(extraDimensions: [("region", "eu")], factory: metrics, limit: 2)
    let first = cache.metrics(path: "/a.S/One")
    _ = cache.metrics(path: "/a.S/Two")
    let third = cache.metrics(path: "/a.S/Three")
    #expect(cache.count == 2)
    #expect(cache.metrics(path: "/a.S/One") === first)
    #expect(cache.metrics(path: "/a.S/Three") !== third)
    third.started.increment()
    let dimensions = [
      ("rpc.system", "grpc"), ("rpc.service", "a.S"), ("rpc.method", "Three"), ("region", "eu"),
    ]
    #expect(try metrics.expectCounter("rpc.client.started", dimensions).totalValue == 1)
    #expect(first.close(code: 0).finished === first.close(code: 0).finished)
  }
}
