import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// Bad input from the user or the peer, one case at a time: each is a `GRPCError` with a code
/// and a message that names the problem.
@Suite("Bad input")
struct BadInputTests {
  @Test(
    "a path without a leading slash is refused when the request options are made, word for word"
  )
  func pathWithoutSlash() {
    let error = #expect(throws: GRPCError.self) {
      try GRPCRequestOptions(host: "127.0.0.1:1", path: "grpc.testing.TestService/EmptyCall")
    }
    #expect(error?.code == .invalidArgument)
    #expect(
      error?.message
        == "GRPCRequestOptions: path 'grpc.testing.TestService/EmptyCall' is not of the form /service/method"
    )
  }

  static let badHosts: [(host: String, message: String)] = [
    (
      "127.0.0.1:70000",
      "Invalid host '127.0.0.1:70000': port 70000 is out of range: ports are 0 to 65535"
    ),
    ("127.0.0.1:-1", "Invalid host '127.0.0.1:-1': port -1 is out of range: ports are 0 to 65535"),
    ("127.0.0.1:", "Invalid host '127.0.0.1:': '' is not a port number"),
    ("[::1", "Invalid host '[::1': unterminated '['"),
    (
      "http://127.0.0.1:50051",
      "Invalid host 'http://127.0.0.1:50051': 'http' is not a gRPC target scheme: use host:port, dns:, ipv4:, ipv6: or unix:"
    ),
    ("dns:", "Invalid host 'dns:': the host name is empty"),
    (" ", "Invalid host ' ': the host name contains a space or a control character"),
    ("a\tb:1", "Invalid host 'a\tb:1': the host name contains a space or a control character"),
    (
      "example.com/api:443",
      "Invalid host 'example.com/api:443': the host name contains '/': write name[:port], [IPv6]:port, or a list after ipv4: or ipv6:"
    ),
    (
      "ipv4:localhost:50051",
      "Invalid host 'ipv4:localhost:50051': 'localhost' is not an IPv4 address: ipv4: takes addresses such as 10.0.0.1:50051 (use dns: for names)"
    ),
  ]

  @Test(
    "malformed hosts and ports out of range fail the call with INVALID_ARGUMENT naming the host, word for word",
    arguments: Self.badHosts
  )
  func badHost(host: String, message: String) async throws {
    let recorder = CallRecorder()
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(
        host: host,
        path: "/grpc.testing.TestService/EmptyCall"
      ),
      responseHandler: recorder,
      channelPool: GRPCChannelPool()
    )
    call.start()
    call.finish()
    let error = try #require(await recorder.waitForClose()?.error)
    #expect(error.code == .invalidArgument)
    #expect(error.message == message, "\(host): \(error.message)")
  }

  @Test(
    "an invalid PEM root fails the call with INVALID_ARGUMENT naming pemRootCertificates, word for word"
  )
  func invalidRootPEM() async throws {
    let certificates = try TLSTests.certificates.get()
    try await withTestServer(tls: certificates.serverTLS()) { server in
      var options = TLSTests.options(
        roots: "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"
      )
      options.timeout = CloseWait.seconds
      let close = try await server.complete("EmptyCall", Grpc_Testing_Empty(), options: options)
        .close
      #expect(close.error?.code == .invalidArgument, "\(String(describing: close.error))")
      #expect(
        close.error?.message == "pemRootCertificates holds no valid PEM certificate: check the text"
      )
    }
  }

  @Test(
    "a client key that does not match its certificate fails the call with INVALID_ARGUMENT saying so, word for word"
  )
  func mismatchedClientKey() async throws {
    let certificates = try TLSTests.certificates.get()
    let other = try TestCertificates()
    try await withTestServer(tls: certificates.serverTLS(mutual: true)) { server in
      var options = TLSTests.options(roots: certificates.caPEM)
      options.timeout = CloseWait.seconds
      options.pemCertificateChain = certificates.client.certificatePEM
      options.pemPrivateKey = other.client.privateKeyPEM
      let close = try await server.complete("EmptyCall", Grpc_Testing_Empty(), options: options)
        .close
      #expect(close.error?.code == .invalidArgument, "\(String(describing: close.error))")
      #expect(
        close.error?.message
          == "pemPrivateKey does not match the certificate in pemCertificateChain: give the key of that certificate"
      )
      // A key that is not a key at all is named as such.
      options.pemPrivateKey = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
      let garbled = try await server.complete("EmptyCall", Grpc_Testing_Empty(), options: options)
        .close
      #expect(
        garbled.error?.message
          == "pemPrivateKey is not a valid PEM private key (PKCS#8, RSA or EC): check the text"
      )
    }
  }

  @Test(
    "headers over the server's limit: the reset's error says how large the metadata was, word for word"
  )
  func headersOverLimit() async throws {
    try await withTestServer { server in
      var options = server.options
      options.timeout = CloseWait.seconds
      options.initialMetadata.addString(String(repeating: "x", count: 64 * 1024), forKey: "x-big")
      let close = try await server.complete("EmptyCall", Grpc_Testing_Empty(), options: options)
        .close
      #expect(close.error?.code == .unavailable, "\(String(describing: close.error))")
      #expect(
        close.error?.message
          == "The connection failed before the call completed: UnableToSerializeFrame. The request metadata is 64 KiB: servers commonly refuse header lists over 8 to 16 KiB"
      )
      #expect(server.recorder.rpcs.isEmpty)
    }
  }

  @Test(
    "a request over the server's size limit, which the server resets with CANCEL: CANCELLED, saying the server reset the stream"
  )
  func requestOverServerLimit() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_SimpleRequest()
      request.payload.body = Data(count: InteropServer.maxMessageSize + 1)
      var options = server.options
      options.timeout = CloseWait.seconds
      let close = try await server.complete("UnaryCall", request, options: options).close
      // gRPC's HTTP/2 error table maps CANCEL to CANCELLED (the core reports UNAVAILABLE, which
      // invites a retry of a request that can never fit).
      #expect(close.error?.code == .cancelled, "\(String(describing: close.error))")
      #expect(
        close.error?.message
          == "The server reset the stream (RST_STREAM CANCEL, 0x8) before sending a status"
      )
    }
  }
}
