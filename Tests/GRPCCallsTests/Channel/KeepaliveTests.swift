import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Logging
import Testing

/// Keepalive as gRFC A8 describes it, read from the PING frames the client sends through a
/// recording proxy.
@Suite("Keepalive per gRFC A8")
struct KeepaliveTests {
  /// Keepalive every 16 s (1 s asked, stretched one second past the timeout), with a 15 s
  /// timeout that a busy machine meets while the peer still answers (a late PING ACK would close
  /// the connection, and a new one starts the count of pings again).
  static func options(_ server: TestServer, permitWithoutCalls: Bool = false) -> GRPCCallOptions {
    var options = server.options
    options.keepaliveInterval = 1
    options.keepaliveTimeout = 15
    options.keepalivePermitWithoutCalls = permitWithoutCalls
    return options
  }

  /// The interval the transport pings at with ``options(_:permitWithoutCalls:)``, in seconds.
  static let transportInterval = 16

  /// The keepalive PINGs (not ACKs) the client sent through `proxy`.
  static func pings(_ proxy: FaultProxy) -> Int {
    proxy.clientFrames.count { $0.type == RecordedHTTP2Frame.ping && $0.flags & 0x1 == 0 }
  }

  /// An EmptyCall that succeeds; the connection then has no call open.
  static func emptyCall(_ client: InteropClient) async throws {
    let (call, recorder) = try client.makeCall("EmptyCall")
    call.writeData(try Grpc_Testing_Empty().bytes)
    call.finish()
    call.start()
    #expect(await recorder.waitForClose()?.error == nil)
  }

  @Test(
    "pings resume when a call starts on a connection whose last call had ended, with nothing read from the server since",
    arguments: RPCPath.allCases
  )
  func resumeWhenACallStarts(path: RPCPath) async throws {
    // The long call's stream is quiet: a server enforcing its default ping interval would end
    // it after a few pings, which a busy machine can take to reach the checks below.
    try await withTestServer(path: path, minPingInterval: .seconds(1)) { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port, recordingClientBytes: true)
      defer { proxy.close() }
      let client = InteropClient(
        target: "127.0.0.1:\(proxy.port)",
        callOptions: Self.options(server),
        channelPool: server.pool
      )
      // A call that ends at once: the connection is left with none open, for longer than the
      // keepalive interval, so that the transport's ping in that time is held back. (The wait
      // only sets the scene: on a slow machine the tick may come later, and the test then
      // checks less, not wrongly.)
      try await Self.emptyCall(client)
      try await Task.sleep(for: .seconds(Self.transportInterval + 1))
      let before = Self.pings(proxy)

      // A long call on the same connection that the server does not answer: a unary call whose
      // request never comes, for which the server sends nothing. So no read comes between the
      // held-back ping and the next one, which must leave all the same.
      let (call, recorder) = try client.makeCall("UnaryCall")
      defer { call.cancel() }
      call.start()
      let opened = await eventually {
        proxy.clientFrames.count { $0.type == RecordedHTTP2Frame.headers } >= 2 ? true : nil
      }
      #expect(opened == true, "the long call's HEADERS did not leave")
      let pinged = await eventually { Self.pings(proxy) > before ? true : nil }
      #expect(
        pinged == true,
        "no keepalive PING while a call ran on a connection that had been idle"
      )
      #expect(recorder.close == nil)
      #expect(proxy.acceptedConnections == 1)
    }
  }

  @Test(
    "keepalivePermitWithoutCalls pings with no call open; a server that forbids it says too_many_pings, and the channel backs off and logs it once",
    arguments: RPCPath.allCases
  )
  func permitWithoutCalls(path: RPCPath) async throws {
    // The test server allows no ping without a call (grpc-swift-nio-transport's default
    // enforcement): after a few it closes the connection with GOAWAY ENHANCE_YOUR_CALM.
    try await withTestServer(path: path) { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port, recordingClientBytes: true)
      defer { proxy.close() }
      let logs = CapturedLogs()
      var config = GRPCChannelPool.Config.defaults
      config.logger = logs.logger
      config.sendsEveryCallThroughClient = path == .client
      // The channel has no call for the whole test: the pool must not close it as idle before
      // the server has had the pings it counts.
      config.idleTimeout = .seconds(600)
      let pool = GRPCChannelPool(config: config)
      defer { pool.disconnectAll() }
      let client = InteropClient(
        target: "127.0.0.1:\(proxy.port)",
        callOptions: Self.options(server, permitWithoutCalls: true),
        channelPool: pool
      )
      try await Self.emptyCall(client)
      let after = Self.pings(proxy)

      // No call is open from here on.
      let pinged = await eventually { Self.pings(proxy) > after ? true : nil }
      #expect(pinged == true, "no keepalive PING with no call open, although permitted")
      let warning = await eventually(upTo: 150) {
        logs.all.first { $0.level == .warning && $0.message.contains("too_many_pings") }
      }
      #expect(
        warning?.message
          == "The server closed a connection for too many keepalive pings (GOAWAY ENHANCE_YOUR_CALM \"too_many_pings\"): the channel now pings every 32.0 s; raise keepaliveInterval, or ask the server to permit more (grpc-go: keepalive.EnforcementPolicy)"
      )
    }
  }
}
