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
    let pool = GRPCChannelPool(
      config: .init(idleTimeout: .seconds(30), transportRegistry: registry)
    )
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions()
    options.transport = id
    let client = InteropClient(
      target: "in-process.invalid:1",
      callOptions: options,
      channelPool: pool
    )
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
      let client = InteropClient(
        target: server.server.target,
        callOptions: options,
        channelPool: pool
      )
      try await client.run(.emptyUnary)
      let warning = try #require(logs.all.first { $0.level == .warning })
      #expect(warning.message.contains("no.such.transport"))
      #expect(warning.metadata["component"] == "billing")
      #expect(
        logs.all.contains {
          $0.message == "Opened a channel" && $0.metadata["component"] == "billing"
        }
      )
    }
  }

  @Test("the built-in IDs name the HTTP/2 transports: .insecure reaches a plaintext server")
  func builtInIDs() async throws {
    try await withTestServer { server in
      var options = GRPCCallOptions()  // transportType .tls by default
      options.transport = .insecure
      let client = InteropClient(
        target: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      try await client.run(.emptyUnary)
    }
  }

  @Test(
    "the built-in transports are registry entries: looked up by ID, they make a transport that reaches the server"
  )
  func builtInEntries() async throws {
    try await withTestServer { server in
      let registry = GRPCTransportRegistry()
      #expect(registry.registeredIDs == [.secure, .insecure])
      registry.unregister(.insecure)
      let insecure = try #require(registry.factory(for: .insecure), "the built-in entry stays")
      #expect(registry.factory(for: .secure) != nil)
      // A transport of the app's own that delegates to the built-in entry, as an Objective-C
      // app's did to GRPCDefaultTransportImplList.
      let id = GRPCTransportID("test.delegating")
      registry.register(
        GRPCClosureTransportFactory { target, options in
          try insecure.makeTransport(target: target, options: options)
        },
        for: id
      )
      #expect(registry.registeredIDs == [.secure, .insecure, id])
      var config = GRPCChannelPool.Config.forTests
      config.transportRegistry = registry
      let pool = GRPCChannelPool(config: config)
      defer { pool.disconnectAll() }
      var options = GRPCCallOptions()  // transportType .tls: the entry's own type wins
      options.transport = id
      try await InteropClient(target: server.server.target, callOptions: options, channelPool: pool)
        .run(.largeUnary)
      #expect(server.recorder.acceptedConnections == 1)
    }
  }

  @Test("a transport's own interceptors run last: after the per-call ones, seeing every event")
  func transportInterceptors() async throws {
    let log = InterceptorLog()
    let registry = GRPCTransportRegistry()
    let recorder = InteropServerRecorder()
    let id = GRPCTransportID("test.in-process.intercepted")
    let inProcess = InteropServer.inProcessTransportFactory(recorder: recorder)
    registry.register(
      GRPCClosureTransportFactory(interceptorFactories: [CountingInterceptor.factory("T", log: log)]
      ) { target, options in
        try inProcess.makeTransport(target: target, options: options)
      },
      for: id
    )
    let pool = GRPCChannelPool(
      config: .init(idleTimeout: .seconds(30), transportRegistry: registry)
    )
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions()
    options.transport = id
    options.enableFlowControl = true
    options.interceptorFactories = [CountingInterceptor.factory("P", log: log)]
    let client = InteropClient(
      target: "in-process.invalid:1",
      callOptions: options,
      channelPool: pool
    )
    let (_, close) = try await InterceptorChainTests.pingPong(client, options: options)
    #expect(close.error == nil)
    for name in ["P", "T"] {
      try await InterceptorChainTests.expectCounts(log, name: name)
    }
    #expect(log.order(of: "start") == ["P", "T"])
    #expect(log.order(of: "close") == ["T", "P"])
  }

  @Test("Cronet is not available here: UNIMPLEMENTED, saying so")
  func cronet() async throws {
    try await withTestServer { server in
      var options = server.options
      options.transportType = .cronet
      let (_, _, close) = try await server.complete(
        "EmptyCall",
        Grpc_Testing_Empty(),
        options: options
      )
      #expect(close.error?.code == .unimplemented)
      #expect(close.error?.message.contains("not available on this platform") == true)
      #expect(server.recorder.acceptedConnections == 0)
    }
  }
}
