import Foundation
import GRPCCalls
import GRPCCallsInterceptors
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Synchronization
import Testing

@Suite("Response cache interceptor over loopback")
struct ResponseCacheInterceptorTests {
  struct Answer {
    var body: Data?
    var close: CallRecorder.Close
    var recorder: CallRecorder
  }

  /// Calls `method` with a request whose payload is `payload` and waits for the close.
  static func call(
    _ server: TestServer,
    _ cache: GRPCResponseCacheInterceptorFactory,
    payload: String,
    method: String = "CacheableUnaryCall",
    safety: GRPCCallSafety = .cacheable,
    flowControl: Bool = false
  ) async throws -> Answer {
    var options = server.options
    options.interceptorFactories = [cache]
    options.enableFlowControl = flowControl
    var request = Grpc_Testing_SimpleRequest()
    request.payload.body = Data(payload.utf8)
    let (call, recorder) = try server.call(method, options: options, safety: safety)
    call.start()
    call.writeData(try request.serializedData())
    call.finish()
    if flowControl {
      call.receiveNextMessages(1)
    }
    let close = try #require(await recorder.waitForClose())
    let body = try recorder.messages.first.map {
      try Grpc_Testing_SimpleResponse(serializedBytes: $0).payload.body
    }
    return Answer(body: body, close: close, recorder: recorder)
  }

  static func serverCalls(_ server: TestServer) -> Int { server.recorder.rpcs.count }

  /// A cache whose clock stands still: its entries do not age while a busy machine stalls the
  /// test between two calls (`maxAgeExpiry` moves a clock of its own).
  static func frozen(
    _ config: GRPCResponseCacheInterceptorFactory.Config = .defaults
  ) -> GRPCResponseCacheInterceptorFactory {
    let clock = ManualClock()
    return GRPCResponseCacheInterceptorFactory(config: config, now: { clock.now() })
  }

  @Test(
    "an identical cacheable call is answered from the cache: same body, no new server call; another request misses"
  )
  func hitAndMiss() async throws {
    try await withTestServer { server in
      let cache = Self.frozen()
      let first = try await Self.call(server, cache, payload: "a")
      #expect(first.close.error == nil)
      let second = try await Self.call(server, cache, payload: "a")
      #expect(second.close.error == nil)
      #expect(second.body == first.body)
      #expect(
        second.recorder.initialMetadata?[stringValues: "cache-control"].contains(
          "max-age=60, public"
        ) == true
      )
      #expect(Self.serverCalls(server) == 1)

      let other = try await Self.call(server, cache, payload: "b")
      #expect(other.body != first.body)
      #expect(Self.serverCalls(server) == 2)

      // With flow control the cached message waits for the demand, then arrives.
      let controlled = try await Self.call(server, cache, payload: "a", flowControl: true)
      #expect(controlled.body == first.body)
      #expect(Self.serverCalls(server) == 2)
      #expect(second.recorder.deliveryContractHeld)
    }
  }

  @Test("max-age: a response is reused until it is 60 s old, then fetched again")
  func maxAgeExpiry() async throws {
    try await withTestServer { server in
      let clock = ManualClock()
      let cache = GRPCResponseCacheInterceptorFactory(now: { clock.now() })
      let first = try await Self.call(server, cache, payload: "a")
      clock.advance(by: 59)
      #expect(try await Self.call(server, cache, payload: "a").body == first.body)
      clock.advance(by: 2)
      let expired = try await Self.call(server, cache, payload: "a")
      #expect(expired.body != first.body)
      #expect(Self.serverCalls(server) == 2)
    }
  }

  @Test("LRU: with room for two, the least recently used response is evicted")
  func lruEviction() async throws {
    try await withTestServer { server in
      var config = GRPCResponseCacheInterceptorFactory.Config.defaults
      config.maxEntries = 2
      let cache = Self.frozen(config)
      _ = try await Self.call(server, cache, payload: "a")
      _ = try await Self.call(server, cache, payload: "b")
      _ = try await Self.call(server, cache, payload: "a")  // a hit: b is now the oldest
      _ = try await Self.call(server, cache, payload: "c")  // evicts b
      #expect(Self.serverCalls(server) == 3)
      #expect(cache.count == 2)
      _ = try await Self.call(server, cache, payload: "a")
      #expect(Self.serverCalls(server) == 3)
      _ = try await Self.call(server, cache, payload: "b")
      #expect(Self.serverCalls(server) == 4)
    }
  }

  @Test("the byte bound evicts too, and a response larger than the cache is not kept")
  func byteBound() async throws {
    try await withTestServer { server in
      // One response's size, from a call the cache does not keep.
      let probe = try await Self.call(
        server,
        GRPCResponseCacheInterceptorFactory(),
        payload: "a",
        safety: .default
      )
      let size = try #require(probe.recorder.messages.first?.count)
      var config = GRPCResponseCacheInterceptorFactory.Config.defaults
      config.maxBytes = size + size / 2
      let cache = Self.frozen(config)
      _ = try await Self.call(server, cache, payload: "a")
      _ = try await Self.call(server, cache, payload: "b")
      #expect(cache.count == 1)
      _ = try await Self.call(server, cache, payload: "b")
      #expect(Self.serverCalls(server) == 3)
      config.maxBytes = size / 2
      let tiny = Self.frozen(config)
      _ = try await Self.call(server, tiny, payload: "a")
      #expect(tiny.count == 0)
    }
  }

  @Test("not cached: methods not marked cacheable, failed calls, and responses without a lifetime")
  func notCached() async throws {
    try await withTestServer { server in
      let cache = Self.frozen()
      _ = try await Self.call(server, cache, payload: "a", safety: .default)
      _ = try await Self.call(server, cache, payload: "a", safety: .default)
      #expect(Self.serverCalls(server) == 2)

      // UnaryCall sends no cache-control: listed, it is cached only with a default lifetime.
      var config = GRPCResponseCacheInterceptorFactory.Config.defaults
      config.cachedPaths = ["/grpc.testing.TestService/UnaryCall"]
      let listed = Self.frozen(config)
      _ = try await Self.call(server, listed, payload: "a", method: "UnaryCall", safety: .default)
      #expect(listed.count == 0)
      config.defaultLifetime = 30
      let withLifetime = Self.frozen(config)
      _ = try await Self.call(
        server,
        withLifetime,
        payload: "a",
        method: "UnaryCall",
        safety: .default
      )
      _ = try await Self.call(
        server,
        withLifetime,
        payload: "a",
        method: "UnaryCall",
        safety: .default
      )
      #expect(Self.serverCalls(server) == 4)

      // A failure is never kept.
      var failing = Grpc_Testing_SimpleRequest()
      failing.responseStatus.code = 2
      var options = server.options
      options.interceptorFactories = [withLifetime]
      for _ in 0 ..< 2 {
        let (_, _, close) = try await server.complete("UnaryCall", failing, options: options)
        #expect(close.error?.code == .unknown)
      }
      #expect(withLifetime.count == 1)
    }
  }

  @Test("the interop cacheable_unary case passes through the cache, and fails without one")
  func interopCase() async throws {
    try await withTestServer { server in
      var client = server.client
      await #expect(throws: InteropCaseFailure.self) { try await client.cacheableUnary() }
      client.callOptions.interceptorFactories = [Self.frozen()]
      try await client.cacheableUnary()
    }
  }
}
