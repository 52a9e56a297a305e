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
  static let watchOptions = GRPCHealthWatchOptions(initialBackoff: 0.05, maxBackoff: 0.2, pollInterval: 0.05)

  /// Sets `service`'s status on `server` through a TestService call.
  static func set(_ service: String, _ status: String, on server: TestServer) async throws {
    var options = server.options
    options.initialMetadata.addString("\(service)=\(status)", forKey: InteropHealthService.setKey)
    let (_, _, close) = try await server.complete("EmptyCall", Grpc_Testing_Empty(), options: options)
    #expect(close.error == nil)
  }

  /// Runs `body`, cancelling it (so that its waits end and its expectations fail) if it has
  /// not finished within `seconds`: a generous bound, so that a broken watch fails the test
  /// rather than hanging it.
  static func within(_ seconds: Double = 60, _ body: @escaping @Sendable () async throws -> Void) async throws {
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
    from iterator: inout AsyncStream<GRPCServingStatus>.Iterator
  ) async {
    for status in expected {
      let next = await iterator.next()
      #expect(next == status)
    }
  }

  @Test("check, list and an unknown service on our server")
  func checkAndList() async throws {
    try await withTestServer { server in
      let health = GRPCHealthClient(host: server.server.target, callOptions: server.options, channelPool: server.pool)
      #expect(try await health.check() == .serving)
      #expect(try await health.check(service: "no.such.Service") == .serviceUnknown)
      try await Self.set("kv.Store", "NOT_SERVING", on: server)
      #expect(try await health.check(service: "kv.Store") == .notServing)
      let all = try await health.list()
      #expect(all["kv.Store"] == .notServing && all[""] == .serving && all["grpc.testing.TestService"] == .serving)
    }
  }

  @Test("watch: Watch answered UNIMPLEMENTED falls back to polling Check, and still sees each change")
  func pollingFallback() async throws {
    try await withTestServer { server in
      var options = server.options
      options.initialMetadata.addString("1", forKey: InteropHealthService.noWatchKey)
      let health = GRPCHealthClient(host: server.server.target, callOptions: options, channelPool: server.pool)
      try await Self.set("kv.Store", "SERVING", on: server)
      try await Self.within {
        var statuses = health.watch(service: "kv.Store", options: Self.watchOptions).makeAsyncIterator()
        await Self.expect([.serving], from: &statuses)
        try await Self.set("kv.Store", "NOT_SERVING", on: server)
        await Self.expect([.notServing], from: &statuses)
      }
    }
  }

  @Test("watch: the server goes away and comes back on the same port; the watch yields UNKNOWN, then the status")
  func reconnects() async throws {
    let first = try await InteropServer.start(host: "127.0.0.1", port: 0)
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions()
    options.transportType = .insecure
    let health = GRPCHealthClient(host: first.target, callOptions: options, channelPool: pool)
    let second = LockedValue<InteropServer?>(nil)
    try await Self.within {
      var statuses = health.watch(options: Self.watchOptions).makeAsyncIterator()
      await Self.expect([.serving], from: &statuses)
      await first.stopAndWait()
      await Self.expect([.unknown], from: &statuses)
      let restarted = try await InteropServer.start(host: "127.0.0.1", port: first.port)
      second.withLock { $0 = restarted }
      await Self.expect([.serving], from: &statuses)
    }
    await first.stopAndWait()
    await second.withLock { $0 }?.stopAndWait()
  }

  @Test("watch, callback face: statuses on the queue; cancel ends the server's Watch")
  func callbackWatch() async throws {
    try await withTestServer { server in
      let health = GRPCHealthClient(host: server.server.target, callOptions: server.options, channelPool: server.pool)
      let (seen, add) = AsyncStream.makeStream(of: GRPCServingStatus.self)
      let queue = DispatchQueue(label: "health-test")
      let watch = health.watch(service: "kv.Store", options: Self.watchOptions, queue: queue) { status in
        dispatchPrecondition(condition: .onQueue(queue))
        add.yield(status)
      }
      try await Self.within {
        var iterator = seen.makeAsyncIterator()
        await Self.expect([.serviceUnknown], from: &iterator)
        try await Self.set("kv.Store", "SERVING", on: server)
        await Self.expect([.serving], from: &iterator)
      }
      watch.cancel()
      try await Self.within {
        while server.recorder.health.activeWatches > 0 { try await Task.sleep(for: .milliseconds(10)) }
      }
      try await Self.set("kv.Store", "NOT_SERVING", on: server)
      // A status set after the cancel must not arrive: the next thing on the queue is this.
      queue.async { add.finish() }
      var rest: [GRPCServingStatus] = []
      for await status in seen { rest.append(status) }
      #expect(rest.isEmpty)
    }
  }
}
