import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCLegacy
import Testing

@Suite("Keepalive and connect timeouts against silent peers", .serialized)
struct ConnectionHealthTests {
  /// Opens a FullDuplexCall through `port` and waits for the answer to one ping, so the
  /// connection is up.
  static func openStream(
    port: Int,
    options: GRPCCallOptions,
    pool: GRPCChannelPool
  ) async throws -> (GRPCCall2, CallRecorder) {
    let recorder = CallRecorder()
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(host: "127.0.0.1:\(port)", path: "/grpc.testing.TestService/FullDuplexCall"),
      responseHandler: recorder,
      callOptions: options,
      channelPool: pool
    )
    call.start()
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = [InteropRequests.parameters(size: 1)]
    call.writeData(try request.bytes)
    #expect(await recorder.wait(upTo: 10) { $0.messages.count == 1 })
    return (call, recorder)
  }

  @Test("keepalive 1 s / 1 s: a stalled peer fails the call with UNAVAILABLE within 5 s; without keepalive it still waits")
  func keepaliveDetectsStall() async throws {
    try await withTestServer { server in
      let proxy = try LoopbackProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      var keepalive = server.options
      keepalive.keepaliveInterval = 1
      keepalive.keepaliveTimeout = 1
      let (_, watched) = try await Self.openStream(port: proxy.port, options: keepalive, pool: server.pool)
      let (plainCall, plain) = try await Self.openStream(port: proxy.port, options: server.options, pool: server.pool)

      proxy.stall()
      let stalled = ContinuousClock.now
      let close = try #require(await watched.waitForClose(upTo: 5), "keepalive did not end the call within 5 s")
      #expect(close.error?.code == .unavailable, "\(String(describing: close.error))")
      #expect(ContinuousClock.now - stalled < .seconds(5))
      #expect(plain.close == nil, "the call without keepalive closed: \(String(describing: plain.close))")
      plainCall.cancel()
    }
  }

  /// An EmptyCall to a listener that accepts and never answers; returns the close and how long
  /// it took.
  static func callSilentListener(
    _ configure: (inout GRPCCallOptions) -> Void
  ) async throws -> (close: CallRecorder.Close, elapsed: Duration) {
    let silent = try LoopbackProxy(upstreamPort: nil)
    defer { silent.close() }
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions()
    options.transportType = .insecure
    configure(&options)
    let recorder = CallRecorder()
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(host: "127.0.0.1:\(silent.port)", path: "/grpc.testing.TestService/EmptyCall"),
      responseHandler: recorder,
      callOptions: options,
      channelPool: pool
    )
    let started = ContinuousClock.now
    call.start()
    call.writeData(try Grpc_Testing_Empty().bytes)
    call.finish()
    let close = try #require(await recorder.waitForClose(upTo: 10))
    return (close, ContinuousClock.now - started)
  }

  @Test("connectMinTimeout 0.5 s: a listener that never answers fails the call within 0.5 s + slack")
  func connectTimeoutApplies() async throws {
    let (close, elapsed) = try await Self.callSilentListener {
      $0.connectMinTimeout = 0.5
      $0.timeout = 8
    }
    #expect(close.error?.code == .unavailable, "\(String(describing: close.error))")
    #expect(elapsed < .seconds(2.5), "took \(elapsed)")
  }

  @Test("without connectMinTimeout the same listener keeps the call waiting until its deadline")
  func noConnectTimeoutWaits() async throws {
    let (close, _) = try await Self.callSilentListener { $0.timeout = 2 }
    #expect(close.error?.code == .deadlineExceeded, "\(String(describing: close.error))")
  }

  @Test("a host's min connect timeout (300 ms) fails a v1 call to a silent listener with UNAVAILABLE, not at its 8 s deadline")
  func hostConnectTimeout() async throws {
    let silent = try LoopbackProxy(upstreamPort: nil)
    defer { silent.close() }
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }
    let host = "127.0.0.1:\(silent.port)"
    try GRPCCall.useInsecureConnections(forHost: host)
    try GRPCCall.setMinConnectTimeout(300, initialBackoff: 300, maxBackoff: 300, forHost: host)
    let call = GRPCCall(
      host: host,
      path: "/grpc.testing.TestService/EmptyCall",
      requestsWriter: GRXWriter(value: Data()),
      channelPool: pool
    )
    call.timeout = 8
    let error = await withCheckedContinuation { continuation in
      call.start(with: GRXHandlerWriteable.unaryHandler { (_: Data?, error: GRPCError?) in continuation.resume(returning: error) })
    }
    // Without the host's setting the call would wait for its deadline: DEADLINE_EXCEEDED.
    #expect(error?.code == .unavailable, "\(String(describing: error))")
  }
}
