import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// The network goes away under large unary calls and comes back on the same port, as in gRPC
/// Objective-C's network-flap stress tests.
@Suite("Network flap")
struct NetworkFlapTests {
  /// 128 KiB each way: a call spans many reads of the proxy, so the cut lands mid-message.
  static func largeRequest() throws -> Data {
    var request = Grpc_Testing_SimpleRequest()
    request.responseSize = 128 * 1024
    request.payload.body = Data(count: 128 * 1024)
    return try request.bytes
  }

  @Test(
    "a flap during 100 large unary calls: each closes once with OK or UNAVAILABLE; calls waiting for ready fail only on the cut connection",
    arguments: [1, 10],
    [false, true]
  )
  func flap(width: Int, waitForReady: Bool) async throws {
    try await withTestServer { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      var options = server.options.reconnectingSoon()
      options.timeout = CloseWait.seconds
      options.waitForReady = waitForReady
      let client = InteropClient(
        target: "127.0.0.1:\(proxy.port)",
        callOptions: options,
        channelPool: server.pool
      )
      let batch = CallBatch(client: client, method: "UnaryCall", request: try Self.largeRequest())
      let flapper = Task { () throws -> ContinuousClock.Instant in
        await batch.progress.wait { closed, _ in closed >= 30 }
        proxy.stopListening()
        if waitForReady {
          // Calls now wait for a connection; how long the network stays down is the fault's
          // own parameter, not something the test measures.
          try? await Task.sleep(for: .milliseconds(500))
        } else {
          // Calls now fail fast; bring the network back once some have.
          await batch.progress.wait { _, failed in failed >= 3 }
        }
        try proxy.startListening()
        return .now
      }
      let recorders = try await batch.run(100, width: width)
      let restarted = try await flapper.value

      #expect(recorders.count == 100)
      expectEachClosedOnce(recorders, with: [nil, .unavailable])
      let failed = recorders.count { $0.close?.error != nil }
      if waitForReady {
        // Only calls whose bytes were on the cut connection may fail (those in flight, and
        // those the client put on it before it saw the reset); the others waited for the
        // network, reconnected and succeeded.
        let failedAfterRestart = zip(recorders, batch.progress.startTimes).filter {
          recorder,
          start in
          start > restarted && recorder.close?.error != nil
        }
        #expect(
          failedAfterRestart.isEmpty,
          "\(failedAfterRestart.count) calls made after the network came back failed"
        )
        #expect(failed < 50, "\(failed) of 100 calls failed")
        #expect(proxy.acceptedConnections >= 2, "the calls did not reconnect")
      } else {
        #expect(failed > 0, "the flap failed no call: it did not happen during the batch")
      }
      let error = await recoveredError(client)
      #expect(error == nil, "the channel did not recover: \(String(describing: error))")
      #expect(proxy.acceptedConnections >= 2, "the client never reconnected")
    }
  }
}
