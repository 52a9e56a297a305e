import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@Suite("Channel pool")
struct ChannelPoolTests {
  @Test("calls with the same key share one TCP connection")
  func sameKeyOneConnection() async throws {
    try await withTestServer { server in
      for _ in 0 ..< 3 {
        try await MetadataTests.emptyCall(on: server, options: server.options)
      }
      async let a: Void = MetadataTests.emptyCall(on: server, options: server.options)
      async let b: Void = MetadataTests.emptyCall(on: server, options: server.options)
      _ = try await (a, b)
      // Call-level options do not change the channel either.
      var withCallOptions = server.options
      withCallOptions.timeout = CloseWait.seconds
      withCallOptions.initialMetadata.addString("x", forKey: "x-extra")
      withCallOptions.oauth2AccessToken = "t"
      try await MetadataTests.emptyCall(on: server, options: withCallOptions)
      #expect(server.recorder.acceptedConnections == 1)
      #expect(server.recorder.rpcPeers.count == 1)
      #expect(server.pool.channelCount == 1)
    }
  }

  @Test(
    "a different channelPoolDomain or channelId gets its own connection",
    arguments: ["domain", "id"]
  )
  func separateConnections(difference: String) async throws {
    try await withTestServer { server in
      var other = server.options
      if difference == "domain" {
        other.channelPoolDomain = "other-library"
      } else {
        other.channelId = 1
      }
      try await MetadataTests.emptyCall(on: server, options: server.options)
      try await MetadataTests.emptyCall(on: server, options: other)
      try await MetadataTests.emptyCall(on: server, options: server.options)
      try await MetadataTests.emptyCall(on: server, options: other)
      #expect(server.recorder.acceptedConnections == 2)
      #expect(server.recorder.rpcPeers.count == 2)
      #expect(server.pool.channelCount == 2)
    }
  }

  @Test("a channel with no calls closes after the idle delay; the next call reconnects")
  func idleClose() async throws {
    try await withTestServer(poolConfig: .init(idleTimeout: .seconds(10))) { server in
      let started = ContinuousClock.now
      try await MetadataTests.emptyCall(on: server, options: server.options)
      // The call's end does not close the connection (seen when the machine was quick enough
      // to look before the idle delay could have passed)...
      let (open, channels) = (server.recorder.openConnections, server.pool.channelCount)
      if ContinuousClock.now - started < .seconds(7) {
        #expect(open == 1)
        #expect(channels == 1)
      }
      // ...the idle delay does (PoolStateTests pin down the timer itself).
      _ = await eventually { server.recorder.openConnections == 0 ? true : nil }
      #expect(server.recorder.openConnections == 0)
      #expect(server.pool.channelCount == 0)
      try await MetadataTests.emptyCall(on: server, options: server.options)
      #expect(server.recorder.acceptedConnections == 2)
    }
  }

  @Test("a running call keeps its channel open past the idle delay")
  func busyChannelStaysOpen() async throws {
    try await withTestServer(poolConfig: .init(idleTimeout: .milliseconds(200))) { server in
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [InteropRequests.parameters(size: 1)]
      request.responseParameters[0].intervalUs = 800_000
      let (call, recorder) = try server.call("StreamingOutputCall")
      call.start()
      call.writeData(try request.bytes)
      call.finish()
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.messages.count == 1)
      #expect(server.recorder.acceptedConnections == 1)
    }
  }

  @Test("disconnectAll closes connections; a call afterwards gets a fresh one")
  func disconnectAll() async throws {
    try await withTestServer { server in
      try await MetadataTests.emptyCall(on: server, options: server.options)
      server.pool.disconnectAll()
      #expect(server.pool.channelCount == 0)
      try await MetadataTests.emptyCall(on: server, options: server.options)
      #expect(server.recorder.acceptedConnections == 2)
      #expect(server.recorder.rpcPeers.count == 2)
    }
  }
}
