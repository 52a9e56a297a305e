import Foundation
import GRPCCalls
import GRPCCallsInterceptors
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

@Suite("Token refresh interceptor over loopback")
struct TokenRefreshInterceptorTests {
  /// A token source that hands out `t1`, `t2`, … valid for `lifetime` seconds of `clock`, and
  /// counts its fetches.
  final class Source: Sendable {
    let clock: ManualClock
    let lifetime: TimeInterval?
    let failure: GRPCError?
    private let count = LockedValue(0)
    /// Whether fetches wait for ``release()``, and the one waiting.
    private let gate: LockedValue<(held: Bool, waiter: CheckedContinuation<Void, Never>?)>

    /// - Parameter held: Fetches wait until ``release()``.
    init(
      clock: ManualClock = ManualClock(),
      lifetime: TimeInterval? = nil,
      failure: GRPCError? = nil,
      held: Bool = false
    ) {
      self.clock = clock
      self.lifetime = lifetime
      self.failure = failure
      self.gate = LockedValue((held, nil))
    }

    /// Lets a held fetch, and every later one, go on.
    func release() {
      let waiter = self.gate.withLock { gate in
        gate.held = false
        defer { gate.waiter = nil }
        return gate.waiter
      }
      waiter?.resume()
    }

    var fetches: Int { self.count.withLock { $0 } }

    func fetch() async throws -> GRPCAccessToken {
      let number = self.count.withLock {
        $0 += 1
        return $0
      }
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let waits = self.gate.withLock { gate in
          guard gate.held else { return false }
          gate.waiter = continuation
          return true
        }
        if !waits { continuation.resume() }
      }
      // Slow, as a real identity provider: calls made meanwhile must wait for this fetch.
      try await Task.sleep(for: .milliseconds(100))
      if let failure { throw failure }
      return GRPCAccessToken(
        "t\(number)",
        expiresAt: self.lifetime.map { self.clock.now().addingTimeInterval($0) }
      )
    }

    func factory() -> GRPCTokenRefreshInterceptorFactory {
      GRPCTokenRefreshInterceptorFactory(
        now: { self.clock.now() },
        source: { try await self.fetch() }
      )
    }
  }

  /// Makes a unary call of the given safety and waits for its close.
  static func unary(
    _ server: TestServer,
    factory: GRPCTokenRefreshInterceptorFactory,
    safety: GRPCCallSafety = .default,
    requiring token: String? = nil,
    retryDelayMilliseconds: Int? = nil,
    timeout: TimeInterval = 0
  ) async throws -> CallRecorder.Close {
    var options = server.options
    options.interceptorFactories = [factory]
    options.timeout = timeout
    if let token {
      options.initialMetadata.addString(
        "Bearer \(token)",
        forKey: InteropServerRecorder.requiredAuthorizationKey
      )
    }
    if let retryDelayMilliseconds {
      options.initialMetadata.addString(
        "\(retryDelayMilliseconds)",
        forKey: InteropServerRecorder.retryDelayKey
      )
    }
    let request = try InteropRequests.unary(responseBytes: 10)
    return try await server.complete("UnaryCall", request, options: options, safety: safety).close
  }

  static func tokens(_ server: TestServer) -> [String] {
    server.recorder.rpcs.map {
      Array($0.metadata[stringValues: "authorization"]).joined(separator: ",")
    }
  }

  @Test("50 concurrent calls on an empty cache: one fetch, every call carries the token")
  func singleFlight() async throws {
    try await withTestServer { server in
      let source = Source()
      let factory = source.factory()
      try await withThrowingTaskGroup(of: GRPCError?.self) { group in
        for _ in 0 ..< 50 {
          group.addTask { try await Self.unary(server, factory: factory).error }
        }
        for try await error in group {
          #expect(error == nil)
        }
      }
      #expect(source.fetches == 1)
      #expect(Self.tokens(server) == Array(repeating: "Bearer t1", count: 50))
    }
  }

  @Test("a token is used until the refresh margin before its expiry, then fetched anew")
  func expiry() async throws {
    try await withTestServer { server in
      let source = Source(lifetime: 60)
      let factory = source.factory()
      _ = try await Self.unary(server, factory: factory)
      source.clock.advance(by: 20)  // 40 s left: more than the 30 s margin
      _ = try await Self.unary(server, factory: factory)
      source.clock.advance(by: 15)  // 25 s left
      _ = try await Self.unary(server, factory: factory)
      #expect(source.fetches == 2)
      #expect(Self.tokens(server) == ["Bearer t1", "Bearer t1", "Bearer t2"])
    }
  }

  @Test(
    "UNAUTHENTICATED for a stale token: an idempotent call retries once with a fresh one and succeeds"
  )
  func retryOnUnauthenticated() async throws {
    try await withTestServer { server in
      let source = Source()
      let factory = source.factory()
      #expect(try await Self.unary(server, factory: factory, requiring: "t1").error == nil)
      // The server rotated its keys: t1 is no longer accepted.
      let close = try await Self.unary(
        server,
        factory: factory,
        safety: .idempotent,
        requiring: "t2"
      )
      #expect(close.error == nil)
      #expect(source.fetches == 2)
      #expect(Self.tokens(server) == ["Bearer t1", "Bearer t1", "Bearer t2"])

      // A call that is not idempotent is not retried: it fails, and the next call gets t3.
      let failed = try await Self.unary(server, factory: factory, requiring: "t3")
      #expect(failed.error?.code == .unauthenticated)
      #expect(try await Self.unary(server, factory: factory, requiring: "t3").error == nil)
      #expect(source.fetches == 3)
      #expect(Self.tokens(server).suffix(2) == ["Bearer t2", "Bearer t3"])
    }
  }

  @Test(
    "UNAUTHENTICATED with RetryInfo: the retry waits the server's delay before it asks for a token"
  )
  func retryWaitsForRetryInfo() async throws {
    try await withTestServer { server in
      let source = Source()
      let factory = source.factory()
      #expect(try await Self.unary(server, factory: factory, requiring: "t1").error == nil)
      let close = try await Self.unary(
        server,
        factory: factory,
        safety: .idempotent,
        requiring: "t2",
        retryDelayMilliseconds: 800
      )
      #expect(close.error == nil)
      #expect(Self.tokens(server) == ["Bearer t1", "Bearer t1", "Bearer t2"])
      let arrivals = server.recorder.rpcs.map(\.arrival)
      #expect(arrivals[2] - arrivals[1] >= .milliseconds(800))
    }
  }

  @Test(
    "UNAUTHENTICATED with a RetryInfo longer than the call's deadline: no retry, the server's status"
  )
  func retryInfoPastDeadline() async throws {
    try await withTestServer { server in
      let source = Source()
      let factory = source.factory()
      #expect(try await Self.unary(server, factory: factory, requiring: "t1").error == nil)
      let close = try await Self.unary(
        server,
        factory: factory,
        safety: .idempotent,
        requiring: "t2",
        retryDelayMilliseconds: 3_600_000,
        timeout: CloseWait.seconds
      )
      #expect(close.error?.code == .unauthenticated)
      #expect(close.error?.serverRetryDelay == .seconds(3_600))
      #expect(Self.tokens(server) == ["Bearer t1", "Bearer t1"])
    }
  }

  @Test(
    "a throwing source fails the call with UNAUTHENTICATED and its message; no connection is opened"
  )
  func failingSource() async throws {
    try await withTestServer { server in
      let source = Source(
        failure: GRPCError(code: .unavailable, message: "identity provider is down")
      )
      let factory = source.factory()
      let close = try await Self.unary(server, factory: factory)
      #expect(close.error?.code == .unauthenticated)
      #expect(close.error?.message == "Could not get an access token: identity provider is down")
      #expect(server.recorder.acceptedConnections == 0)
      #expect(server.recorder.rpcs.isEmpty)
      // The failure is not cached: the next call asks again.
      _ = try await Self.unary(server, factory: factory)
      #expect(source.fetches == 2)
    }
  }

  @Test("a call cancelled while it waits for its token closes once with CANCELLED and never starts")
  func cancelWhileWaiting() async throws {
    try await withTestServer { server in
      // The fetch waits until the call is cancelled, however slowly the test runs.
      let source = Source(held: true)
      let factory = source.factory()
      var options = server.options
      options.interceptorFactories = [factory]
      let (call, recorder) = try server.call("UnaryCall", options: options)
      call.start()
      call.writeData(try InteropRequests.unary(responseBytes: 10).serializedData())
      call.cancel()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)
      source.release()
      // A second call shares the first one's fetch: once it is done, so is the first's wait.
      #expect(try await Self.unary(server, factory: factory).error == nil)
      #expect(source.fetches == 1)
      #expect(server.recorder.rpcs.count == 1)
      #expect(recorder.closeCount == 1)
    }
  }
}
