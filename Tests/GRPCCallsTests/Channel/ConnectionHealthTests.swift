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
      requestOptions: try GRPCRequestOptions(
        host: "127.0.0.1:\(port)",
        path: "/grpc.testing.TestService/FullDuplexCall"
      ),
      responseHandler: recorder,
      callOptions: options,
      channelPool: pool
    )
    call.start()
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = [InteropRequests.parameters(size: 1)]
    call.writeData(try request.bytes)
    let answered = await recorder.wait { $0.messages.count == 1 || $0.close != nil }
    #expect(
      answered && recorder.messages.count == 1,
      "no answer to the ping: \(String(describing: recorder.close))"
    )
    return (call, recorder)
  }

  @Test(
    "keepalive 1 s / 15 s: a stalled peer fails the call with UNAVAILABLE naming keepalive; without keepalive it still waits"
  )
  func keepaliveDetectsStall() async throws {
    // The streams are quiet: a server enforcing its default ping interval would end the watched
    // one (too_many_pings) if a busy machine took a minute to get to the stall.
    try await withTestServer(minPingInterval: .seconds(1)) { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      var keepalive = server.options
      keepalive.keepaliveInterval = 1
      // A timeout that a machine busy with other tests meets while the peer still answers;
      // longer than the interval, which the transport alone would never enforce
      // (ChannelKey.transportKeepalive).
      keepalive.keepaliveTimeout = 15
      let (_, watched) = try await Self.openStream(
        port: proxy.port,
        options: keepalive,
        pool: server.pool
      )
      let (plainCall, plain) = try await Self.openStream(
        port: proxy.port,
        options: server.options,
        pool: server.pool
      )

      proxy.stall()
      // Neither call has a deadline: only keepalive can end the watched one.
      let close = try #require(
        await watched.waitForClose(upTo: 120),
        "keepalive did not end the call"
      )
      #expect(close.error?.code == .unavailable, "\(String(describing: close.error))")
      #expect(
        close.error?.message.contains("did not answer a keepalive ping within keepaliveTimeout")
          == true,
        "\(String(describing: close.error))"
      )
      #expect(
        plain.close == nil,
        "the call without keepalive closed: \(String(describing: plain.close))"
      )
      plainCall.cancel()
    }
  }

  /// An EmptyCall to a listener that accepts and never answers; returns its close.
  static func callSilentListener(
    _ configure: (inout GRPCCallOptions) -> Void
  ) async throws -> CallRecorder.Close {
    let silent = try FaultProxy(upstreamPort: nil)
    defer { silent.close() }
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions()
    options.transportType = .insecure
    configure(&options)
    let recorder = CallRecorder()
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(
        host: "127.0.0.1:\(silent.port)",
        path: "/grpc.testing.TestService/EmptyCall"
      ),
      responseHandler: recorder,
      callOptions: options,
      channelPool: pool
    )
    call.start()
    call.writeData(try Grpc_Testing_Empty().bytes)
    call.finish()
    // Longer than any deadline a test here gives the call: the call's end is what is checked.
    return try #require(await recorder.waitForClose(upTo: 2 * CloseWait.seconds))
  }

  @Test(
    "connectMinTimeout 0.5 s: a listener that never answers fails the call with UNAVAILABLE, long before its deadline"
  )
  func connectTimeoutApplies() async throws {
    // UNAVAILABLE, not DEADLINE_EXCEEDED after `CloseWait.seconds`, shows the connect timeout
    // ended it.
    let close = try await Self.callSilentListener {
      $0.connectMinTimeout = 0.5
      $0.timeout = CloseWait.seconds
    }
    #expect(close.error?.code == .unavailable, "\(String(describing: close.error))")
    #expect(
      close.error?.message
        == "The server did not complete the connection within 0.5 s (connectMinTimeout)"
    )
  }

  @Test("without connectMinTimeout the same listener keeps the call waiting until its deadline")
  func noConnectTimeoutWaits() async throws {
    let close = try await Self.callSilentListener { $0.timeout = 2 }
    #expect(close.error?.code == .deadlineExceeded, "\(String(describing: close.error))")
  }

  @Test(
    "a host's min connect timeout (300 ms) fails a v1 call to a silent listener with UNAVAILABLE, not at its deadline"
  )
  func hostConnectTimeout() async throws {
    let silent = try FaultProxy(upstreamPort: nil)
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
    call.timeout = CloseWait.seconds
    let error = await withCheckedContinuation { continuation in
      call.start(
        with: GRXHandlerWriteable.unaryHandler { (_: Data?, error: GRPCError?) in
          continuation.resume(returning: error)
        }
      )
    }
    // Without the host's setting the call would wait for its deadline: DEADLINE_EXCEEDED.
    #expect(error?.code == .unavailable, "\(String(describing: error))")
  }
}
