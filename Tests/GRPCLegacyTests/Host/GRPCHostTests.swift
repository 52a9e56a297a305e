import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@testable import GRPCLegacy

/// Serialized: hosts are process-wide, and one test resets them all.
@Suite("GRPCHost per-host settings", .serialized)
struct GRPCHostTests {
  @Test("hosts are normalized: a name and the name with :443 are one host")
  func normalization() throws {
    let plain = try GRPCHost.host(withAddress: "normalize.example.test")
    let explicit = try GRPCHost.host(withAddress: "normalize.example.test:443")
    #expect(plain === explicit)
    #expect(plain.address == "normalize.example.test:443")
    #expect(try GRPCHost.host(withAddress: "[::1]:50051").address == "[::1]:50051")
  }

  @Test("settings become call options, milliseconds as seconds")
  func mapping() throws {
    let host = "mapping.example.test"
    try GRPCHost.setUserAgentPrefix("Foo", forHost: host)
    try GRPCHost.setResponseSizeLimit(5_000_000, forHost: host)
    try GRPCHost.setDefaultCompressMethod(.gzip, forHost: host)
    try GRPCHost.setKeepalive(interval: 1500, timeout: 250, forHost: host)
    try GRPCHost.enableRetry(false, forHost: host)
    try GRPCHost.setMinConnectTimeout(300, initialBackoff: 100, maxBackoff: 2000, forHost: host)
    try GRPCHost.useInsecureConnections(forHost: host)
    try GRPCHost.setLogContext(["component": "legacy"], forHost: host)
    let options = try GRPCHost.callOptions(forHost: host)
    #expect(options.userAgentPrefix == "Foo")
    #expect(options.responseSizeLimit == 5_000_000)
    #expect(options.compressionAlgorithm == .gzip)
    #expect(options.keepaliveInterval == 1.5 && options.keepaliveTimeout == 0.25)
    #expect(options.enableRetry == false)
    #expect(
      options.connectMinTimeout == 0.3 && options.connectInitialBackoff == 0.1
        && options.connectMaxBackoff == 2
    )
    #expect(options.transportType == .insecure)
    #expect(options.logContext == ["component": "legacy"])
  }

  @Test("one host's settings never touch another's; a host without settings gets the defaults")
  func isolation() throws {
    try GRPCHost.setUserAgentPrefix("Only", forHost: "isolated-a.example.test")
    let other = try GRPCHost.callOptions(forHost: "isolated-b.example.test")
    #expect(other.userAgentPrefix == nil)
    #expect(other.transportType == .tls)
    #expect(
      try GRPCHost.host(withAddress: "isolated-b.example.test").settings == GRPCHostSettings()
    )
  }

  @Test(
    "bad hosts and values throw INVALID_ARGUMENT saying what is wrong",
    arguments: [
      ("", "The host is empty: pass a host name or address, e.g. \"example.com:443\""),
      (
        "http://x",
        "Invalid host 'http://x': 'http' is not a gRPC target scheme: use host:port, dns:, ipv4:, ipv6: or unix:"
      ),
    ]
  )
  func badHosts(host: String, message: String) {
    #expect {
      try GRPCHost.setUserAgentPrefix("x", forHost: host)
    } throws: { error in
      (error as? GRPCError)?.code == .invalidArgument && (error as? GRPCError)?.message == message
    }
  }

  @Test("bad values throw INVALID_ARGUMENT naming the value")
  func badValues() {
    let host = "bad-values.example.test"
    #expect(throws: GRPCError.self) { try GRPCHost.setResponseSizeLimit(-1, forHost: host) }
    #expect(throws: GRPCError.self) {
      try GRPCHost.setKeepalive(interval: -5, timeout: 0, forHost: host)
    }
    #expect(throws: GRPCError.self) {
      try GRPCHost.setMinConnectTimeout(0, initialBackoff: -1, maxBackoff: 0, forHost: host)
    }
    #expect {
      try GRPCHost.setTLSPEMRootCerts(nil, withPrivateKey: "key", forHost: host)
    } throws: { error in
      (error as? GRPCError)?.message
        == "Invalid host setting: a client private key and certificate chain go together: give both or neither"
    }
    #expect(throws: GRPCError.self) {
      try GRPCHost.useTestCertsPath("/no/such/file.pem", testName: "x", forHost: host)
    }
  }

  @Test("resetting forgets every host's settings")
  func reset() throws {
    // A table of the test's own: `resetHostSettings()` resets the process-wide one, which
    // the suites running beside this one rely on.
    let table = GRPCHost.Table()
    table.host("reset.example.test:443").updateSettings { $0.userAgentPrefix = "Gone" }
    table.host("other.example.test:443").updateSettings { $0.userAgentPrefix = "Gone too" }
    table.reset()
    #expect(table.host("reset.example.test:443").settings.userAgentPrefix == nil)
    #expect(table.host("other.example.test:443").settings.userAgentPrefix == nil)
  }

  @Test(
    "a host's user agent prefix and insecure setting reach the wire, and never another host's calls"
  )
  func reachesTheWire() async throws {
    try await withTestServer { server in
      try await withTestServer { other in
        let host = server.server.target
        try GRPCHost.setUserAgentPrefix("Foo", forHost: host)
        try GRPCHost.useInsecureConnections(forHost: host)
        // The other host is only made plaintext; its calls must not carry the first's prefix.
        try GRPCHost.useInsecureConnections(forHost: other.server.target)
        for (target, expectsFoo) in [(server, true), (other, false)] {
          let close = try await Self.emptyCall(to: target)
          #expect(close?.error == nil, "\(String(describing: close?.error))")
          let agent =
            target.recorder.rpcs.last.map { Array($0.metadata[stringValues: "user-agent"]) } ?? []
          #expect(agent.first?.hasPrefix("Foo ") == expectsFoo, "\(agent)")
          #expect(agent.first?.contains("grpc-calls/") == true, "\(agent)")
        }
      }
    }
  }

  /// An EmptyCall to `server` with the options its host's settings give.
  private static func emptyCall(to server: TestServer) async throws -> CallRecorder.Close? {
    let host = server.server.target
    let recorder = CallRecorder()
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(
        host: host,
        path: "/grpc.testing.TestService/EmptyCall"
      ),
      responseHandler: recorder,
      callOptions: try GRPCHost.callOptions(forHost: host),
      channelPool: server.pool
    )
    call.start()
    call.writeData(Data())  // an empty grpc.testing.Empty
    call.finish()
    return await recorder.waitForClose()
  }
}
