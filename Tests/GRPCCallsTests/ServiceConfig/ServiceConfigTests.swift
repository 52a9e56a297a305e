import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@testable import GRPCCalls

/// A service config for TestService's `method`, with `fields` (JSON members) added to its entry
/// and `extra` (JSON members) at the top level.
func serviceConfig(method: String, _ fields: String, extra: String = "") throws -> ServiceConfig {
  let top = extra.isEmpty ? "" : ", \(extra)"
  return try GRPCServiceConfig.parse(
    """
    {"methodConfig": [{"name": [{"service": "grpc.testing.TestService", "method": "\(method)"}], \
    \(fields)}]\(top)}
    """
  )
}

@Suite("Service config: parsing")
struct ServiceConfigParsingTests {
  @Test("gRPC's JSON form gives the core's ServiceConfig: method config, balancing, throttling")
  func parses() throws {
    let config = try serviceConfig(
      method: "UnaryCall",
      """
      "timeout": "1.5s", "waitForReady": true, "maxResponseMessageBytes": 1024,
      "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
        "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}
      """,
      extra:
        #""loadBalancingConfig": [{"round_robin": {}}], "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}"#
    )
    let method = try #require(config.methodConfig.first)
    #expect(method.timeout == .milliseconds(1500))
    #expect(method.waitForReady == true)
    #expect(method.maxResponseMessageBytes == 1024)
    #expect(method.executionPolicy?.retry?.maxAttempts == 3)
    #expect(config.loadBalancingConfig.first?.roundRobin != nil)
    #expect(config.retryThrottling?.maxTokens == 10)
  }

  @Test(
    "malformed service configs fail with INVALID_ARGUMENT naming the field",
    arguments: [
      ("{\"methodConfig\": [", "not JSON"),
      (
        #"{"methodConfig": [{"name": [{"service": "a"}], "timeout": 5}]}"#,
        "methodConfig[0].timeout"
      ),
      (#"{"methodConfig": [{"timeout": "1s"}]}"#, "methodConfig[0].name"),
      (
        #"{"methodConfig": [{"name": [{"service": "a"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
        "methodConfig[0].retryPolicy"
      ),
      (#"{"retryThrottling": {"maxTokens": 0, "tokenRatio": 0.1}}"#, "retryThrottling"),
      // Durations the core's decoder would trap on.
      (
        #"{"methodConfig": [{"name": [{"service": "a"}], "timeout": "1e19s"}]}"#,
        "methodConfig[0].timeout"
      ),
      (
        #"{"methodConfig": [{"name": [{"service": "a"}], "timeout": "nans"}]}"#,
        "methodConfig[0].timeout"
      ),
      (
        #"{"methodConfig": [{"name": [{"service": "a"}], "hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "infs"}}]}"#,
        "methodConfig[0].hedgingPolicy.hedgingDelay"
      ),
      (
        #"{"methodConfig": [{"name": [{"service": "a"}], "maxResponseMessageBytes": -1}]}"#,
        "methodConfig[0].maxResponseMessageBytes"
      ),
      // A name with a method and no service spoils every field: the name is blamed.
      (
        #"{"methodConfig": [{"name": [{"method": "M"}], "timeout": "1s"}]}"#, "methodConfig[0].name"
      ),
      (#"{"loadBalancingPolicy": "grpclb"}"#, "loadBalancingPolicy"),
    ]
  )
  func malformed(json: String, field: String) {
    #expect {
      try GRPCServiceConfig.parse(json)
    } throws: { error in
      guard let error = error as? GRPCError else { return false }
      return error.code == .invalidArgument
        && error.message.hasPrefix("The service config is not valid: \(field)")
    }
  }

  @Test("the deprecated loadBalancingPolicy field selects the policy, in any case")
  func deprecatedPolicyField() throws {
    let config = try GRPCServiceConfig.parse(#"{"loadBalancingPolicy": "ROUND_ROBIN"}"#)
    #expect(config.loadBalancingConfig == [.roundRobin])
    let both = try GRPCServiceConfig.parse(
      #"{"loadBalancingPolicy": "round_robin", "loadBalancingConfig": [{"pick_first": {}}]}"#
    )
    #expect(both.loadBalancingConfig.first?.pickFirst != nil)
  }

  @Test(
    "the service config and the balancing policy are part of the channel key; the arguments set the same options"
  )
  func channelKey() throws {
    let config = try serviceConfig(method: "UnaryCall", #""timeout": "1s""#)
    var plain = GRPCCallOptions()
    plain.transportType = .insecure
    var configured = plain
    configured.serviceConfig = config
    var viaArgument = plain
    viaArgument.additionalChannelArgs = [
      "grpc.service_config":
        .string(
          #"{"methodConfig": [{"name": [{"service": "grpc.testing.TestService", "method": "UnaryCall"}], "timeout": "1s"}]}"#
        )
    ]
    let host = "127.0.0.1:1"
    #expect(
      try ChannelKey(host: host, options: plain) != ChannelKey(host: host, options: configured)
    )
    #expect(
      try ChannelKey(host: host, options: configured)
        == ChannelKey(host: host, options: viaArgument)
    )

    var roundRobin = plain
    roundRobin.loadBalancingPolicy = .roundRobin
    var roundRobinArgument = plain
    roundRobinArgument.additionalChannelArgs = ["grpc.lb_policy_name": .string("round_robin")]
    var roundRobinConfig = plain
    roundRobinConfig.serviceConfig = ServiceConfig(loadBalancingConfig: [.roundRobin])
    let key = try ChannelKey(host: host, options: roundRobin)
    #expect(key != (try ChannelKey(host: host, options: plain)))
    #expect(key == (try ChannelKey(host: host, options: roundRobinArgument)))
    #expect(key == (try ChannelKey(host: host, options: roundRobinConfig)))
  }
}

@Suite("Service config: calls")
struct ServiceConfigCallTests {
  /// A 5-minute stream of small responses, one every 10 ms.
  static let longStream = InteropRequests.longStream()

  /// A stream of `count` responses, `gap` apart.
  static func spacedStream(count: Int, gap: Duration) -> Grpc_Testing_StreamingOutputCallRequest {
    var request = InteropRequests.stream(count: count, size: 10)
    for index in request.responseParameters.indices {
      request.responseParameters[index].intervalUs = Int32(gap / .microseconds(1))
    }
    return request
  }

  @Test(
    "a method's timeout ends its calls with DEADLINE_EXCEEDED; the shorter of the call's and the config's wins"
  )
  func timeout() async throws {
    try await withTestServer { server in
      let short = #""timeout": "0.3s""#
      let long = #""timeout": "300s""#
      for (config, callTimeout) in [(short, 0.0), (short, 60), (long, 0.3)] {
        var options = server.options
        options.timeout = callTimeout
        options.serviceConfig = try serviceConfig(method: "StreamingOutputCall", config)
        let (_, _, expired) = try await server.complete(
          "StreamingOutputCall",
          Self.longStream,
          options: options
        )
        #expect(
          expired.error?.code == .deadlineExceeded,
          "\(config), call timeout \(callTimeout): \(String(describing: expired.error))"
        )
      }

      // A long configured timeout does not cut a stream that takes a second.
      var options = server.options
      options.timeout = 0
      options.serviceConfig = try serviceConfig(method: "StreamingOutputCall", long)
      let (_, recorder, close) = try await server.complete(
        "StreamingOutputCall",
        Self.spacedStream(count: 3, gap: .milliseconds(300)),
        options: options
      )
      #expect(close.error == nil, "\(String(describing: close.error))")
      #expect(recorder.messages.count == 3)
    }
  }

  @Test("a method's waitForReady makes its calls wait for a server that is not listening yet")
  func waitForReady() async throws {
    try await withTestServer { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      proxy.stopListening()
      var options = server.options.reconnectingSoon()
      options.timeout = CloseWait.seconds
      let client = InteropClient(
        target: "127.0.0.1:\(proxy.port)",
        callOptions: options,
        channelPool: server.pool
      )
      let failed = try await server.completeThrough(client, "EmptyCall", Grpc_Testing_Empty())
      #expect(failed.error?.code == .unavailable, "\(String(describing: failed.error))")

      var waiting = client
      waiting.callOptions.serviceConfig = try serviceConfig(
        method: "EmptyCall",
        #""waitForReady": true"#
      )
      let (call, recorder) = try waiting.makeCall("EmptyCall")
      call.start()
      call.writeData(try Grpc_Testing_Empty().bytes)
      call.finish()
      try proxy.startListening()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error == nil, "\(String(describing: close.error))")
    }
  }

  static let retryPolicy = """
    "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.01s", "maxBackoff": "0.05s",
      "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}
    """

  @Test("a method's retry policy retries its calls; enableRetry = false turns it off")
  func retry() async throws {
    try await withTestServer { server in
      let config = try serviceConfig(method: "UnaryCall", Self.retryPolicy)
      let (close, attempts) = try await ChannelOptionsTests.flakyUnary(server, failures: 2) {
        $0.serviceConfig = config
      }
      #expect(close.error == nil, "\(String(describing: close.error))")
      #expect(attempts == 3)

      let (refused, once) = try await ChannelOptionsTests.flakyUnary(server, failures: 2) {
        $0.serviceConfig = config
        $0.enableRetry = false
      }
      #expect(refused.error?.code == .unavailable)
      #expect(once == 1)
    }
  }

  @Test("retry throttling: once failures have used up half the tokens, calls are not retried")
  func throttling() async throws {
    try await withTestServer { server in
      // Two tokens: the first failed attempt leaves one, half of the maximum, and no retry
      // follows.
      let config = try serviceConfig(
        method: "UnaryCall",
        Self.retryPolicy,
        extra: #""retryThrottling": {"maxTokens": 2, "tokenRatio": 0.1}"#
      )
      let (close, attempts) = try await ChannelOptionsTests.flakyUnary(server, failures: 2) {
        $0.serviceConfig = config
      }
      #expect(close.error?.code == .unavailable, "\(String(describing: close.error))")
      #expect(attempts == 1)
    }
  }

  @Test("a method's hedging policy sends a second attempt when the first fails")
  func hedging() async throws {
    try await withTestServer { server in
      let config = try serviceConfig(
        method: "UnaryCall",
        """
        "hedgingPolicy": {"maxAttempts": 2, "hedgingDelay": "0.01s",
          "nonFatalStatusCodes": ["UNAVAILABLE"]}
        """
      )
      let (close, attempts) = try await ChannelOptionsTests.flakyUnary(server, failures: 1) {
        $0.serviceConfig = config
      }
      #expect(close.error == nil, "\(String(describing: close.error))")
      #expect(attempts == 2)
    }
  }

  @Test(
    "a method's message limits: a larger response fails, a larger request fails before it leaves"
  )
  func sizeLimits() async throws {
    try await withTestServer { server in
      var options = server.options
      options.serviceConfig = try serviceConfig(
        method: "UnaryCall",
        #""maxResponseMessageBytes": 500, "maxRequestMessageBytes": 500"#
      )
      let (_, _, large) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 1000),
        options: options
      )
      #expect(large.error?.code == .resourceExhausted, "\(String(describing: large.error))")

      var request = try unaryRequest(responseBytes: 10)
      request.payload.body = Data(count: 1000)
      let (_, _, sent) = try await server.complete("UnaryCall", request, options: options)
      #expect(sent.error?.code == .resourceExhausted, "\(String(describing: sent.error))")
      #expect(sent.error?.message.hasPrefix("Sent message larger than max") == true)

      let (_, _, small) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 10),
        options: options
      )
      #expect(small.error == nil, "\(String(describing: small.error))")
    }
  }

  @Test(
    "a malformed grpc.service_config or grpc.lb_policy_name fails the call with INVALID_ARGUMENT naming it"
  )
  func malformedArguments() async throws {
    try await withTestServer { server in
      for (args, named) in [
        (
          ["grpc.service_config": GRPCChannelArgValue.string(#"{"methodConfig": 1}"#)],
          "'grpc.service_config': The service config is not valid: methodConfig"
        ),
        (["grpc.lb_policy_name": .string("grpclb")], "'grpc.lb_policy_name' must be one of"),
      ] {
        var options = server.options
        options.additionalChannelArgs = args
        let (_, _, close) = try await server.complete(
          "UnaryCall",
          try unaryRequest(responseBytes: 10),
          options: options
        )
        #expect(close.error?.code == .invalidArgument)
        #expect(close.error?.message.contains(named) == true, "\(String(describing: close.error))")
      }
    }
  }

  @Test("round_robin over one address serves calls like pick_first")
  func roundRobinOneAddress() async throws {
    try await withTestServer { server in
      var options = server.options
      options.loadBalancingPolicy = .roundRobin
      for _ in 0 ..< 20 {
        let (_, _, close) = try await server.complete(
          "UnaryCall",
          try unaryRequest(responseBytes: 10),
          options: options
        )
        #expect(close.error == nil, "\(String(describing: close.error))")
      }
    }
  }
}
