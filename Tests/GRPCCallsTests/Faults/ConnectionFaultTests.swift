import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

/// One connection fails under a call: reset mid-response, cut after some bytes, silent, refused,
/// slow, or cut during the TLS handshake. Each call closes exactly once with the code the fault
/// calls for, and the channel serves new calls once the fault is gone.
@Suite("Connection faults")
struct ConnectionFaultTests {
  /// A StreamingOutputCall request for `count` small messages, `interval` apart.
  static func slowStream(count: Int, interval: Duration) throws -> Data {
    var request = InteropRequests.stream(count: count, size: 8)
    for index in request.responseParameters.indices {
      request.responseParameters[index].intervalUs = Int32(interval / .microseconds(1))
    }
    return try request.bytes
  }

  /// A client of `server` through a proxy, and the proxy.
  static func proxied(
    _ server: TestServer,
    timeout: TimeInterval = CloseWait.seconds
  ) throws -> (InteropClient, FaultProxy) {
    let proxy = try FaultProxy(upstreamPort: server.server.port)
    var options = server.options
    options.timeout = timeout
    return (
      InteropClient(
        target: "127.0.0.1:\(proxy.port)",
        callOptions: options,
        channelPool: server.pool
      ), proxy
    )
  }

  @Test(
    "a reset after the response headers and before the trailers: UNAVAILABLE once, then a new connection serves",
    arguments: RPCPath.allCases
  )
  func resetMidResponse(path: RPCPath) async throws {
    try await withTestServer(path: path) { server in
      let (client, proxy) = try Self.proxied(server)
      defer { proxy.close() }
      // A ping-pong stream: the answer to the first request has come, the stream stays open
      // until the client half-closes, and so the trailers are still to come.
      let (call, recorder) = try client.makeCall("FullDuplexCall")
      call.start()
      call.writeData(try InteropRequests.stream(count: 1, size: 8).bytes)
      #expect(await recorder.wait { $0.messages.count >= 1 }, "no response before the fault")
      proxy.resetConnections()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .unavailable, "\(String(describing: close.error))")
      #expect(close.trailers == nil)
      #expect(recorder.messages.count == 1)
      #expect(recorder.initialMetadata != nil)
      let error = await recoveredError(client)
      #expect(error == nil, "the channel did not recover: \(String(describing: error))")
      #expect(recorder.closeCount == 1 && recorder.deliveryContractHeld)
      #expect(
        proxy.acceptedConnections >= 2,
        "no new connection after \(String(describing: close.error))"
      )
    }
  }

  @Test(
    "a peer that goes silent mid-stream, without keepalive: the deadline ends the call with DEADLINE_EXCEEDED"
  )
  func silentMidStream() async throws {
    try await withTestServer { server in
      let (client, proxy) = try Self.proxied(server)
      defer { proxy.close() }
      // The deadline must leave time for the first answer, which a busy machine may delay past
      // any fixed figure: a call whose deadline came first is tried again with a longer one.
      var attempt: (call: GRPCCall2, recorder: CallRecorder)?
      for seconds in [15.0, 45, 120] where attempt == nil {
        var options = server.options
        options.timeout = seconds
        // A ping-pong stream: each request is answered, and the stream stays open until the
        // client half-closes, so only the deadline can end it.
        let (call, recorder) = try client.makeCall("FullDuplexCall", options: options)
        call.start()
        call.writeData(try InteropRequests.stream(count: 1, size: 8).bytes)
        await recorder.wait(upTo: seconds + CloseWait.seconds) {
          $0.messages.count >= 1 || $0.close != nil
        }
        if recorder.messages.count >= 1 {
          attempt = (call, recorder)
        } else {
          #expect(recorder.close?.error?.code == .deadlineExceeded, "\(recorder.events)")
        }
      }
      let (call, recorder) = try #require(attempt, "no answer before any deadline")
      proxy.stall()
      // Answered if the peer were still there.
      call.writeData(try InteropRequests.stream(count: 1, size: 8).bytes)
      let close = try #require(await recorder.waitForClose(upTo: 180))
      #expect(close.error?.code == .deadlineExceeded, "\(String(describing: close.error))")
      #expect(recorder.messages.count == 1)
      #expect(recorder.closeCount == 1 && recorder.deliveryContractHeld)
      proxy.inject(.none)
      proxy.resetConnections()
      let error = await recoveredError(client)
      #expect(error == nil, "the channel did not recover: \(String(describing: error))")
    }
  }

  @Test(
    "connections cut after 4 KiB under 50 calls, 10 at a time: each closes once, OK or UNAVAILABLE; then calls succeed"
  )
  func cutAfterBytes() async throws {
    try await withTestServer { server in
      let (client, proxy) = try Self.proxied(server)
      defer { proxy.close() }
      proxy.inject(.closeAfter(bytes: 4096))
      var request = Grpc_Testing_SimpleRequest()
      request.responseSize = 1024
      request.payload.body = Data(count: 1024)
      let batch = CallBatch(client: client, method: "UnaryCall", request: try request.bytes)
      let recorders = try await batch.run(50, width: 10)
      expectEachClosedOnce(recorders, with: [nil, .unavailable])
      #expect(recorders.contains { $0.close?.error != nil }, "the cuts failed no call")
      #expect(proxy.acceptedConnections > 1)
      proxy.inject(.none)
      let error = await recoveredError(client)
      #expect(error == nil, "the channel did not recover: \(String(describing: error))")
    }
  }

  @Test(
    "refused connections fail a call fast with UNAVAILABLE, not at its deadline; the call waiting for ready succeeds once the port listens"
  )
  func refused() async throws {
    try await withTestServer { server in
      let (proxied, proxy) = try Self.proxied(server)
      defer { proxy.close() }
      // The call waiting for ready shares the channel that saw the refusal.
      var client = proxied
      client.callOptions = client.callOptions.reconnectingSoon()
      proxy.stopListening()
      let failed = try await server.completeThrough(client, "EmptyCall", Grpc_Testing_Empty())
      #expect(failed.error?.code == .unavailable, "\(String(describing: failed.error))")
      var waiting = client
      waiting.callOptions.waitForReady = true
      let (call, recorder) = try waiting.makeCall("EmptyCall")
      call.start()
      call.writeData(try Grpc_Testing_Empty().bytes)
      call.finish()
      try proxy.startListening()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error == nil, "\(String(describing: close.error))")
    }
  }

  @Test("a slow network (20 ms per chunk, then 512 KiB/s): large calls are slower, and all succeed")
  func slowNetwork() async throws {
    try await withTestServer { server in
      let (client, proxy) = try Self.proxied(server)
      defer { proxy.close() }
      var request = Grpc_Testing_SimpleRequest()
      request.responseSize = 64 * 1024
      request.payload.body = Data(count: 64 * 1024)
      for fault in [
        FaultProxy.Fault.delay(.milliseconds(20)), .bandwidth(bytesPerSecond: 512 * 1024),
      ] {
        proxy.inject(fault)
        let recorders = try await CallBatch(
          client: client,
          method: "UnaryCall",
          request: try request.bytes
        ).run(10, width: 5)
        expectEachClosedOnce(recorders, with: [nil])
        #expect(recorders.allSatisfy { ($0.messages.first?.count ?? 0) > 64 * 1024 })
      }
    }
  }

  @Test(
    "a TLS handshake cut off: UNAVAILABLE once, saying the handshake ended early, word for word"
  )
  func tlsHandshakeCut() async throws {
    let certificates = try TLSTests.certificates.get()
    try await withTestServer(tls: certificates.serverTLS()) { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      // The client's hello passes; the server's answer is cut short.
      proxy.inject(.closeAfter(bytes: 700))
      let client = InteropClient(
        target: "127.0.0.1:\(proxy.port)",
        callOptions: TLSTests.options(roots: certificates.caPEM),
        channelPool: server.pool
      )
      let close = try await server.completeThrough(client, "EmptyCall", Grpc_Testing_Empty())
      #expect(close.error?.code == .unavailable, "\(String(describing: close.error))")
      #expect(
        close.error?.message == "The TLS handshake with the server failed: EOF during handshake"
      )
      proxy.inject(.none)
      let error = await recoveredError(client)
      #expect(error == nil, "the channel did not recover: \(String(describing: error))")
    }
  }
}

extension TestServer {
  /// Makes `method` through `client`, sends `request`, half-closes and waits for the close.
  func completeThrough(
    _ client: InteropClient,
    _ method: String,
    _ request: some SwiftProtobuf.Message
  ) async throws -> CallRecorder.Close {
    let (call, recorder) = try client.makeCall(method)
    call.start()
    call.writeData(try request.bytes)
    call.finish()
    return try #require(await recorder.waitForClose(), "\(method) did not close")
  }
}
