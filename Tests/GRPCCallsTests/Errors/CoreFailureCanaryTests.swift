import Foundation
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@testable import GRPCCalls

/// The texts of grpc-swift-nio-transport that ``CoreFailure`` matches, checked against the
/// dependency itself: a dependency update that rewords one fails here, loudly, instead of
/// silently turning off what the library does with it (transparent retry, the reset's code,
/// the sizes of an oversize error, the advice to a plaintext client of a TLS server).
@Suite("Core failure texts (canaries for dependency updates)")
struct CoreFailureCanaryTests {
  typealias Text = CoreFailure.Text

  // MARK: The dependency's source, at the version this build resolved

  /// Each text as the transport's source spells it (an interpolated part as written there).
  static let sourceForms: [(text: String, source: String)] = [
    (Text.streamClosed, "\"\(Text.streamClosed)."),
    (Text.streamReset, "\(Text.streamClosed): \(Text.streamReset)\\(errorCode.shortDescription))."),
    (Text.payloadTooLarge, Text.payloadTooLarge),
    (Text.tooLargeToDecompress, "\"\(Text.tooLargeToDecompress)\""),
    (Text.notHTTP200, "\"\(Text.notHTTP200)\\(httpStatusCode))."),
    (Text.missingContentType, "\"Missing \\(GRPCHTTP2Keys.contentType.rawValue) header\""),
    (Text.connectionClosing, "\"\(Text.connectionClosing)\""),
    (Text.connectionUnavailable, "\"\(Text.connectionUnavailable)\""),
    (Text.noSubchannel, "\"\(Text.noSubchannel)\""),
    (Text.closedBeforePreface, Text.closedBeforePreface),
  ]

  /// The forms in which the transport fills in what the parser reads.
  static let formats = [
    // A reset's code: "0x7: refused stream".
    "let prefix = \"0x\" + String(self.networkCode, radix: 16) + \": \"",
    "suffix = \"refused stream\"",
    // An oversize message's sizes.
    "(max: \\(self.maxPayloadSize), actual: \\(messageLength))",
    // The content-type key the missing-header message names.
    "case contentType = \"content-type\"",
  ]

  @Test("every text CoreFailure matches is still in grpc-swift-nio-transport's source")
  func textsInTheTransportSource() throws {
    let source = try Self.transportSource()
    for form in Self.sourceForms {
      #expect(
        source.contains(form.source),
        "grpc-swift-nio-transport no longer says '\(form.text)' as \(form.source): update CoreFailure.Text"
      )
    }
    for format in Self.formats {
      #expect(
        source.contains(format),
        "grpc-swift-nio-transport no longer has \(format): update CoreFailure"
      )
    }
  }

  /// Every Swift file of grpc-swift-nio-transport's checkout in this package's build folder
  /// (`.build`, or another `.build-*` scratch path).
  static func transportSource() throws -> String {
    var root = URL(fileURLWithPath: #filePath)
    while !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path)
    {
      guard root.pathComponents.count > 1 else {
        throw TestSupportFailure(description: "no Package.swift above \(#filePath)")
      }
      root.deleteLastPathComponent()
    }
    let scratch = try FileManager.default.contentsOfDirectory(atPath: root.path).filter {
      $0.hasPrefix(".build")
    }
    let checkouts = scratch.map {
      root.appendingPathComponent("\($0)/checkouts/grpc-swift-nio-transport/Sources")
    }
    guard let sources = checkouts.first(where: { FileManager.default.fileExists(atPath: $0.path) })
    else {
      throw TestSupportFailure(
        description: "no checkout of grpc-swift-nio-transport in \(scratch) under \(root.path)"
      )
    }
    var text = ""
    let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
    while let file = files?.nextObject() as? URL {
      guard file.pathExtension == "swift" else { continue }
      text += try String(contentsOf: file, encoding: .utf8)
    }
    return text
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
      options.timeout = 60
      let error = try #require(try await TLSTests.unary(server, options).error)
      #expect(CoreFailure.all(in: error).contains(.closedBeforePreface), "\(error)")
    }
  }
}
