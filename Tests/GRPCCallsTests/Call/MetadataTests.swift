import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@Suite("Metadata and auth")
struct MetadataTests {
  @Test("initial metadata (string) and a -bin trailer round-trip through the echo")
  func echo() async throws {
    try await withTestServer { server in
      var options = server.options
      options.initialMetadata.addString("hello", forKey: "x-grpc-test-echo-initial")
      options.initialMetadata.addBinary([0, 1, 254, 255], forKey: "x-grpc-test-echo-trailing-bin")
      let (_, recorder, close) = try await server.complete(
        "EmptyCall",
        Grpc_Testing_Empty(),
        options: options
      )
      #expect(close.error == nil)
      let headers = try #require(recorder.initialMetadata)
      #expect(Array(headers[stringValues: "x-grpc-test-echo-initial"]) == ["hello"])
      let trailers = try #require(close.trailers)
      #expect(Array(trailers[binaryValues: "x-grpc-test-echo-trailing-bin"]) == [[0, 1, 254, 255]])
    }
  }

  @Test("a failed call's GRPCError holds the headers and trailers the callbacks delivered")
  func errorCarriesMetadata() async throws {
    try await withTestServer { server in
      var options = server.options
      options.initialMetadata.addString("in-headers", forKey: "x-grpc-test-echo-initial")
      options.initialMetadata.addBinary([9, 9], forKey: "x-grpc-test-echo-trailing-bin")
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseStatus.code = 5
      request.responseStatus.message = "not here"
      let (_, recorder, close) = try await server.complete(
        "FullDuplexCall",
        request,
        options: options
      )
      let error = try #require(close.error)
      #expect(error.code == .notFound)
      #expect(error.message == "not here")
      let headers = try #require(recorder.initialMetadata)
      #expect(Array(headers[stringValues: "x-grpc-test-echo-initial"]) == ["in-headers"])
      #expect(error.headers == headers)
      #expect(Array(error.trailers[binaryValues: "x-grpc-test-echo-trailing-bin"]) == [[9, 9]])
      #expect(close.trailers == error.trailers)
    }
  }

  @Test("the server receives the user agent with the library's token")
  func userAgent() async throws {
    try await withTestServer { server in
      var options = server.options
      options.userAgentPrefix = "test-prefix/2"
      options.userAgentSuffix = "suffix"
      options.initialMetadata.addString("1", forKey: "x-grpc-test-echo-useragent")
      let (_, recorder, close) = try await server.complete(
        "EmptyCall",
        Grpc_Testing_Empty(),
        options: options
      )
      #expect(close.error == nil)
      let echoed = recorder.initialMetadata?[stringValues: "x-grpc-test-echo-useragent"].first {
        _ in true
      }
      #expect(echoed == "test-prefix/2 grpc-calls/\(GRPCCallsVersion.string) suffix")
    }
  }

  @Test("oauth2AccessToken reaches the server as a bearer token, replacing one in the metadata")
  func oauth2Token() async throws {
    try await withTestServer { server in
      var options = server.options
      options.initialMetadata.addString("Basic old", forKey: "Authorization")
      options.oauth2AccessToken = "token-123"
      try await Self.emptyCall(on: server, options: options)
      let received = try #require(server.recorder.rpcs.last)
      #expect(Array(received.metadata[stringValues: "authorization"]) == ["Bearer token-123"])
    }
  }

  @Test("authTokenProvider is asked exactly once and its token replaces the metadata's")
  func tokenProvider() async throws {
    try await withTestServer { server in
      let provider = CountingTokenProvider(token: "fresh")
      var options = server.options
      options.initialMetadata.addString("Bearer stale", forKey: "authorization")
      options.authTokenProvider = provider
      try await Self.emptyCall(on: server, options: options)
      #expect(provider.calls == 1)
      let received = try #require(server.recorder.rpcs.last)
      #expect(Array(received.metadata[stringValues: "authorization"]) == ["Bearer fresh"])
    }
  }

  @Test("a nil token sends the call without authorization")
  func nilToken() async throws {
    try await withTestServer { server in
      var options = server.options
      options.authTokenProvider = CountingTokenProvider(token: nil)
      try await Self.emptyCall(on: server, options: options)
      let received = try #require(server.recorder.rpcs.last)
      #expect(Array(received.metadata[stringValues: "authorization"]).isEmpty)
    }
  }

  @Test("a token provider that throws fails the call with UNAUTHENTICATED, sending nothing")
  func failingProvider() async throws {
    try await withTestServer { server in
      var options = server.options
      options.authTokenProvider = FailingTokenProvider()
      let (call, recorder) = try server.call("EmptyCall", options: options)
      call.start()
      call.finish()
      let error = try #require(await recorder.waitForClose()?.error)
      #expect(error.code == .unauthenticated)
      #expect(error.cause is FailingTokenProvider.Failure)
      #expect(server.recorder.rpcs.isEmpty)
    }
  }

  /// Metadata gRPC cannot send, and what the error says of each. (A binary value under a key
  /// without `-bin` cannot be made in a debug build: GRPCCore asserts; release builds get
  /// INVALID_ARGUMENT from the same check.)
  static let unsendable: [(String, Metadata.Value, String)] = [
    ("has space", .string("v"), "Invalid request metadata key 'has space'"),
    ("ключ", .string("v"), "Invalid request metadata key 'ключ'"),
    ("", .string("v"), "Invalid request metadata key '': a key must not be empty"),
    (
      "x-text", .string("caf\u{e9}"),
      "Invalid value of request metadata key 'x-text': text values are printable ASCII"
    ),
  ]

  @Test(
    "metadata gRPC cannot send fails the call with INVALID_ARGUMENT naming it, sending nothing",
    arguments: Self.unsendable
  )
  func badMetadata(key: String, value: Metadata.Value, expected: String) async throws {
    try await withTestServer { server in
      var options = server.options
      options.initialMetadata.addString("fine", forKey: "x-good")
      options.initialMetadata.add(contentsOf: [(key: key, value: value)])
      let (_, _, close) = try await server.complete(
        "EmptyCall",
        Grpc_Testing_Empty(),
        options: options
      )
      let error = try #require(close.error)
      #expect(error.code == .invalidArgument)
      #expect(error.message.hasPrefix(expected), "\(error.message)")
      #expect(server.recorder.rpcs.isEmpty)
    }
  }

  @Test("upper-case letters in keys are lowered, as gRPC Objective-C did: the echo comes back")
  func upperCaseKeysLowered() async throws {
    try await withTestServer { server in
      var options = server.options
      options.initialMetadata.addString("shouted", forKey: "X-GRPC-Test-Echo-Initial")
      let (_, recorder, close) = try await server.complete(
        "EmptyCall",
        Grpc_Testing_Empty(),
        options: options
      )
      #expect(close.error == nil)
      #expect(
        recorder.initialMetadata.map { Array($0[stringValues: "x-grpc-test-echo-initial"]) } == [
          "shouted"
        ]
      )
    }
  }

  static func emptyCall(on server: TestServer, options: GRPCCallOptions) async throws {
    let (_, _, close) = try await server.complete(
      "EmptyCall",
      Grpc_Testing_Empty(),
      options: options
    )
    #expect(close.error == nil)
  }
}

final class CountingTokenProvider: GRPCAuthorizationProvider {
  private let count = LockedValue(0)
  private let token: String?

  init(token: String?) {
    self.token = token
  }

  var calls: Int { self.count.withLock { $0 } }

  func accessToken() async throws -> String? {
    self.count.withLock { $0 += 1 }
    return self.token
  }
}

struct FailingTokenProvider: GRPCAuthorizationProvider {
  struct Failure: Error {}

  func accessToken() async throws -> String? {
    throw Failure()
  }
}
