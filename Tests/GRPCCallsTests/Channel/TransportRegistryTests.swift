import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Logging
import Testing

@Suite("Transports by ID, Cronet and log context")
struct TransportRegistryTests {
  @Test("a registered transport is used: an in-process TestService answers, no socket involved")
  func registeredTransport() async throws {
    let registry = GRPCTransportRegistry()
    let recorder = InteropServerRecorder()
    let id = GRPCTransportID("test.in-process")
    registry.register(InteropServer.inProcessTransportFactory(recorder: recorder), for: id)
    let pool = GRPCChannelPool(config: .init(idleTimeout: .seconds(30), transportRegistry: registry))
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions()
    options.transport = id
    let client = InteropClient(target: "in-process.invalid:1", callOptions: options, channelPool: pool)
    try await client.run(.largeUnary)
    try await client.run(.pingPong)
    #expect(recorder.rpcs.count == 2)
    #expect(recorder.acceptedConnections == 0)
  }

  @Test("an unknown ID falls back to transportType and logs a warning with the log context")
  func unknownFallsBack() async throws {
    try await withTestServer { server in
      let logs = CapturedLogs()
      let pool = GRPCChannelPool(config: .init(idleTimeout: .seconds(30), logger: logs.logger))
      defer { pool.disconnectAll() }
      var options = server.options
      options.transport = GRPCTransportID("no.such.transport")
      options.logContext = ["component": "billing"]
      let client = InteropClient(target: server.server.target, callOptions: options, channelPool: pool)
      try await client.run(.emptyUnary)
      let warning = try #require(logs.all.first { $0.level == .warning })
      #expect(warning.message.contains("no.such.transport"))
      #expect(warning.metadata["component"] == "billing")
      #expect(logs.all.contains { $0.message == "Opened a channel" && $0.metadata["component"] == "billing" })
    }
  }

  @Test("the built-in IDs name the HTTP/2 transports: .insecure reaches a plaintext server")
  func builtInIDs() async throws {
    try await withTestServer { server in
      var options = GRPCCallOptions()  // transportType .tls by default
      options.transport = .insecure
      let client = InteropClient(target: server.server.target, callOptions: options, channelPool: server.pool)
      try await client.run(.emptyUnary)
    }
  }

  @Test("Cronet is not available here: UNIMPLEMENTED, saying so")
  func cronet() async throws {
    try await withTestServer { server in
      var options = server.options
      options.transportType = .cronet
      let (_, _, close) = try await server.complete("EmptyCall", Grpc_Testing_Empty(), options: options)
      #expect(close.error?.code == .unimplemented)
      #expect(close.error?.message.contains("not available on this platform") == true)
      #expect(server.recorder.acceptedConnections == 0)
    }
  }
}
