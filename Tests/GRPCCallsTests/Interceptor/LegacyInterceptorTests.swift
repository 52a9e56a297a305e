import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCLegacy
import Testing

/// v1 calls (GRPCLegacy) run through the same interceptor chain as `GRPCCall2`.
@Suite("Interceptors see v1 calls")
struct LegacyInterceptorTests {
  /// A 4-round ping-pong through the generated client's v1 method and a buffered pipe.
  static func pingPong(
    _ service: TestService
  ) async throws -> LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse> {
    let recorder = LegacyRecorder<Grpc_Testing_StreamingOutputCallResponse>()
    let pipe = GRXBufferedPipe()
    service.fullDuplexCall(withRequestsWriter: pipe, eventHandler: recorder.eventHandler)
    for round in 1 ... 4 {
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [InteropRequests.parameters(size: Int32(round * 10))]
      pipe.writeValue(request)
      #expect(await recorder.wait { $0.responses.count == round })
    }
    pipe.writesFinished(withError: nil)
    try await recorder.expectEnd(nil)
    return recorder
  }

  /// The counts of a v2 flow-controlled ping-pong (``InterceptorChainTests/expectCounts(_:name:)``),
  /// but for demand: a v1 call always asks for the next message, so it asks a fifth time after
  /// the fourth.
  static func expectV1Counts(_ log: InterceptorLog, name: String) async throws {
    let closed = await eventually { log.count(name, "close") > 0 ? true : nil }
    try #require(closed == true, "\(name) never saw the close")
    let expected = [
      "start": 1, "write": 4, "finish": 1, "receiveNextMessages": 5,
      "headers": 1, "data": 4, "close": 1, "didWriteData": 4, "cancel": 0,
    ]
    for (event, count) in expected {
      #expect(
        log.count(name, event) == count,
        "\(name) saw \(event) \(log.count(name, event)) times"
      )
    }
    #expect(!log.all.contains { $0.hasSuffix("off-queue") })
  }

  @Test("per-call interceptors (the service's options) see every event of a v1 ping-pong")
  func perCall() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      var options = server.options
      options.interceptorFactories = ["A", "B"].map { CountingInterceptor.factory($0, log: log) }
      let service = TestService(
        host: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      let recorder = try await Self.pingPong(service)
      #expect(recorder.responses.map(\.payload.body.count) == [10, 20, 30, 40])
      for name in ["A", "B"] {
        try await Self.expectV1Counts(log, name: name)
      }
      #expect(log.order(of: "start") == ["A", "B"])
      #expect(log.order(of: "close") == ["B", "A"])
    }
  }
}
