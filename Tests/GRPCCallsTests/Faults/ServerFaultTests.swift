import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// The server goes away under calls: shut down gracefully, killed outright, or cut off by the
/// client's own `disconnectAll()`.
@Suite("Server faults")
struct ServerFaultTests {
  @Test(
    "a server shutting down gracefully (GOAWAY): the calls in flight complete; new calls take a new connection"
  )
  func gracefulShutdown() async throws {
    let first = try await InteropServer.start(host: "127.0.0.1", port: 0)
    let second = try await InteropServer.start(host: "127.0.0.1", port: 0)
    defer { second.stop() }
    let proxy = try FaultProxy(upstreamPort: first.port)
    defer { proxy.close() }
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.timeout = CloseWait.seconds
    let client = InteropClient(
      target: "127.0.0.1:\(proxy.port)",
      callOptions: options,
      channelPool: pool
    )
    let streams = try (0 ..< 5).map { _ in
      let (call, recorder) = try client.makeCall("StreamingOutputCall")
      call.start()
      call.writeData(try ConnectionFaultTests.slowStream(count: 10, interval: .milliseconds(100)))
      call.finish()
      return recorder
    }
    for recorder in streams {
      #expect(await recorder.wait { $0.messages.count >= 1 }, "a stream did not start")
    }
    proxy.redirect(toPort: second.port)
    first.stop()
    for recorder in streams {
      let close = try #require(await recorder.waitForClose())
      #expect(close.error == nil, "an in-flight call failed: \(String(describing: close.error))")
      #expect(recorder.messages.count == 10)
    }
    expectEachClosedOnce(streams, with: [nil])
    // New calls succeed, and go to the server now behind the proxy over a new connection once
    // the old one has closed. (A server shutting down gracefully first says GOAWAY without a
    // last stream, then pings, then names the last stream: a call that comes in between is
    // still served on the old connection.)
    let deadline = ContinuousClock.now + .seconds(CloseWait.seconds)
    repeat {
      try await client.run(.emptyUnary)
    } while second.recorder.rpcs.isEmpty && ContinuousClock.now < deadline
    #expect(second.recorder.rpcs.count == 1)
    #expect(proxy.acceptedConnections >= 2)
  }

  /// A call of each shape, held open on the server: what is in flight when the server dies.
  static func openCalls(_ client: InteropClient) async throws -> [String: CallRecorder] {
    var open: [String: CallRecorder] = [:]
    let (server, serverRecorder) = try client.makeCall("StreamingOutputCall")
    server.start()
    // Ten minutes: only the fault ends it.
    server.writeData(try ConnectionFaultTests.slowStream(count: 6000, interval: .milliseconds(100)))
    server.finish()
    open["server streaming"] = serverRecorder

    let (bidi, bidiRecorder) = try client.makeCall("FullDuplexCall")
    bidi.start()
    bidi.writeData(try InteropRequests.stream(count: 1, size: 1).bytes)
    open["bidirectional streaming"] = bidiRecorder

    let (clientStream, clientRecorder) = try client.makeCall("StreamingInputCall")
    clientStream.start()
    clientStream.writeData(try Grpc_Testing_StreamingInputCallRequest().bytes)
    open["client streaming"] = clientRecorder

    #expect(await serverRecorder.wait { $0.messages.count >= 1 }, "the server stream did not start")
    #expect(
      await bidiRecorder.wait { $0.messages.count >= 1 },
      "the bidirectional stream did not answer"
    )
    return open
  }

  @Test(
    "the server process killed (SIGKILL) under calls of every shape: each closes once with UNAVAILABLE; after a restart on the same port calls succeed"
  )
  func serverKilled() async throws {
    let first = try ToolProcess(["serve", "--port", "0"])
    let listening = try await first.line(startingWith: "listening on ")
    let target = String(listening.dropFirst("listening on ".count))
    let port = try #require(target.split(separator: ":").last.flatMap { Int($0) })
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions().reconnectingSoon()
    options.transportType = .insecure
    // No deadline: only the kill may end the open calls, however long a busy machine takes to
    // get there (each wait below is bounded).
    options.timeout = 0
    let client = InteropClient(target: target, callOptions: options, channelPool: pool)

    let streams = try await Self.openCalls(client)
    let unary = CallBatch(
      client: client,
      method: "UnaryCall",
      request: try Grpc_Testing_SimpleRequest().bytes
    )
    let killer = Task {
      await unary.progress.wait { closed, _ in closed >= 30 }
      await first.kill()
      await unary.progress.wait { _, failed in failed >= 3 }
    }
    let recorders = try await unary.run(100, width: 10)
    await killer.value

    expectEachClosedOnce(recorders, with: [nil, .unavailable])
    #expect(recorders.contains { $0.close?.error != nil }, "the kill failed no unary call")
    for (shape, recorder) in streams {
      let close = await recorder.waitForClose()
      #expect(close?.error?.code == .unavailable, "\(shape): \(String(describing: close?.error))")
      #expect(recorder.closeCount == 1 && recorder.deliveryContractHeld, "\(shape)")
    }

    let second = try ToolProcess(["serve", "--port", "\(port)"])
    _ = try await second.line(startingWith: "listening on ")
    let error = await recoveredError(client)
    #expect(error == nil, "the channel did not recover: \(String(describing: error))")
    await second.kill()
  }

  @Test(
    "disconnectAll() racing 100 calls in flight, five times: each closes once, OK or UNAVAILABLE; then calls succeed"
  )
  func disconnectAllRacingCalls() async throws {
    try await withTestServer { server in
      var options = server.options
      options.timeout = CloseWait.seconds
      let client = InteropClient(
        target: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      var request = Grpc_Testing_SimpleRequest()
      request.responseSize = 4096
      for round in 0 ..< 5 {
        let batch = CallBatch(client: client, method: "UnaryCall", request: try request.bytes)
        let disconnecter = Task {
          await batch.progress.wait { closed, _ in closed >= 10 + round * 15 }
          server.pool.disconnectAll()
        }
        let recorders = try await batch.run(100, width: 20)
        await disconnecter.value
        expectEachClosedOnce(recorders, with: [nil, .unavailable])
        let error = await recoveredError(client)
        #expect(
          error == nil,
          "round \(round): the channel did not recover: \(String(describing: error))"
        )
      }
    }
  }
}
