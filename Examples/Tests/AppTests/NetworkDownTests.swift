import GRPCCalls
import GRPCCallsTestSupport
import Testing

/// How an app's tests use GRPCCallsTestSupport: a real gRPC server on loopback, and a network
/// between the app and it that breaks on command.
@Suite("An app's calls against a real server and a broken network")
struct NetworkDownTests {
  @Test(
    "a call succeeds, fails UNAVAILABLE while the network is down, and succeeds once it is back"
  )
  func networkDown() async throws {
    try await withTestServer { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      var options = server.options
      options.timeout = 60
      let service = TestService(
        host: "127.0.0.1:\(proxy.port)",
        callOptions: options,
        channelPool: server.pool
      )
      var request = Grpc_Testing_SimpleRequest()
      request.responseSize = 16

      let response = try await service.unaryCall(request)
      #expect(response.payload.body.count == 16)

      proxy.stopListening()
      let error = await #expect(throws: GRPCError.self) { try await service.unaryCall(request) }
      #expect(error?.code == .unavailable)

      try proxy.startListening()
      // The channel may still be backing off after the failed connects: wait for it.
      var waiting = options
      waiting.waitForReady = true
      let again = try await service.unaryCall(request, callOptions: waiting)
      #expect(again.payload.body.count == 16)
    }
  }
}
