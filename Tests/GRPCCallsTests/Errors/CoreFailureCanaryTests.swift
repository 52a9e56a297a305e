import Foundation
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import NIOSSL
import Testing

@testable import GRPCCalls

/// The texts of grpc-swift-nio-transport that ``CoreFailure`` matches, checked against the
/// dependency itself: a dependency update that rewords one fails here, loudly, instead of
/// silently turning off what the library does with it (transparent retry, the reset's code,
/// the sizes of an oversize error, the advice to a plaintext client of a TLS server or a TLS
/// client of a plaintext server).
@Suite("Core failure texts (canaries for dependency updates)")
struct CoreFailureCanaryTests {
  typealias Text = CoreFailure.Text

  // MARK: The dependency's source, at the version this build resolved

  /// Each text as the transport's source spells it (an interpolated part as written there), in
  /// every file that raises it: a text raised in two places must still be in both.
  static let sourceForms: [(file: String, source: String)] = [
    ("GRPCStreamStateMachine.swift", "\"\(Text.streamClosed)."),
    (
      "GRPCStreamStateMachine.swift",
      "\(Text.streamClosed): \(Text.streamReset)\\(errorCode.shortDescription)).",
    ),
    ("GRPCMessageDecoder.swift", Text.payloadTooLarge),
    ("Compression/Zlib.swift", "\"\(Text.tooLargeToDecompress)\""),
    ("GRPCStreamStateMachine.swift", "\"\(Text.notHTTP200)\\(httpStatusCode))."),
    (
      "GRPCStreamStateMachine.swift",
      "\"Missing \\(GRPCHTTP2Keys.contentType.rawValue) header\"",
    ),
    ("Client/Connection/Connection.swift", "\"\(Text.connectionClosing)\""),
    ("Client/Connection/LoadBalancers/Subchannel.swift", "\"\(Text.connectionClosing)\""),
    ("Client/Connection/Connection.swift", "\"\(Text.connectionUnavailable)\""),
    ("Client/WrappedChannel/WrappedChannel.swift", "\"\(Text.connectionUnavailable)\""),
    ("Client/Connection/GRPCChannel.swift", "\"\(Text.noSubchannel)\""),
    (
      "Client/Connection/Connection.swift",
      "before completing \\\n          \(Text.closedBeforePreface)"
    ),
    (
      "Client/Connection/ClientConnectionHandler.swift",
      "message: \"\(Text.keepaliveExpired)\""
    ),
  ]

  /// The forms in which the transport fills in what the parser reads.
  static let formats: [(file: String, source: String)] = [
    // A reset's code: "0x7: refused stream".
    (
      "GRPCStreamStateMachine.swift",
      "let prefix = \"0x\" + String(self.networkCode, radix: 16) + \": \""
    ),
    ("GRPCStreamStateMachine.swift", "suffix = \"refused stream\""),
    // An oversize message's sizes.
    ("GRPCMessageDecoder.swift", "(max: \\(self.maxPayloadSize), actual: \\(messageLength))"),
    // The content-type key the missing-header message names, as CoreFailure.Text spells it.
    ("GRPCStreamStateMachine.swift", "case contentType = \"content-type\""),
  ]

  @Test("every text CoreFailure matches is still in grpc-swift-nio-transport's source")
  func textsInTheTransportSource() throws {
    #expect(Text.missingContentType == "Missing content-type header")
    for form in Self.sourceForms + Self.formats {
      let source = try Self.transportSource(form.file)
      #expect(
        source.contains(form.source),
        "grpc-swift-nio-transport's \(form.file) no longer says \(form.source): update CoreFailure"
      )
    }
  }

  /// A Swift file of grpc-swift-nio-transport's `GRPCNIOTransportCore`, as checked out in the
  /// build folder of the running tests (`.build`, or another scratch path such as `.build-tsan`).
  static func transportSource(_ file: String) throws -> String {
    var scratch = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while !scratch.lastPathComponent.hasPrefix(".build") {
      guard scratch.pathComponents.count > 1 else {
        throw TestSupportFailure(
          description: "the tests (\(CommandLine.arguments[0])) do not run from a .build folder"
        )
      }
      scratch.deleteLastPathComponent()
    }
    let path = scratch.appendingPathComponent(
      "checkouts/grpc-swift-nio-transport/Sources/GRPCNIOTransportCore/\(file)"
    )
    return try String(contentsOf: path, encoding: .utf8)
  }

  // MARK: The parser, on the transport's messages

  @Test("the transport's messages are read as the failures they report")
  func parsing() {
    let cases: [(String, CoreFailure?)] = [
      (
        "Stream unexpectedly closed: received RST_STREAM frame (0x7: refused stream).",
        .streamReset(code: 7, name: "refused stream")
      ),
      (
        "Stream unexpectedly closed: received RST_STREAM frame (0xb: enhance your calm).",
        .streamReset(code: 0xB, name: "enhance your calm")
      ),
      ("Stream unexpectedly closed.", .streamClosed),
      // A reset whose code cannot be read still ended the stream without a status.
      ("Stream unexpectedly closed: received RST_STREAM frame (refused).", .streamClosed),
      ("Stream unexpectedly closed with error.", .streamClosed),
      (
        "Message has exceeded the configured maximum payload size (max: 4194304, actual: 4194305)",
        .messageTooLarge(limit: 4_194_304, actual: 4_194_305)
      ),
      ("Message is too large to decompress.", .messageTooLargeToDecompress),
      (
        "Unexpected non-200 HTTP Status Code (404 Not Found).", .notHTTP200(status: "404 Not Found")
      ),
      ("Missing content-type header", .notGRPCContentType),
      ("subchannel isn't ready", .connectionNotReady(.closing)),
      ("subchannel is unavailable", .connectionNotReady(.unavailable)),
      ("Channel isn't ready, no subchannel available.", .connectionNotReady(.noSubchannel)),
      (
        "The server accepted the TCP connection but closed the connection before completing the HTTP/2 connection preface.",
        .closedBeforePreface
      ),
      ("The server is shutting down", nil),
      ("subchannel isn't ready yet", nil),
    ]
    for (message, expected) in cases {
      #expect(CoreFailure(message: message) == expected, "\(message)")
    }
  }

  @Test("a failure wrapped in another is found among its causes")
  func wrapped() {
    let inner = RPCError(code: .resourceExhausted, message: "Message is too large to decompress.")
    let outer = RPCError(
      code: .internalError,
      message: "Stream unexpectedly closed with error.",
      cause: inner
    )
    let error = GRPCError(code: .internalError, message: "The call failed", cause: outer)
    #expect(CoreFailure.all(in: error) == [.streamClosed, .messageTooLargeToDecompress])
  }

  // MARK: The transport's real failures

  @Test("a stream the server resets reports its code", arguments: RPCPath.allCases)
  func reset(path: RPCPath) async throws {
    let peer = try await NotGRPCServer.start(answering: .refuseThenAnswer(count: 1_000))
    let (close, _) = try await peer.emptyCall(path: path)
    await peer.stop()
    let error = try #require(close.error)
    #expect(
      error.code == .unavailable && error.message.hasPrefix(StreamReset.messagePrefix),
      "\(error)"
    )
    #expect(
      CoreFailure.all(in: error).contains(.streamReset(code: 7, name: "refused stream")),
      "\(error)"
    )
  }

  @Test(
    "an HTTP status other than 200, and a content type other than gRPC's",
    arguments: RPCPath.allCases
  )
  func notGRPC(path: RPCPath) async throws {
    let notFound = try await NotGRPCServer.start(
      answering: .http2(status: 404, contentType: "text/html", body: "no")
    )
    let (status, _) = try await notFound.emptyCall(path: path)
    await notFound.stop()
    let statusError = try #require(status.error)
    let failures = CoreFailure.all(in: statusError)
    #expect(
      failures.contains {
        if case .notHTTP200(let code) = $0 { code.hasPrefix("404") } else { false }
      },
      "\(statusError)"
    )

    let html = try await NotGRPCServer.start(
      answering: .http2(status: 200, contentType: "text/html", body: "<p>")
    )
    let (type, _) = try await html.emptyCall(path: path)
    await html.stop()
    let typeError = try #require(type.error)
    #expect(CoreFailure.all(in: typeError).contains(.notGRPCContentType), "\(typeError)")
  }

  @Test("a response over the size limit reports both sizes")
  func oversize() async throws {
    try await withTestServer(compression: false) { server in
      var options = server.options
      options.responseSizeLimit = 1_000
      let request = try unaryRequest(responseBytes: 2_000)
      let error = try #require(
        try await server.complete("UnaryCall", request, options: options).close.error
      )
      let sizes = CoreFailure.all(in: error).contains {
        if case .messageTooLarge(1_000, let actual) = $0 { actual >= 2_000 } else { false }
      }
      #expect(sizes, "\(error) \(CoreFailure.all(in: error))")
    }
  }

  @Test("a plaintext client of a TLS server: the connection closed before the HTTP/2 preface")
  func plaintextToTLS() async throws {
    let certificates = try TLSTests.certificates.get()
    try await withTestServer(tls: certificates.serverTLS()) { server in
      var options = GRPCCallOptions()
      options.transportType = .insecure
      options.timeout = CloseWait.seconds
      let error = try #require(try await TLSTests.unary(server, options).error)
      #expect(CoreFailure.all(in: error).contains(.closedBeforePreface), "\(error)")
    }
  }

  @Test("a TLS client of a plaintext server: BoringSSL's reason is the one CoreFailure reads")
  func tlsToPlaintext() async throws {
    try await withTestServer { server in
      var options = GRPCCallOptions()
      options.timeout = CloseWait.seconds
      let error = try #require(try await TLSTests.unary(server, options).error)
      let errors = try #require(Self.boringSSLErrors(in: error), "no TLS error in \(error)")
      let reasons = CoreFailure.tlsReasons(errors)
      #expect(
        CoreFailure.plaintextServer(reasons),
        "BoringSSL now says \(reasons) (\(errors)): update CoreFailure.Text.notTLSRecord"
      )
    }
  }

  /// The BoringSSL errors of a failed handshake among `error`'s causes.
  private static func boringSSLErrors(in error: GRPCError) -> [BoringSSLInternalError]? {
    var cause = error.cause
    for _ in 0 ..< 8 {
      switch cause {
      case NIOSSLError.handshakeFailed(.sslError(let errors))?: return errors
      case let wrapped as RPCError: cause = wrapped.cause
      case let wrapped as GRPCError: cause = wrapped.cause
      default: return nil
      }
    }
    return nil
  }
}
