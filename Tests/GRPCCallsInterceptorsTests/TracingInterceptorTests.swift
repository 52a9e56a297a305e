import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import InMemoryTracing
import Testing
import Tracing

@testable import GRPCCallsInterceptors

@Suite("Tracing interceptor over loopback")
struct TracingInterceptorTests {
  @Test(
    "a call inside a span: a client child span with the RPC attributes; the server gets its traceparent"
  )
  func childSpanAndTraceparent() async throws {
    try await withTestServer { server in
      let tracer = W3CTestTracer()
      var options = server.options
      var config = GRPCTracingInterceptorFactory.Config.defaults
      config.recordsMessageEvents = true
      options.interceptorFactories = [GRPCTracingInterceptorFactory(config: config, tracer: tracer)]
      let parent = tracer.startSpan("checkout")
      let close = try await ServiceContext.withValue(parent.context) {
        try await server.complete(
          "UnaryCall",
          try InteropRequests.unary(responseBytes: 10),
          options: options
        ).2
      }
      parent.end()
      #expect(close.error == nil)

      let span = try #require(tracer.memory.finishedSpans.first { $0.kind == .client })
      #expect(span.operationName == "grpc.testing.TestService/UnaryCall")
      #expect(span.traceID == parent.context.inMemorySpanContext?.traceID)
      #expect(span.parentSpanID == parent.context.inMemorySpanContext?.spanID)
      #expect(span.attributes["rpc.system"]?.toSpanAttribute() == "grpc")
      #expect(span.attributes["rpc.service"]?.toSpanAttribute() == "grpc.testing.TestService")
      #expect(span.attributes["rpc.method"]?.toSpanAttribute() == "UnaryCall")
      #expect(span.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
      #expect(span.attributes["server.port"]?.toSpanAttribute() != nil)
      #expect(span.attributes["rpc.grpc.status_code"]?.toSpanAttribute() == 0)
      #expect(span.status == nil)
      #expect(span.events.map(\.name) == ["rpc.message", "rpc.message"])

      // The server saw the span as the caller's: same trace, the span as parent.
      let rpc = try #require(server.recorder.rpcs.last)
      let received = try #require(Array(rpc.metadata[stringValues: "traceparent"]).first)
      #expect(received == "00-\(span.traceID)-\(span.spanID)-01")
    }
  }

  @Test("a failed call: the span has the error status, the code and the recorded error")
  func failedCall() async throws {
    try await withTestServer { server in
      let tracer = W3CTestTracer()
      var options = server.options
      options.interceptorFactories = [GRPCTracingInterceptorFactory(tracer: tracer)]
      var request = try InteropRequests.unary(responseBytes: 10)
      request.responseStatus.code = 5
      request.responseStatus.message = "no such thing"
      let (_, _, close) = try await server.complete("UnaryCall", request, options: options)
      #expect(close.error?.code == .notFound)

      let span = try #require(tracer.memory.finishedSpans.first)
      #expect(span.parentSpanID == nil)
      #expect(span.attributes["rpc.grpc.status_code"]?.toSpanAttribute() == 5)
      #expect(span.status?.code == .error)
      #expect(span.status?.message?.contains("no such thing") == true)
      #expect(span.errors.count == 1)
      #expect(span.events.isEmpty)
    }
  }
}

/// The library's in-memory tracer, with W3C-shaped ids and an instrument that injects W3C
/// `traceparent` (as OpenTelemetry's does), so the test can check what a server would see.
struct W3CTestTracer: Tracer {
  let memory = InMemoryTracer(
    idGenerator: .init(
      nextTraceID: { Self.hex(bytes: 16) },
      nextSpanID: { Self.hex(bytes: 8) }
    )
  )

  func startSpan<Instant: TracerInstant>(
    _ operationName: String,
    context: @autoclosure () -> ServiceContext,
    ofKind kind: SpanKind,
    at instant: @autoclosure () -> Instant,
    function: String,
    file fileID: String,
    line: UInt
  ) -> InMemorySpan {
    self.memory.startSpan(
      operationName,
      context: context(),
      ofKind: kind,
      at: instant(),
      function: function,
      file: fileID,
      line: line
    )
  }

  func forceFlush() {}

  func inject<Carrier, Inject: Injector>(
    _ context: ServiceContext,
    into carrier: inout Carrier,
    using injector: Inject
  ) where Inject.Carrier == Carrier {
    guard let span = context.inMemorySpanContext else { return }
    injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
  }

  func extract<Carrier, Extract: Extractor>(
    _ carrier: Carrier,
    into context: inout ServiceContext,
    using extractor: Extract
  ) where Extract.Carrier == Carrier {}

  private static func hex(bytes: Int) -> String {
    (0 ..< bytes).map { _ in String(format: "%02x", UInt8.random(in: 0 ... 255)) }.joined()
  }
}

@Suite("Server address attributes")
struct ServerAddressTests {
  @Test(
    "host, host:port and [v6]:port split as server.address and server.port",
    arguments: [
      ("api.example.com", "api.example.com", nil),
      ("api.example.com:443", "api.example.com", 443),
      ("127.0.0.1:50051", "127.0.0.1", 50051),
      ("[::1]:8080", "::1", 8080),
      ("[::1]", "::1", nil),
      ("::1", "::1", nil),
    ] as [(String, String, Int?)]
  )
  func split(host: String, address: String, port: Int?) {
    let split = ServerAddress(host: host)
    #expect(split.address == address)
    #expect(split.port == port)
  }
}
