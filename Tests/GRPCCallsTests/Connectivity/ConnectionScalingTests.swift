import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import MetricsTestKit
import Testing

@Suite("Connections per target")
struct ConnectionScalingTests {
  /// A server stream of 5 small messages, 20 ms apart.
  static func streamRequest() throws -> Data {
    var request = InteropRequests.stream(count: 5, size: 8)
    for index in request.responseParameters.indices {
      request.responseParameters[index].intervalUs = 20_000
    }
    return try request.bytes
  }

  /// Options for four connections.
  static func options() -> GRPCCallOptions {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.timeout = 120
    options.connectionsPerTarget = 4
    return options
  }

  @Test(
    "1,000 concurrent streams, MAX_CONCURRENT_STREAMS 100, 4 connections: 4 connections open, at most 100 streams on each, none fails"
  )
  func thousandStreamsOverFourConnections() async throws {
    let server = try await InteropServer.start(
      host: "127.0.0.1",
      port: 0,
      compression: false,
      maxConcurrentStreams: 100
    )
    let metrics = TestMetrics()
    var config = GRPCChannelPool.Config.forTests
    config.metricsFactory = metrics
    let pool = GRPCChannelPool(config: config)
    let client = InteropClient(
      target: server.target,
      callOptions: Self.options(),
      channelPool: pool
    )
    let batch = CallBatch(
      client: client,
      method: "StreamingOutputCall",
      request: try Self.streamRequest()
    )

    let recorders = try await batch.run(1000, width: 1000)
    expectEachClosedOnce(recorders, with: [nil])
    #expect(recorders.allSatisfy { $0.messages.count == 5 })

    #expect(server.recorder.acceptedConnections == 4)
    let perConnection = server.recorder.mostRespondingStreamsPerConnection
    #expect(perConnection.count == 4, "\(perConnection)")
    #expect(perConnection.values.allSatisfy { $0 <= 100 }, "\(perConnection)")
    let calls = Dictionary(grouping: server.recorder.rpcs, by: \.peer).mapValues(\.count)
    #expect(calls.values.allSatisfy { $0 >= 150 }, "calls per connection: \(calls)")

    let dimensions = [("target", server.target)]
    let opened = try metrics.expectCounter("grpc_calls.connections.opened", dimensions)
    #expect(opened.totalValue == 4)
    let inFlight = try metrics.expectMeter("grpc_calls.calls.in_flight", dimensions)
    #expect(inFlight.lastValue == 0)
    #expect((inFlight.values.max() ?? 0) > 100, "the calls did not run at once")

    pool.shutDown()
    await server.stopAndWait()
    let closed = await eventually {
      (try? metrics.expectCounter("grpc_calls.connections.closed", dimensions))
        .flatMap { $0.totalValue == 4 ? true : nil }
    }
    #expect(closed == true, "the four connections did not all close")
  }

  @Test("calls one after another use one connection of four")
  func sequentialCallsUseOneConnection() async throws {
    let server = try await InteropServer.start(host: "127.0.0.1", port: 0, compression: false)
    let pool = GRPCChannelPool(config: .forTests)
    let client = InteropClient(
      target: server.target,
      callOptions: Self.options(),
      channelPool: pool
    )
    let batch = CallBatch(
      client: client,
      method: "UnaryCall",
      request: try unaryRequest(responseBytes: 10).bytes
    )
    let recorders = try await batch.run(50, width: 1)
    expectEachClosedOnce(recorders, with: [nil])
    #expect(server.recorder.acceptedConnections == 1)
    pool.shutDown()
    await server.stopAndWait()
  }

  @Test("connectionsPerTarget is at least 1 and at most 64, and keeps channels apart")
  func option() {
    var options = GRPCCallOptions()
    #expect(options.connectionsPerTarget == 1)
    options.connectionsPerTarget = 0
    #expect(options.connectionsPerTarget == 1)
    options.connectionsPerTarget = 1000
    #expect(options.connectionsPerTarget == GRPCCallOptions.maxConnectionsPerTarget)
  }
}
