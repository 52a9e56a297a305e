import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Logging
import Testing

@Suite("Channel options over loopback")
struct ChannelOptionsTests {
  /// A UnaryCall that the server fails with UNAVAILABLE for its first `failures` attempts.
  static func flakyUnary(
    _ server: TestServer,
    failures: Int,
    options change: (inout GRPCCallOptions) -> Void
  ) async throws -> (close: CallRecorder.Close, attempts: Int) {
    let id = UUID().uuidString
    var options = server.options
    options.initialMetadata.addString(
      "\(failures)/\(id)",
      forKey: InteropServerRecorder.failAttemptsKey
    )
    change(&options)
    let (_, _, close) = try await server.complete(
      "UnaryCall",
      try unaryRequest(responseBytes: 10),
      options: options
    )
    return (close, server.recorder.attempts(id))
  }

  @Test("retry: 2 failed attempts, then success with a 3-attempt policy")
  func retrySucceeds() async throws {
    try await withTestServer { server in
      let (close, attempts) = try await Self.flakyUnary(server, failures: 2) {
        $0.executionPolicy = .retry(
          GRPCRetryPolicy(maxAttempts: 3, initialBackoff: 0.01, maxBackoff: 0.05)
        )
      }
      #expect(close.error == nil, "\(String(describing: close.error))")
      #expect(attempts == 3)
    }
  }

  @Test(
    "retry: each backoff is the delay of the server's RetryInfo; the application sees the server's trailers"
  )
  func retryWaitsForRetryInfo() async throws {
    try await withTestServer { server in
      let (close, attempts) = try await Self.flakyUnary(server, failures: 3) {
        $0.executionPolicy = .retry(
          GRPCRetryPolicy(maxAttempts: 3, initialBackoff: 0.01, maxBackoff: 0.02)
        )
        $0.initialMetadata.addString("700", forKey: InteropServerRecorder.retryDelayKey)
      }
      #expect(attempts == 3)
      let error = try #require(close.error)
      #expect(error.code == .unavailable && error.message == "attempt 3 fails on purpose")
      #expect(error.serverRetryDelay == .milliseconds(700))
      let keys = Set(error.trailers.map(\.key))
      #expect(keys.contains("grpc-status-details-bin"))
      #expect(!keys.contains { $0.contains("pushback") }, "\(keys)")
      let arrivals = server.recorder.rpcs.filter { $0.method.hasSuffix("/UnaryCall") }.map(
        \.arrival
      )
      try #require(arrivals.count == 3)
      for (earlier, later) in zip(arrivals, arrivals.dropFirst()) {
        #expect(later - earlier >= .milliseconds(700))
      }
    }
  }

  @Test("retry off (enableRetry = false, or grpc.enable_retries = 0): one attempt, UNAVAILABLE")
  func retryDisabled() async throws {
    try await withTestServer { server in
      let policy = GRPCExecutionPolicy.retry(GRPCRetryPolicy(maxAttempts: 3, initialBackoff: 0.01))
      for disable in [
        { (options: inout GRPCCallOptions) in options.enableRetry = false },
        { (options: inout GRPCCallOptions) in
          options.additionalChannelArgs = ["grpc.enable_retries": 0]
        },
      ] {
        let (close, attempts) = try await Self.flakyUnary(server, failures: 2) {
          $0.executionPolicy = policy
          disable(&$0)
        }
        #expect(close.error?.code == .unavailable)
        #expect(close.error?.message == "attempt 1 fails on purpose")
        #expect(attempts == 1)
      }
    }
  }

  @Test("hedging: allowed for an idempotent method, refused with INVALID_ARGUMENT otherwise")
  func hedging() async throws {
    try await withTestServer { server in
      var options = server.options
      options.executionPolicy = .hedge(GRPCHedgingPolicy(maxAttempts: 2, hedgingDelay: 0.01))
      for (safety, expected) in [
        (GRPCCallSafety.idempotent, nil), (.default, RPCError.Code.invalidArgument),
      ] {
        let recorder = CallRecorder()
        let call = GRPCCall2(
          requestOptions: try GRPCRequestOptions(
            host: server.server.target,
            path: "/grpc.testing.TestService/UnaryCall",
            safety: safety
          ),
          responseHandler: recorder,
          callOptions: options,
          channelPool: server.pool
        )
        call.start()
        call.writeData(try unaryRequest(responseBytes: 10).bytes)
        call.finish()
        let close = try #require(await recorder.waitForClose())
        #expect(close.error?.code == expected, "\(safety): \(String(describing: close.error))")
      }
    }
  }

  @Test(
    "an invalid policy fails the call with INVALID_ARGUMENT naming the problem, never a trap",
    arguments: [
      (GRPCExecutionPolicy.retry(GRPCRetryPolicy(maxAttempts: 1)), "maxAttempts"),
      (.retry(GRPCRetryPolicy(maxAttempts: 0)), "maxAttempts"),
      (.retry(GRPCRetryPolicy(maxAttempts: 3, initialBackoff: 0)), "initialBackoff"),
      (.retry(GRPCRetryPolicy(maxAttempts: 3, maxBackoff: -1)), "maxBackoff"),
      (.retry(GRPCRetryPolicy(maxAttempts: 3, backoffMultiplier: 0)), "backoffMultiplier"),
      (.retry(GRPCRetryPolicy(maxAttempts: 3, retryableStatusCodes: [])), "retryableStatusCodes"),
      (.hedge(GRPCHedgingPolicy(maxAttempts: 1, hedgingDelay: 0)), "maxAttempts"),
      (.hedge(GRPCHedgingPolicy(maxAttempts: 2, hedgingDelay: -1)), "hedgingDelay"),
    ]
  )
  func invalidPolicies(policy: GRPCExecutionPolicy, problem: String) async throws {
    try await withTestServer { server in
      var options = server.options
      options.executionPolicy = policy
      let (_, recorder, close) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 10),
        options: options
      )
      #expect(close.error?.code == .invalidArgument)
      #expect(close.error?.message.contains(problem) == true, "\(String(describing: close.error))")
      #expect(recorder.closeCount == 1)
      #expect(server.recorder.rpcs.isEmpty)
    }
  }

  @Test("the server sees the chosen :authority and the user agent with prefix and suffix")
  func authorityAndUserAgent() async throws {
    try await withTestServer { server in
      var options = server.options
      options.serverAuthority = "api.grpc-calls.test"
      options.additionalChannelArgs = [
        "grpc.primary_user_agent": "app/2.1", "grpc.secondary_user_agent": "(test)",
      ]
      let (_, _, close) = try await server.complete(
        "EmptyCall",
        Grpc_Testing_Empty(),
        options: options
      )
      #expect(close.error == nil)
      let rpc = try #require(server.recorder.rpcs.last)
      #expect(Array(rpc.metadata[stringValues: ":authority"]) == ["api.grpc-calls.test"])
      let agent = try #require(rpc.metadata[stringValues: "user-agent"].first { _ in true })
      let token = "grpc-calls/\(GRPCCallsVersion.string)"
      #expect(agent == "app/2.1 \(token) (test)")
      #expect(agent.replacingOccurrences(of: " \(token) (test)", with: "") == "app/2.1")
    }
  }

  @Test(
    "gzip and deflate: the server's expect_compressed check passes; compressed responses arrive",
    arguments: [GRPCCompressionAlgorithm.gzip, .deflate]
  )
  func compression(algorithm: GRPCCompressionAlgorithm) async throws {
    try await withTestServer { server in
      var options = server.options
      options.compressionAlgorithm = algorithm
      var request = try unaryRequest(responseBytes: 5000)
      request.expectCompressed.value = true
      request.responseCompressed.value = true
      request.payload.body = Data(count: 20_000)
      let (_, recorder, close) = try await server.complete("UnaryCall", request, options: options)
      #expect(close.error == nil, "\(String(describing: close.error))")
      #expect(recorder.messages.first?.count == 5000)
      let rpc = try #require(server.recorder.rpcs.last)
      #expect(Array(rpc.metadata[stringValues: "grpc-encoding"]) == ["\(algorithm)"])
    }
  }

  @Test("a channel argument takes effect: grpc.max_receive_message_length = 100 refuses 200 bytes")
  func channelArgumentApplies() async throws {
    try await withTestServer { server in
      var options = server.options
      options.additionalChannelArgs = ["grpc.max_receive_message_length": 100]
      let (_, _, close) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 200),
        options: options
      )
      #expect(close.error?.code == .resourceExhausted, "\(String(describing: close.error))")
    }
  }

  @Test(
    "an unknown channel argument is ignored with one warning when its channel opens, and keeps channels apart"
  )
  func unknownChannelArgument() async throws {
    try await withTestServer { server in
      let logs = CapturedLogs()
      var config = GRPCChannelPool.Config.forTests
      config.logger = logs.logger
      let pool = GRPCChannelPool(config: config)
      defer { pool.disconnectAll() }
      var options = server.options
      options.additionalChannelArgs = ["grpc.not_a_real_arg": 1]
      let client = InteropClient(
        target: server.server.target,
        callOptions: options,
        channelPool: pool
      )
      for _ in 0 ..< 3 {
        try await client.run(.emptyUnary, api: .raw)
      }
      let warnings = logs.all.filter { $0.level == .warning }.map(\.message)
      #expect(
        warnings == [
          "Ignoring channel arguments that grpc-calls does not map to any setting: 'grpc.not_a_real_arg' "
            + "(gRPC core ignores unknown arguments too); they still keep this channel apart from others"
        ]
      )
      // The same options without the argument get a channel of their own.
      try await InteropClient(
        target: server.server.target,
        callOptions: server.options,
        channelPool: pool
      )
      .run(.emptyUnary, api: .raw)
      #expect(server.recorder.acceptedConnections == 2)
    }
  }

  @Test("two libraries with different options in one process get the connections they configured")
  func isolation() async throws {
    try await withTestServer { server in
      var first = server.options
      first.userAgentPrefix = "library-a"
      first.compressionAlgorithm = .gzip
      var second = server.options
      second.userAgentPrefix = "library-b"
      async let a = server.complete("EmptyCall", Grpc_Testing_Empty(), options: first)
      async let b = server.complete("EmptyCall", Grpc_Testing_Empty(), options: second)
      let (closeA, closeB) = try await (a.close, b.close)
      #expect(closeA.error == nil && closeB.error == nil)
      let rpcs = server.recorder.rpcs
      #expect(server.recorder.acceptedConnections == 2)
      for (prefix, encoding) in [("library-a", ["gzip"]), ("library-b", [])] {
        let rpc = try #require(
          rpcs.first { rpc in
            rpc.metadata[stringValues: "user-agent"].contains { $0.hasPrefix(prefix) }
          }
        )
        #expect(Array(rpc.metadata[stringValues: "grpc-encoding"]) == encoding, "\(prefix)")
      }
      #expect(Set(rpcs.map(\.peer)).count == 2)
    }
  }
}
