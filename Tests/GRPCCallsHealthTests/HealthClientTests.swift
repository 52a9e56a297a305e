import Foundation
import GRPCCalls
import GRPCCallsHealth
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@Suite("Health client over loopback")
struct HealthClientTests {
  /// Quick to come back, so the tests wait for events rather than for backoffs.
  static let watchOptions = GRPCHealthWatchOptions(
    initialBackoff: 0.05,
    maxBackoff: 0.2,
    pollInterval: 0.05
  )

  /// Sets `service`'s status on `server` through a TestService call.
  static func set(_ service: String, _ status: String, on server: TestServer) async throws {
    var options = server.options
    options.initialMetadata.addString("\(service)=\(status)", forKey: InteropHealthService.setKey)
    let (_, _, close) = try await server.complete(
      "EmptyCall",
      Grpc_Testing_Empty(),
      options: options
    )
    #expect(close.error == nil)
  }

  /// Runs `body`, cancelling it (so that its waits end and its expectations fail) if it has
  /// not finished within `seconds`: a generous bound, so that a broken watch fails the test
  /// rather than hanging it.
  static func within(
    _ seconds: Double = CloseWait.seconds,
    _ body: @escaping @Sendable () async throws -> Void
  ) async throws {
    try await withThrowingTaskGroup(of: Bool.self) { group in
      group.addTask {
        try await body()
        return true
      }
      group.addTask {
        try? await Task.sleep(for: .seconds(seconds))
        return false
      }
      let finished = try await group.next() ?? false
      group.cancelAll()
      if !finished { Issue.record("not done within \(Int(seconds)) s") }
      while try await group.next() != nil {}
    }
  }

  /// The statuses `statuses` yields until it has yielded `expected`, in order; fails when the
  /// stream ends first.
  static func expect(
    _ expected: [GRPCServingStatus],
    from iterator: inout AsyncThrowingStream<GRPCServingStatus, any Error>.Iterator
  ) async throws {
    for status in expected {
      let next = try await iterator.next()
      #expect(next == status)
    }
  }

  @Test("check, list and an unknown service on our server")
  func checkAndList() async throws {
    try await withTestServer { server in
      let health = GRPCHealthClient(
        host: server.server.target,
        callOptions: server.options,
        channelPool: server.pool
      )
      #expect(try await health.check() == .serving)
      #expect(try await health.check(service: "no.such.Service") == .serviceUnknown)
      try await Self.set("kv.Store", "NOT_SERVING", on: server)
      #expect(try await health.check(service: "kv.Store") == .notServing)
      let all = try await health.list()
      #expect(
        all["kv.Store"] == .notServing && all[""] == .serving
          && all["grpc.testing.TestService"] == .serving
      )
    }
  }

  @Test(
    "watch: Watch answered UNIMPLEMENTED falls back to polling Check, and still sees each change"
  )
  func pollingFallback() async throws {
    try await withTestServer { server in
      var options = server.options
      options.initialMetadata.addString("1", forKey: InteropHealthService.noWatchKey)
      let health = GRPCHealthClient(
        host: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      try await Self.set("kv.Store", "SERVING", on: server)
      try await Self.within {
        var statuses = health.watch(service: "kv.Store", options: Self.watchOptions)
          .makeAsyncIterator()
        try await Self.expect([.serving], from: &statuses)
        try await Self.set("kv.Store", "NOT_SERVING", on: server)
        try await Self.expect([.notServing], from: &statuses)
      }
    }
  }

  @Test(
    "a server without a health service: check and watch fail with UNIMPLEMENTED saying how to add one"
  )
  func noHealthService() async throws {
    try await withTestServer { server in
      var options = server.options
      options.initialMetadata.addString("1", forKey: InteropHealthService.noHealthKey)
      let health = GRPCHealthClient(
        host: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      let isExplained: @Sendable (any Error) -> Bool = { error in
        guard let error = error as? GRPCError else { return false }
        return error.code == .unimplemented && error.message.contains("grpcio-health-checking")
      }
      await #expect(performing: { try await health.check() }, throws: isExplained)
      try await Self.within {
        await #expect(
          performing: {
            for try await status in health.watch(options: Self.watchOptions) {
              Issue.record("a status: \(status)")
            }
          },
          throws: isExplained
        )
      }
      let (failures, failed) = AsyncStream.makeStream(of: GRPCError.self)
      let watch = health.watch(
        options: Self.watchOptions,
        queue: DispatchQueue(label: "health-test")
      ) { status in
        Issue.record("a status: \(status)")
      } onFailure: { error in
        failed.yield(error)
        failed.finish()
      }
      try await Self.within {
        var iterator = failures.makeAsyncIterator()
        let failure = await iterator.next()
        #expect(failure.map(isExplained) == true)
      }
      watch.cancel()
    }
  }

  @Test("watch: the network goes away and comes back; the watch yields UNKNOWN, then the status")
  func reconnects() async throws {
    try await withTestServer { server in
      // Through a proxy that keeps its port: the watch reconnects to the same address, which
      // no other test's server can take meanwhile.
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      let health = GRPCHealthClient(
        host: "127.0.0.1:\(proxy.port)",
        callOptions: server.options.reconnectingSoon(),
        channelPool: server.pool
      )
      try await Self.within {
        var statuses = health.watch(options: Self.watchOptions).makeAsyncIterator()
        try await Self.expect([.serving], from: &statuses)
        proxy.stopListening()
        try await Self.expect([.unknown], from: &statuses)
        try proxy.startListening()
        try await Self.expect([.serving], from: &statuses)
      }
      #expect(proxy.acceptedConnections >= 2)
    }
  }

  @Test("watch, callback face: statuses on the queue; cancel ends the server's Watch")
  func callbackWatch() async throws {
    try await withTestServer { server in
      let health = GRPCHealthClient(
        host: server.server.target,
        callOptions: server.options,
        channelPool: server.pool
      )
      let (seen, add) = AsyncThrowingStream.makeStream(of: GRPCServingStatus.self)
      let queue = DispatchQueue(label: "health-test")
      let watch = health.watch(service: "kv.Store", options: Self.watchOptions, queue: queue) {
        status in
        dispatchPrecondition(condition: .onQueue(queue))
        add.yield(status)
      }
      try await Self.within {
        var iterator = seen.makeAsyncIterator()
        try await Self.expect([.serviceUnknown], from: &iterator)
        try await Self.set("kv.Store", "SERVING", on: server)
        try await Self.expect([.serving], from: &iterator)
      }
      watch.cancel()
      try await Self.within {
        while server.recorder.health.activeWatches > 0 {
          try await Task.sleep(for: .milliseconds(10))
        }
      }
      try await Self.set("kv.Store", "NOT_SERVING", on: server)
      // A status set after the cancel must not arrive: the next thing on the queue is this.
      queue.async { add.finish() }
      var rest: [GRPCServingStatus] = []
      for try await status in seen { rest.append(status) }
      #expect(rest.isEmpty)
    }
  }
}
