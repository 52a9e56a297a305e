import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// More calls than the server takes at once: the channel queues them, none is lost.
@Suite("Load")
struct LoadTests {
  /// How many calls: 500 in a plain `swift test`; `.ci/run` runs this test alone with
  /// `GRPC_CALLS_LOAD_CALLS=10000`. Beyond the server's stream limit, calls wait on their
  /// connection for a free slot (`ConnectionRecord`): 10,000 at once keep the shared event loops
  /// busy for tens of seconds in a debug build, which other suites running beside it would feel
  /// as timeouts.
  static var calls: Int {
    ProcessInfo.processInfo.environment["GRPC_CALLS_LOAD_CALLS"].flatMap { Int($0) } ?? 500
  }

  @Test(
    "thousands of concurrent unary calls on one channel, against a server that takes 100 streams at a time: all succeed, each closes once"
  )
  func concurrentBeyondStreamLimit() async throws {
    let count = Self.calls
    try await withTestServer(maxConcurrentStreams: 100) { server in
      var options = server.options
      // Generous: the calls queue behind each other on a busy 2-core machine.
      options.timeout = 600
      let client = InteropClient(
        target: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      var request = Grpc_Testing_SimpleRequest()
      request.responseSize = 16
      let batch = CallBatch(client: client, method: "UnaryCall", request: try request.bytes)
      let recorders = try await batch.run(count, width: count)
      #expect(recorders.count == count)
      expectEachClosedOnce(recorders, with: [nil])
      #expect(server.recorder.rpcs.count == count)
      #expect(server.pool.channelCount == 1)
    }
  }
}
