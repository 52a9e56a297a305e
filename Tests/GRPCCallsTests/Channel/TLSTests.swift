import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@Suite("TLS and mutual TLS over loopback, with certificates made at test time")
struct TLSTests {
  static let certificates = Result { try TestCertificates() }

  /// TLS options trusting `roots`, for the test server at 127.0.0.1.
  static func options(
    roots: String?,
    override: String? = TestCertificates.serverName
  ) -> GRPCCallOptions {
    var options = GRPCCallOptions()
    options.transportType = .tls
    options.pemRootCertificates = roots
    options.hostNameOverride = override
    // A handshake with certificates made at test time can take more than the default 10 s on a
    // busy machine, which these tests do not measure.
    options.connectMinTimeout = 60
    return options
  }

  static func unary(
    _ server: TestServer,
    _ options: GRPCCallOptions
  ) async throws -> CallRecorder.Close {
    try await server.complete("UnaryCall", try unaryRequest(responseBytes: 32), options: options)
      .close
  }

  @Test(
    "a custom root and hostNameOverride: the call succeeds; the server sees the override as :authority"
  )
  func customRootWithOverride() async throws {
    let certificates = try Self.certificates.get()
    try await withTestServer(tls: certificates.serverTLS()) { server in
      let close = try await Self.unary(server, Self.options(roots: certificates.caPEM))
      #expect(close.error == nil, "\(String(describing: close.error))")
      let rpc = try #require(server.recorder.rpcs.last)
      #expect(Array(rpc.metadata[stringValues: ":authority"]) == [TestCertificates.serverName])
    }
  }

  @Test(
    "a certificate that does not name the host: the message lists its names and the fix, word for word"
  )
  func certificateNamesAnotherHost() async throws {
    let certificates = try Self.certificates.get()
    try await withTestServer(tls: certificates.serverTLS()) { server in
      let error = try #require(
        try await Self.unary(server, Self.options(roots: certificates.caPEM, override: nil)).error
      )
      #expect(error.code == .unavailable)
      #expect(
        error.message
          == "The server's certificate names server.grpc-calls.test; connected to 127.0.0.1: "
          + "set hostNameOverride to a name the certificate holds"
      )
      // A wrong override is named as what was checked.
      let wrong = Self.options(roots: certificates.caPEM, override: "other.grpc-calls.test")
      let named = try #require(try await Self.unary(server, wrong).error)
      #expect(
        named.message
          == "The server's certificate names server.grpc-calls.test; connected to other.grpc-calls.test: "
          + "set hostNameOverride to a name the certificate holds"
      )
    }
  }

  @Test(
    "a certificate that also holds the server's address is still checked for the name given: another name fails, and the server sees no call"
  )
  func addressDoesNotStandInForName() async throws {
    let certificates = try Self.certificates.get()
    try await withTestServer(tls: certificates.serverTLS(withAddress: true)) { server in
      // The name the certificate holds, and the address alone, both verify.
      let named = try await Self.unary(server, Self.options(roots: certificates.caPEM))
      #expect(named.error == nil, "\(String(describing: named.error))")
      let address = try await Self.unary(
        server,
        Self.options(roots: certificates.caPEM, override: nil)
      )
      #expect(address.error == nil, "\(String(describing: address.error))")
      let before = server.recorder.rpcs.count

      // Another name fails, although 127.0.0.1 is in the certificate and is the address.
      let wrong = Self.options(roots: certificates.caPEM, override: "wrong.example.com")
      let error = try #require(try await Self.unary(server, wrong).error)
      #expect(error.code == .unavailable)
      #expect(
        error.message
          == "The server's certificate names server.grpc-calls.test, 127.0.0.1; connected to wrong.example.com: "
          + "set hostNameOverride to a name the certificate holds"
      )
      #expect(
        server.recorder.rpcs.count == before,
        "the request reached a server whose name was not verified"
      )
    }
  }

  @Test("an unrelated root: BoringSSL's reason, without source paths or repeats, word for word")
  func unrelatedRoot() async throws {
    let certificates = try Self.certificates.get()
    try await withTestServer(tls: certificates.serverTLS()) { server in
      let error = try #require(
        try await Self.unary(server, Self.options(roots: certificates.otherCAPEM)).error
      )
      #expect(error.code == .unavailable)
      #expect(
        error.message == "The TLS handshake with the server failed: CERTIFICATE_VERIFY_FAILED"
      )
      #expect(error.cause != nil, "the full error stays in cause")
    }
  }

  @Test("TLS (the default) to a plaintext server: the message says to use .insecure, word for word")
  func tlsToPlaintext() async throws {
    try await withTestServer { server in
      var options = GRPCCallOptions()
      // Only a guard against a hang: the handshake fails at once, but may wait for a busy loop.
      options.timeout = CloseWait.seconds
      let error = try #require(try await Self.unary(server, options).error)
      #expect(error.code == .unavailable, "\(error)")
      #expect(
        error.message
          == "The server does not speak TLS: set transportType to .insecure to call a plaintext server"
      )
    }
  }

  @Test("mutual TLS: a client certificate is accepted; without one the server refuses the call")
  func mutualTLS() async throws {
    let certificates = try Self.certificates.get()
    try await withTestServer(tls: certificates.serverTLS(mutual: true)) { server in
      var options = Self.options(roots: certificates.caPEM)
      options.pemCertificateChain = certificates.client.certificatePEM
      options.pemPrivateKey = certificates.client.privateKeyPEM
      let close = try await Self.unary(server, options)
      #expect(close.error == nil, "\(String(describing: close.error))")

      // A key without a chain is not an identity: no certificate is sent.
      var withoutChain = Self.options(roots: certificates.caPEM)
      withoutChain.pemPrivateKey = certificates.client.privateKeyPEM
      let refused = try #require(try await Self.unary(server, withoutChain).error)
      #expect(refused.code == .unavailable, "\(refused)")
    }
  }

  @Test("a plaintext call to a TLS server fails with UNAVAILABLE, suggesting TLS")
  func plaintextToTLS() async throws {
    let certificates = try Self.certificates.get()
    try await withTestServer(tls: certificates.serverTLS()) { server in
      var options = GRPCCallOptions()
      options.transportType = .insecure
      options.timeout = CloseWait.seconds  // generous: the answer, not the deadline, must end it
      let error = try #require(try await Self.unary(server, options).error)
      #expect(error.code == .unavailable, "\(error)")
      #expect(error.message.contains("expects TLS"), "\(error.message)")
    }
  }
}
