import GRPCCore
import Testing

@testable import GRPCCalls

@Suite("Call options: defaults and clamping")
struct GRPCCallOptionsTests {
  @Test("defaults: no deadline, no metadata, no token, 4 MiB, TLS, shared domain, id 0")
  func defaults() {
    let options = GRPCCallOptions()
    #expect(options.timeout == 0)
    #expect(options.initialMetadata.isEmpty)
    #expect(options.oauth2AccessToken == nil)
    #expect(options.authTokenProvider == nil)
    #expect(options.responseSizeLimit == 0)
    #expect(options.effectiveResponseSizeLimit == 4 * 1024 * 1024)
    #expect(options.transportType == .tls)
    #expect(options.userAgentPrefix == nil)
    #expect(options.userAgentSuffix == nil)
    #expect(options.channelPoolDomain == nil)
    #expect(options.channelId == 0)
  }

  @Test("negative and NaN durations clamp to 0 (no deadline)", arguments: [-1.0, -0.001, .nan])
  func timeoutClamps(value: Double) {
    var options = GRPCCallOptions()
    options.timeout = value
    #expect(options.timeout == 0)
  }

  @Test("a negative response size limit clamps to 0, the 4 MiB default")
  func sizeLimitClamps() {
    var options = GRPCCallOptions()
    options.responseSizeLimit = -5
    #expect(options.responseSizeLimit == 0)
    #expect(options.effectiveResponseSizeLimit == GRPCCallOptions.defaultResponseSizeLimit)
    options.responseSizeLimit = 100
    #expect(options.effectiveResponseSizeLimit == 100)
  }

  @Test("options are values: a copy edited does not change the original")
  func isolation() {
    var first = GRPCCallOptions()
    first.initialMetadata.addString("a", forKey: "k")
    var second = first
    second.initialMetadata.addString("b", forKey: "k")
    second.timeout = 3
    #expect(Array(first.initialMetadata[stringValues: "k"]) == ["a"])
    #expect(first.timeout == 0)
  }

  @Test("the user agent puts prefix and suffix around the library's token")
  func userAgent() {
    var options = GRPCCallOptions()
    #expect(UserAgent.value(for: options) == "grpc-calls/\(GRPCCallsVersion.string)")
    options.userAgentPrefix = "app/1.0"
    options.userAgentSuffix = "(linux)"
    #expect(
      UserAgent.value(for: options) == "app/1.0 grpc-calls/\(GRPCCallsVersion.string) (linux)"
    )
  }
}

@Suite("Request options")
struct GRPCRequestOptionsTests {
  @Test("a well-formed request")
  func valid() throws {
    let request = try GRPCRequestOptions(host: "example.com", path: "/pkg.Service/Method")
    #expect(request.safety == .default)
  }

  @Test(
    "an empty host or a malformed path throws INVALID_ARGUMENT with the reason",
    arguments: [
      ("", "/a.B/C", "host must not be empty"),
      ("h", "", "path must not be empty"),
      ("h", "a.B/C", "is not of the form /service/method"),
      ("h", "/a.B", "is not of the form /service/method"),
      ("h", "/a.B/C/D", "is not of the form /service/method"),
      ("h", "//C", "is not of the form /service/method"),
    ]
  )
  func invalid(host: String, path: String, reason: String) {
    #expect {
      try GRPCRequestOptions(host: host, path: path)
    } throws: { error in
      guard let error = error as? GRPCError else { return false }
      return error.code == .invalidArgument && error.message.contains(reason)
    }
  }
}
