import Foundation
import GRPCCore
import Testing

@testable import GRPCCalls

@Suite("Channel key: channel-level options split channels, call-level ones never do")
struct ChannelKeyTests {
  typealias Change = @Sendable (inout GRPCCallOptions) -> Void

  static let channelLevel: [(String, Change)] = [
    ("responseSizeLimit", { $0.responseSizeLimit = 100 }),
    ("transportType", { $0.transportType = .insecure }),
    ("userAgentPrefix", { $0.userAgentPrefix = "p" }),
    ("userAgentSuffix", { $0.userAgentSuffix = "s" }),
    ("flushCoalescing", { $0.flushCoalescing.toggle() }),
    ("http2TargetWindowSize", { $0.http2TargetWindowSize = 1 << 20 }),
    ("pemRootCertificates", { $0.pemRootCertificates = "roots" }),
    (
      "pemPrivateKey + pemCertificateChain",
      {
        $0.pemPrivateKey = "key"
        $0.pemCertificateChain = "chain"
      }
    ),
    ("hostNameOverride", { $0.hostNameOverride = "other.test" }),
    ("serverAuthority", { $0.serverAuthority = "other.test" }),
    ("compressionAlgorithm", { $0.compressionAlgorithm = .gzip }),
    ("keepaliveInterval", { $0.keepaliveInterval = 1 }),
    ("keepaliveTimeout", { $0.keepaliveTimeout = 1 }),
    ("keepalivePermitWithoutCalls", { $0.keepalivePermitWithoutCalls = true }),
    ("connectMinTimeout", { $0.connectMinTimeout = 1 }),
    ("connectInitialBackoff", { $0.connectInitialBackoff = 1 }),
    ("connectMaxBackoff", { $0.connectMaxBackoff = 1 }),
    ("minRetryInterval", { $0.minRetryInterval = 1 }),
    ("maxRetryInterval", { $0.maxRetryInterval = 1 }),
    ("retryFactor", { $0.retryFactor = 2 }),
    ("enableRetry", { $0.enableRetry = false }),
    ("additionalChannelArgs", { $0.additionalChannelArgs = ["grpc.http2.max_frame_size": 32768] }),
    ("transport", { $0.transport = GRPCTransportID("custom") }),
    ("logContext", { $0.logContext = ["component": "a"] }),
    ("channelPoolDomain", { $0.channelPoolDomain = "d" }),
    ("channelId", { $0.channelId = 1 }),
  ]

  static let callLevel: [(String, Change)] = [
    ("timeout", { $0.timeout = 5 }),
    ("initialMetadata", { $0.initialMetadata.addString("v", forKey: "k") }),
    ("oauth2AccessToken", { $0.oauth2AccessToken = "t" }),
    ("enableFlowControl", { $0.enableFlowControl = true }),
    (
      "interceptorFactories",
      {
        $0.interceptorFactories = [GRPCClosureInterceptorFactory { GRPCInterceptor(manager: $0) }]
      }
    ),
    ("executionPolicy", { $0.executionPolicy = .retry(GRPCRetryPolicy(maxAttempts: 3)) }),
  ]

  static func key(_ change: Change = { _ in }) throws -> ChannelKey {
    var options = GRPCCallOptions()
    change(&options)
    return try ChannelKey(host: "example.com", options: options)
  }

  @Test("every channel-level option changes the key", arguments: Self.channelLevel)
  func channelLevelSplits(name: String, change: Change) throws {
    #expect(try Self.key(change) != Self.key(), "\(name)")
  }

  @Test(
    "the key cached on options follows every channel-level change, and copies share it",
    arguments: Self.channelLevel
  )
  func cachedKeyFollowsChanges(name: String, change: Change) throws {
    let pool = GRPCChannelPool()
    let options = GRPCCallOptions()
    let before = try pool.key(host: "example.com", options: options)
    let copy = options
    #expect(try pool.key(host: "example.com", options: copy) == before)
    var changed = copy
    change(&changed)
    #expect(try pool.key(host: "example.com", options: changed) == Self.key(change), "\(name)")
    #expect(try pool.key(host: "example.com", options: changed) != before, "\(name)")
    // The original and its untouched copy keep theirs; another host is derived anew.
    #expect(try pool.key(host: "example.com", options: copy) == before)
    #expect(try pool.key(host: "other.example", options: copy) != before)
  }

  @Test("no call-level option changes the key", arguments: Self.callLevel)
  func callLevelShares(name: String, change: Change) throws {
    #expect(try Self.key(change) == Self.key(), "\(name)")
  }

  @Test("a channel argument and the option it sets give the same key")
  func argumentsMatchOptions() throws {
    let pairs: [(GRPCCallOptions.ChannelArgs, Change)] = [
      (["grpc.max_receive_message_length": 100], { $0.responseSizeLimit = 100 }),
      (["grpc.keepalive_time_ms": 1500], { $0.keepaliveInterval = 1.5 }),
      (["grpc.keepalive_timeout_ms": 2000], { $0.keepaliveTimeout = 2 }),
      (["grpc.keepalive_permit_without_calls": 1], { $0.keepalivePermitWithoutCalls = true }),
      (["grpc.min_reconnect_backoff_ms": 250], { $0.connectMinTimeout = 0.25 }),
      (["grpc.initial_reconnect_backoff_ms": 100], { $0.connectInitialBackoff = 0.1 }),
      (["grpc.max_reconnect_backoff_ms": 3000], { $0.connectMaxBackoff = 3 }),
      (["grpc.primary_user_agent": "app/1"], { $0.userAgentPrefix = "app/1" }),
      (["grpc.secondary_user_agent": "x"], { $0.userAgentSuffix = "x" }),
      (["grpc.default_authority": "a.test"], { $0.serverAuthority = "a.test" }),
      (["grpc.ssl_target_name_override": "a.test"], { $0.hostNameOverride = "a.test" }),
      (["grpc.enable_retries": 0], { $0.enableRetry = false }),
    ]
    for (arguments, change) in pairs {
      #expect(
        try Self.key { $0.additionalChannelArgs = arguments } == Self.key(change),
        "\(arguments)"
      )
    }
  }

  @Test(
    "a channel argument of the wrong kind is INVALID_ARGUMENT naming it",
    arguments: [
      (["grpc.keepalive_time_ms": "soon"], "grpc.keepalive_time_ms"),
      (["grpc.primary_user_agent": 7], "grpc.primary_user_agent"),
      (["grpc.enable_retries": 2], "grpc.enable_retries"),
      (["grpc.http2.max_frame_size": 100], "grpc.http2.max_frame_size"),
    ] as [(GRPCCallOptions.ChannelArgs, String)]
  )
  func badArguments(arguments: GRPCCallOptions.ChannelArgs, name: String) {
    #expect {
      try Self.key { $0.additionalChannelArgs = arguments }
    } throws: { error in
      guard let error = error as? GRPCError else { return false }
      return error.code == .invalidArgument && error.message.contains("'\(name)'")
    }
  }

  @Test(
    "keepalive: the timeout is kept; an interval not longer than it is stretched past it, so the timeout can fire"
  )
  func keepaliveStretch() throws {
    #expect(try Self.key().transportKeepalive == nil)
    let plain = try #require(
      try Self.key {
        $0.keepaliveInterval = 30
        $0.keepaliveTimeout = 10
      }.transportKeepalive
    )
    #expect(plain.time == 30 && plain.timeout == 10)
    let stretched = try #require(
      try Self.key {
        $0.keepaliveInterval = 1
        $0.keepaliveTimeout = 5
      }.transportKeepalive
    )
    #expect(stretched.time == 6 && stretched.timeout == 5)
    // The default timeout is gRPC core's 20 s.
    let defaulted = try #require(try Self.key { $0.keepaliveInterval = 10 }.transportKeepalive)
    #expect(defaulted.time == 21 && defaulted.timeout == 20)
  }

  @Test(
    "gRPC Objective-C's retry intervals and factor are the connection backoff; connect…Backoff wins over them"
  )
  func retryIntervals() throws {
    #expect(try Self.key { $0.minRetryInterval = 2 } == Self.key { $0.connectInitialBackoff = 2 })
    #expect(try Self.key { $0.maxRetryInterval = 5 } == Self.key { $0.connectMaxBackoff = 5 })
    let both = try Self.key {
      $0.minRetryInterval = 2
      $0.connectInitialBackoff = 3
      $0.maxRetryInterval = 5
      $0.retryFactor = 2.5
    }
    let backoff = try #require(both.reconnectBackoff(default: 1.6, jitter: 0.2))
    #expect(backoff.initial == .seconds(3))
    #expect(backoff.max == .seconds(5))
    #expect(backoff.multiplier == 2.5)
    // Unset: the transport's own backoff.
    #expect(try Self.key().reconnectBackoff(default: 1.6, jitter: 0.2) == nil)
    // gRPC core's floor of 0.1 s: shorter, a channel that cannot connect reconnects without
    // pause, thousands of connections a second.
    let tiny = try Self.key {
      $0.connectInitialBackoff = 1e-12
      $0.connectMaxBackoff = 1e-3
      $0.connectMinTimeout = 1e-6
    }
    let floored = try #require(tiny.reconnectBackoff(default: 1.6, jitter: 0.2))
    #expect(floored.initial == .milliseconds(100) && floored.max == .milliseconds(100))
    #expect(tiny.connectionAttemptLimit == 0.1)
    #expect(try Self.key { $0.connectMinTimeout = 0.25 }.connectionAttemptLimit == 0.25)
    #expect(try Self.key().connectionAttemptLimit == nil)
    var options = GRPCCallOptions()
    options.retryFactor = 0.5
    #expect(options.retryFactor == 1)
    options.retryFactor = -.nan
    #expect(options.retryFactor == 0)
  }

  @Test(
    "under round-robin a server that went away is tried again within one re-resolution period, unless connectMaxBackoff says otherwise"
  )
  func roundRobinReconnectionCap() throws {
    let roundRobin = try Self.key { $0.loadBalancingPolicy = .roundRobin }
    // 30 s less the transport's 20% jitter either way: the jittered wait stays within 30 s.
    #expect(roundRobin.roundRobinReconnectionCap(jitter: 0.2) == 25)
    let backoff = try #require(roundRobin.reconnectBackoff(default: 1.6, jitter: 0.2))
    #expect(backoff.initial == .seconds(1))
    #expect(backoff.max == .seconds(25))
    #expect(backoff.multiplier == 1.6)
    let short = try Self.key {
      $0.loadBalancingPolicy = .roundRobin
      $0.nameResolutionInterval = 1
    }
    // Never below the first wait.
    #expect(try #require(short.reconnectBackoff(default: 1.6, jitter: 0.2)).max == .seconds(1))
    let chosen = try Self.key {
      $0.loadBalancingPolicy = .roundRobin
      $0.connectMaxBackoff = 90
    }
    #expect(try #require(chosen.reconnectBackoff(default: 1.6, jitter: 0.2)).max == .seconds(90))
    // Pick-first, or no periodic resolution: the transport's own backoff.
    #expect(
      try Self.key { $0.loadBalancingPolicy = .pickFirst }.reconnectBackoff(
        default: 1.6,
        jitter: 0.2
      ) == nil
    )
    let never = try Self.key {
      $0.loadBalancingPolicy = .roundRobin
      $0.nameResolutionInterval = 0
    }
    #expect(never.reconnectBackoff(default: 1.6, jitter: 0.2) == nil)
  }

  @Test("an unknown channel argument changes no setting but makes a key of its own")
  func unknownArgument() throws {
    let plain = try Self.key { _ in }
    let unknown = try Self.key { $0.additionalChannelArgs = ["grpc.no_such_arg": 1] }
    #expect(unknown != plain)
    #expect(unknown.unknownChannelArgs == ["grpc.no_such_arg": 1])
    #expect(try Self.key { $0.additionalChannelArgs = ["grpc.no_such_arg": 1] } == unknown)
  }

  @Test("under TLS, a serverAuthority that differs from hostNameOverride is INVALID_ARGUMENT")
  func authorityConflict() throws {
    #expect(throws: GRPCError.self) {
      try Self.key {
        $0.serverAuthority = "a.test"
        $0.hostNameOverride = "b.test"
      }
    }
    // Equal names, or plaintext (no certificate to verify), are fine.
    _ = try Self.key {
      $0.serverAuthority = "a.test"
      $0.hostNameOverride = "a.test"
    }
    _ = try Self.key {
      $0.transportType = .insecure
      $0.serverAuthority = "a.test"
      $0.hostNameOverride = "b.test"
    }
  }
}
